/**
 * Parent types of the company subgraph's resolvers (GraphQL Code Generator maps the GraphQL type
 * `<Type>` to `<Type>Parent`). They are the normalized models of `model.ts`, plus, for `Company`,
 * what was bought for it.
 */
import type { Facet } from './facets.ts';
import type {
  AffiliateModel,
  CompanyModel,
  CompanyMonitorModel,
  ManagerCompanyModel,
  ManagerPersonModel,
  ShareholderCompanyModel,
  ShareholderPersonModel,
  SubsidiaryModel,
} from './model.ts';

/**
 * A company as resolvers pass it on: its keys, the data known so far and the facets that data
 * covers. A field whose facets are covered is read from `model`; any other field is bought through
 * the company loader (which normally happened already, when the company was returned).
 */
export interface CompanyParent {
  /** Keys known without any call (what the company was looked up or referenced by). */
  vatCode?: string | null;
  taxCode?: string | null;
  id?: string | null;
  model: CompanyModel;
  covered: ReadonlySet<Facet>;
}

export type ManagerPersonParent = ManagerPersonModel;
export type ManagerCompanyParent = ManagerCompanyModel;
export type ShareholderPersonParent = ShareholderPersonModel;
export type ShareholderCompanyParent = ShareholderCompanyModel;
export type SubsidiaryParent = SubsidiaryModel;
export type AffiliateCompanyParent = AffiliateModel;
export type CompanyMonitorParent = CompanyMonitorModel;

/** A page of Italian search results: items already as companies. */
export interface CompanySearchResultParent {
  items: CompanyParent[];
  count: number;
  total: number | null;
  cost: number | null;
  skip: number;
  limit: number;
  dryRun: boolean;
}
