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
 * The identifier of a `Company` reference: its `lookupCode`, which the company subgraph gives as
 * whatever it knows without a purchase (the VAT number, else the tax code, else the Openapi id);
 * the service takes any of them. Null for a value of none of these shapes (no call). A value of the
 * right shape with a wrong checksum is refused (`BAD_USER_INPUT`).
 */
export function companyScoreIdentifier(ref: { lookupCode?: string | null }): string | null {
  const code = (ref.lookupCode ?? '').trim();
  const shape = italianCodeShape(code);
  if (shape === 'vat') return vatNumber(compactVat(code), 'vatCode');
  if (shape !== null) return fiscalCode(code, 'taxCode');
  if (/^[0-9a-f]{24}$/i.test(code)) return openapiId(code, 'id', 'an Openapi company id');
  return null;
}
