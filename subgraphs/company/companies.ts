/**
 * Returning a `Company` from a resolver: a *stub* holds what is known without a call (the keys it
 * was looked up by, or what the parent payload says of a manager, shareholder or subsidiary), and
 * `withFacets` buys, through the company loader, what the selection needs beyond that.
 */
import type { SubgraphContext } from '../runtime/context.ts';
import type { Facet } from './facets.ts';
import type { CompanyRef } from './loaders.ts';
import { loadCompany } from './loaders.ts';
import type { CompanyParent } from './mappers.ts';
import type { CompanyModel } from './model.ts';
import { mergeModels } from './normalize.ts';
import { openapiIdArg, taxCodeArg } from './validate.ts';

/** Identity fields a stub may know, and the facet each answers. */
const STUB_FACETS: ReadonlyArray<readonly [keyof CompanyModel, Facet]> = [
  ['vatCode', 'vatCode'],
  ['taxCode', 'taxCode'],
  ['id', 'openapiId'],
  ['companyName', 'companyName'],
];

const present = (v: unknown): boolean => v !== null && v !== undefined && v !== '';

/** A company known from `model` alone; `covered` adds the facets the data was bought with. */
export function companyStub(model: CompanyModel, covered: Iterable<Facet> = []): CompanyParent {
  const set = new Set<Facet>(covered);
  for (const [field, facet] of STUB_FACETS) if (present(model[field])) set.add(facet);
  return { vatCode: model.vatCode ?? null, taxCode: model.taxCode ?? null, id: model.id ?? null, model, covered: set };
}

export const refOf = (p: CompanyParent): CompanyRef => ({
  vatCode: p.vatCode ?? p.model.vatCode ?? null,
  taxCode: p.taxCode ?? p.model.taxCode ?? null,
  id: p.id ?? p.model.id ?? null,
});

export const hasKey = (p: CompanyParent): boolean => {
  const r = refOf(p);
  return present(r.vatCode) || present(r.taxCode) || present(r.id);
};

/** `parent` completed with the facets it lacks of `need` (bought once per company per request). */
export async function withFacets(ctx: SubgraphContext, parent: CompanyParent, need: ReadonlySet<Facet>): Promise<CompanyParent> {
  const missing = new Set<Facet>();
  for (const f of need) if (!parent.covered.has(f)) missing.add(f);
  if (missing.size === 0) return parent;
  const loaded = await loadCompany(ctx, refOf(parent), missing);
  const model = mergeModels(loaded.model, parent.model);
  return {
    vatCode: model.vatCode ?? parent.vatCode ?? null,
    taxCode: model.taxCode ?? parent.taxCode ?? null,
    id: model.id ?? parent.id ?? null,
    model,
    covered: new Set([...parent.covered, ...loaded.covered]),
  };
}

/**
 * Like `withFacets`, but a failed purchase leaves the stub: the fields the stub knows still
 * resolve, and each other field reports the failure (partial data, e.g. for nested companies and
 * search items).
 */
export async function withFacetsOrStub(ctx: SubgraphContext, parent: CompanyParent, need: ReadonlySet<Facet>): Promise<CompanyParent> {
  try {
    return await withFacets(ctx, parent, need);
  } catch {
    return parent;
  }
}

/**
 * The `lookupCode` of a company: the identifier known without a purchase, for other subgraphs to
 * join on (the VAT number, else the tax code, else the Openapi id); null when none is known.
 */
export function lookupCodeOf(p: CompanyParent): string | null {
  const r = refOf(p);
  for (const v of [r.vatCode, r.taxCode, r.id]) if (typeof v === 'string' && present(v)) return v;
  return null;
}

/**
 * The company a `lookupCode` reference from another subgraph stands for, validated, as a stub that
 * claims no field it does not know: 24 hexadecimal characters are an Openapi id, 16 characters a
 * personal tax code, and 11 digits a neutral code, kept as the company's lookup identifier (the
 * tax code every company endpoint accepts in the same path) without claiming it is the VAT number
 * or the tax code: a company's 11-digit tax code may differ from its VAT number (VAT groups), so
 * `vatCode` and `taxCode` are bought when asked, and the planner uses only sources that accept a
 * tax code, or those beside one that answers with the VAT number (IT-vatgroup takes the VAT number
 * or the id only).
 */
export function stubOfLookupCode(code: unknown): CompanyParent {
  const s = typeof code === 'string' ? code.trim() : '';
  if (/^[0-9a-f]{24}$/i.test(s)) return companyStub({ id: openapiIdArg(s, 'lookupCode') });
  if (/^[0-9]{11}$/.test(s)) return { vatCode: null, taxCode: taxCodeArg(s, 'lookupCode'), id: null, model: {}, covered: new Set<Facet>() };
  return companyStub({ taxCode: taxCodeArg(s, 'lookupCode') });
}
