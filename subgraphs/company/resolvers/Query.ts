/**
 * Root fields of the company subgraph. Arguments are validated before any upstream call; the
 * company lookups return a stub completed with what the selection needs (see `companies.ts`).
 */
import type { MutationResolvers, QueryResolvers } from '../__generated__/resolvers-types.ts';
import type { LegalFormModel } from '../model.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import { companyStub, withFacets } from '../companies.ts';
import { normalizeLegalForm } from '../normalize.ts';
import { companyFacetsFromInfo } from '../selection.ts';
import { COMPANY_ENDPOINTS, type VLegalForm } from '../upstream.ts';
import { codeArg, openapiIdArg, taxCodeArg, vatCodeArg } from '../validate.ts';
import { foreignCompany } from './foreign.ts';
import { frenchCompanySearch, searchCompanies } from './search.ts';
import { validateSourceArguments } from './sources.ts';

export const Query: QueryResolvers = {
  company: (_root, { vatCode }, ctx, info) => {
    const stub = companyStub({ vatCode: vatCodeArg(vatCode) });
    validateSourceArguments(ctx, info);
    return withFacets(ctx, stub, companyFacetsFromInfo(info));
  },
  companyByTaxCode: (_root, { taxCode }, ctx, info) => {
    const stub = companyStub({ taxCode: taxCodeArg(taxCode) });
    validateSourceArguments(ctx, info);
    return withFacets(ctx, stub, companyFacetsFromInfo(info));
  },
  companyById: (_root, { id }, ctx, info) => {
    const stub = companyStub({ id: openapiIdArg(id) });
    validateSourceArguments(ctx, info);
    return withFacets(ctx, stub, companyFacetsFromInfo(info));
  },
  searchCompanies: (_root, args, ctx, info) => {
    validateSourceArguments(ctx, info);
    return searchCompanies(args, ctx, info);
  },
  frenchCompanySearch: (_root, args, ctx, info) => frenchCompanySearch(args, ctx, info),
  foreignCompany: (_root, args, ctx) => foreignCompany(args, ctx),
  async legalForms(_root, { code }, ctx) {
    const c = codeArg(code, 'code', /^[A-Z]{2}$/, 'a two-letter legal-form code such as SP');
    let data: unknown;
    try {
      data = c
        ? await ctx.upstream.call<unknown>(ctx, COMPANY_ENDPOINTS.itLegalForm, { params: { code: c } })
        : await ctx.upstream.call<unknown>(ctx, COMPANY_ENDPOINTS.itLegalForms);
    } catch (err) {
      if (c && err instanceof UpstreamError && err.graphqlCode === 'UPSTREAM_NOT_FOUND') return [];
      throw err;
    }
    const list = Array.isArray(data) ? (data as unknown[]) : data && typeof data === 'object' ? [data] : [];
    return list.map((v) => (v && typeof v === 'object' ? normalizeLegalForm(v as VLegalForm) : null)).filter((v): v is LegalFormModel => v !== null);
  },
};

/** Monitor queries, mutations and the subscription need the area's service: `monitor.ts`, merged in `../index.ts`. */
export const Mutation: MutationResolvers = {};
