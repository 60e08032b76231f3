/**
 * `Company` fields bought from a single-purpose endpoint each, only when selected: beneficial
 * owners (IT-ubo), public administration (IT-pa), split payment (IT-splitpayment), cessation
 * (IT-closed) and a tax code's relation to the VAT group (IT-vatgroup with `taxCode`). An upstream
 * error fails the field alone (the company and its other fields resolve), with the error's stable
 * code; IT-pa and IT-splitpayment answer 404 for every company they do not list, which is null.
 * One call per company, endpoint and arguments per request; repeated operations hit the cache.
 */
import {
  getDirectiveValues,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  valueFromASTUntyped,
  type FieldNode,
  type GraphQLResolveInfo,
  type SelectionSetNode,
} from 'graphql';
import type { SubgraphContext } from '../../runtime/context.ts';
import type { CompanyResolvers } from '../__generated__/resolvers-types.ts';
import type { Endpoint } from '../../upstream/endpoint.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import { refOf, withFacets } from '../companies.ts';
import type { IdentifierKind } from '../facets.ts';
import type { CompanyParent } from '../mappers.ts';
import { normalizeBeneficialOwners, normalizePublicAdministration, normalizeSplitPayment, normalizeVatGroupCheck, oneRecord } from '../normalize-extra.ts';
import { COMPANY_ENDPOINTS } from '../upstream.ts';
import { isoDate } from '../../runtime/validate.ts';
import { taxCodeArg } from '../validate.ts';

/**
 * The identifiers each field's endpoint takes, in the order they are used (the VAT number first: one
 * cache key per company). A company known by none of them first learns its VAT number (the
 * cheapest source that holds it): the estimate counts that purchase too (`pricing.ts`).
 */
export const SOURCE_FIELD_ACCEPTS = {
  beneficialOwners: ['vatCode', 'taxCode', 'id'],
  publicAdministration: ['vatCode', 'taxCode'],
  splitPayment: ['vatCode', 'taxCode'],
  isCeased: ['vatCode', 'taxCode', 'id'],
  vatGroupTaxCodeCheck: ['vatCode', 'id'],
} as const satisfies Record<string, readonly IdentifierKind[]>;

/** Validators of the arguments of the fields above, by field name (the same the resolvers use). */
const ARGUMENT_CHECKS: Readonly<Record<string, (args: Record<string, unknown>) => void>> = {
  isCeased: (a) => {
    if (a.onDate !== null && a.onDate !== undefined) isoDate(a.onDate as string, 'onDate');
  },
  vatGroupTaxCodeCheck: (a) => void taxCodeArg(a.taxCode as string, 'taxCode'),
};

const skipped = (node: FieldNode, variables: Record<string, unknown>): boolean =>
  getDirectiveValues(GraphQLSkipDirective, node, variables)?.if === true || getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if === false;

/**
 * Validates the arguments of every single-purpose field of the operation (on any company, however
 * deep) before the first purchase: a company resolver that buys the rest of a selection calls this
 * first, so a bad `isCeased(onDate:)` or `vatGroupTaxCodeCheck(taxCode:)` is refused with
 * BAD_USER_INPUT before any paid call. Once per request.
 */
export function validateSourceArguments(ctx: SubgraphContext, info: Pick<GraphQLResolveInfo, 'operation' | 'fragments' | 'variableValues'>): void {
  const failure = ctx.once('company:source-arguments', () => {
    const variables = info.variableValues ?? {};
    const seen = new Set<string>();
    const walk = (set: SelectionSetNode | undefined): void => {
      for (const sel of set?.selections ?? []) {
        if (sel.kind === Kind.FIELD) {
          if (skipped(sel, variables)) continue;
          const check = ARGUMENT_CHECKS[sel.name.value];
          if (check) {
            const args: Record<string, unknown> = {};
            for (const a of sel.arguments ?? []) args[a.name.value] = valueFromASTUntyped(a.value, variables);
            check(args);
          }
          walk(sel.selectionSet);
        } else if (sel.kind === Kind.INLINE_FRAGMENT) walk(sel.selectionSet);
        else if (!seen.has(sel.name.value)) {
          seen.add(sel.name.value);
          walk(info.fragments[sel.name.value]?.selectionSet);
        }
      }
    };
    try {
      walk(info.operation.selectionSet);
      return null;
    } catch (err) {
      return err instanceof Error ? err : new Error(String(err));
    }
  });
  if (failure) throw failure;
}

