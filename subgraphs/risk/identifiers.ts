/**
 * Which company a credit score is asked for: the service takes a VAT number, a tax code or an
 * Openapi company id in the same path segment (`/IT-creditscore-{start,advanced,top}/{vatCode_taxCode_or_id}`). The
 * root field takes exactly one of them, the `Company` entity gives its VAT number or, when reached
 * by its tax code only, that tax code. Every value is validated (checksums, format) with the rules
 * every area shares (`runtime/validate.ts`) before any call.
 */
import { badUserInput } from '../runtime/errors.ts';
import { compactVat, fiscalCode, italianCodeShape, openapiId, vatNumber } from '../runtime/validate.ts';

export interface ScoreArgs {
  vatCode?: string | null;
  taxCode?: string | null;
  id?: string | null;
}

const given = (v: string | null | undefined): v is string => v !== null && v !== undefined;

/** The identifier of `Query.creditScore`: exactly one of `vatCode`, `taxCode`, `id`, validated. */
export function scoreIdentifier(args: ScoreArgs): string {
  const named = (['vatCode', 'taxCode', 'id'] as const).filter((k) => given(args[k]));
  if (named.length !== 1) {
    const field = named[1] ?? 'vatCode';
    throw badUserInput(
      named.length === 0 ? 'creditScore needs one of vatCode, taxCode or id' : `creditScore takes exactly one of vatCode, taxCode or id (got ${named.join(', ')})`,
      field,
    );
  }
  if (given(args.vatCode)) return vatNumber(args.vatCode, 'vatCode');
  if (given(args.taxCode)) return fiscalCode(args.taxCode, 'taxCode');
  return openapiId(args.id, 'id', 'an Openapi company id');
}

/**
 * The identifier of a `Company` reference: its Italian VAT number, else its Italian tax code (a
 * company reached by its `taxCode` key); null when it has neither (a foreign company), so no call.
 * A value of the right shape with a wrong checksum is refused (`BAD_USER_INPUT`).
 */
export function companyScoreIdentifier(ref: { vatCode?: string | null; taxCode?: string | null }): string | null {
  const vat = ref.vatCode ?? '';
  if (italianCodeShape(vat) === 'vat') return vatNumber(compactVat(vat), 'vatCode');
  const tax = ref.taxCode ?? '';
  if (italianCodeShape(tax) !== null) return fiscalCode(tax, 'taxCode');
  return null;
}