/** The identifier an endpoint is called with (VAT number first: one cache key per company). */
async function identifierOf(ctx: SubgraphContext, parent: CompanyParent, accepts: readonly IdentifierKind[]): Promise<string> {
  const ref = refOf(parent);
  for (const k of accepts) {
    const v = ref[k];
    if (v) return v;
  }
  // Known by a key the endpoint does not take: learn the VAT number (cheapest source that holds it).
  const full = await withFacets(ctx, parent, new Set(['vatCode']));
  const vat = refOf(full).vatCode;
  if (!vat || !accepts.includes('vatCode')) throw new UpstreamError('http', 'the company has no VAT number this endpoint accepts', 'company', 'company', 404);
  return vat;
}

/** One call per (endpoint, identifier, query) per request. */
function callOnce(ctx: SubgraphContext, ep: Endpoint, id: string, query: Record<string, string> = {}): Promise<unknown> {
  const key = `company:source:${ep.path}|${id.toUpperCase()}|${JSON.stringify(query)}`;
  return ctx.once(key, () => ctx.upstream.call<unknown>(ctx, ep, { params: { id }, query }));
}

const nullWhenNotFound = async <T>(p: Promise<T>): Promise<T | null> => {
  try {
    return await p;
  } catch (err) {
    if (err instanceof UpstreamError && err.graphqlCode === 'UPSTREAM_NOT_FOUND') return null;
    throw err;
  }
};

type Field<K extends keyof CompanyResolvers> = NonNullable<CompanyResolvers[K]>;

export const beneficialOwners: Field<'beneficialOwners'> = async (parent: CompanyParent, _args: unknown, ctx: SubgraphContext) => {
  const id = await identifierOf(ctx, parent, SOURCE_FIELD_ACCEPTS.beneficialOwners);
  return normalizeBeneficialOwners(await callOnce(ctx, COMPANY_ENDPOINTS.itUbo, id));
};

export const publicAdministration: Field<'publicAdministration'> = async (parent: CompanyParent, _args: unknown, ctx: SubgraphContext) => {
  const id = await identifierOf(ctx, parent, SOURCE_FIELD_ACCEPTS.publicAdministration);
  const data = await nullWhenNotFound(callOnce(ctx, COMPANY_ENDPOINTS.itPa, id));
  const r = data === null ? null : oneRecord(data);
  return r ? normalizePublicAdministration(r) : null;
};

export const splitPayment: Field<'splitPayment'> = async (parent: CompanyParent, _args: unknown, ctx: SubgraphContext) => {
  const id = await identifierOf(ctx, parent, SOURCE_FIELD_ACCEPTS.splitPayment);
  const data = await nullWhenNotFound(callOnce(ctx, COMPANY_ENDPOINTS.itSplitpayment, id));
  const r = data === null ? null : oneRecord(data);
  return r ? normalizeSplitPayment(r) : null;
};

export const isCeased: Field<'isCeased'> = async (parent: CompanyParent, args: { onDate?: string | null }, ctx: SubgraphContext) => {
  const date = args.onDate === null || args.onDate === undefined ? null : isoDate(args.onDate, 'onDate');
  const id = await identifierOf(ctx, parent, SOURCE_FIELD_ACCEPTS.isCeased);
  const r = oneRecord(await callOnce(ctx, COMPANY_ENDPOINTS.itClosed, id, date ? { date } : {}));
  const v = r?.taxCodeCeased;
  return typeof v === 'boolean' ? v : null;
};

export const vatGroupTaxCodeCheck: Field<'vatGroupTaxCodeCheck'> = async (parent: CompanyParent, args: { taxCode: string }, ctx: SubgraphContext) => {
  const taxCode = taxCodeArg(args.taxCode, 'taxCode');
  const id = await identifierOf(ctx, parent, SOURCE_FIELD_ACCEPTS.vatGroupTaxCodeCheck);
  const r = oneRecord(await callOnce(ctx, COMPANY_ENDPOINTS.itVatgroup, id, { taxCode }));
  return r ? normalizeVatGroupCheck(r) : null;
};
