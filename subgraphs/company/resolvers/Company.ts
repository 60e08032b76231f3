/**
 * `Company` and the types that lead to other companies. Field resolvers only read the model: the
 * data was bought when the company was returned (root query, entity reference, nested company),
 * for every field selected. A field whose facets are not covered (a selection the walk could not
 * see, e.g. a field added by the query planner) is bought through the same loader.
 */
import type { GraphQLResolveInfo } from 'graphql';
import type { SubgraphContext } from '../../runtime/context.ts';
import type {
  AffiliateCompanyResolvers,
  CompanyMonitorResolvers,
  CompanyResolvers,
  ManagerCompanyResolvers,
  ManagerResolvers,
  ShareholderCompanyResolvers,
  ShareholderResolvers,
  SubsidiaryResolvers,
} from '../__generated__/resolvers-types.ts';
import { companyStub, hasKey, lookupCodeOf, stubOfLookupCode, withFacets, withFacetsOrStub } from '../companies.ts';
import { covers } from '../facets.ts';
import type { CompanyParent } from '../mappers.ts';
import type { CompanyModel } from '../model.ts';
import { companyFacetsFromInfo, fieldFacetsFromInfo } from '../selection.ts';
import { beneficialOwners, isCeased, publicAdministration, splitPayment, validateSourceArguments, vatGroupTaxCodeCheck } from './sources.ts';

/** Resolver of one `Company` field: the model's value, bought first if it is not covered yet. */
function read<K extends keyof CompanyModel>(key: K) {
  return (
    parent: CompanyParent,
    _args: unknown,
    ctx: SubgraphContext,
    info: GraphQLResolveInfo,
  ): NonNullable<CompanyModel[K]> | null | Promise<NonNullable<CompanyModel[K]> | null> => {
    const need = fieldFacetsFromInfo(info);
    if (covers(parent.covered, need)) return parent.model[key] ?? null;
    return withFacets(ctx, parent, need).then((p) => p.model[key] ?? null);
  };
}

/** A company referenced by a payload (manager, shareholder, subsidiary …): its stub, completed. */
function nested(model: CompanyModel, ctx: SubgraphContext, info: GraphQLResolveInfo): Promise<CompanyParent> | null {
  const stub = companyStub(model);
  if (!hasKey(stub)) return null;
  return withFacetsOrStub(ctx, stub, companyFacetsFromInfo(info));
}

export const Company: CompanyResolvers = {
  async __resolveReference(reference, ctx, info) {
    const stub = stubOfLookupCode((reference as { lookupCode?: unknown }).lookupCode);
    if (!hasKey(stub)) return null;
    validateSourceArguments(ctx, info);
    return withFacets(ctx, stub, companyFacetsFromInfo(info));
  },
  lookupCode: (parent) => lookupCodeOf(parent) ?? '',
  vatCode: read('vatCode'),
  taxCode: read('taxCode'),
  id: read('id'),
  companyName: read('companyName'),
  serviceNumber: read('serviceNumber'),
  chamberOfCommerce: read('chamberOfCommerce'),
  reaCode: read('reaCode'),
  officeType: read('officeType'),
  rawOfficeType: read('rawOfficeType'),
  lastUpdateDate: read('lastUpdateDate'),
  recordCreationDate: read('recordCreationDate'),
  address: read('address'),
  activityStatus: read('activityStatus'),
  rawActivityStatus: read('rawActivityStatus'),
  registryStatus: read('registryStatus'),
  rawRegistryStatus: read('rawRegistryStatus'),
  ceased: read('ceased'),
  taxCodeCeased: read('taxCodeCeased'),
  taxCodeCeasedUpdateDate: read('taxCodeCeasedUpdateDate'),
  isMarketable: read('isMarketable'),
  legalForm: read('legalForm'),
  rawLegalForm: read('rawLegalForm'),
  legalFormDescription: read('legalFormDescription'),
  detailedLegalForm: read('detailedLegalForm'),
  dates: read('dates'),
  atecoClassification: read('atecoClassification'),
  internationalClassification: read('internationalClassification'),
  employees: read('employees'),
  employeeStatistics: read('employeeStatistics'),
  isInnovativeStartUp: read('isInnovativeStartUp'),
  isInnovativeSme: read('isInnovativeSme'),
  email: read('email'),
  contacts: read('contacts'),
  webAndSocial: read('webAndSocial'),
  pec: read('pec'),
  sdiCode: read('sdiCode'),
  sdiCodeUpdateDate: read('sdiCodeUpdateDate'),
  vatGroup: read('vatGroup'),
  artisanRegistry: read('artisanRegistry'),
  hasSoaCertification: read('hasSoaCertification'),
  corporateGroup: read('corporateGroup'),
  numberOfBranches: read('numberOfBranches'),
  allOffices: read('allOffices'),
  subsidiaries: read('subsidiaries'),
  affiliates: read('affiliates'),
  foreignTrade: read('foreignTrade'),
  publicTenders: read('publicTenders'),
  operatingResults: read('operatingResults'),
  ecofin: read('ecofin'),
  balanceSheets: read('balanceSheets'),
  managers: read('managers'),
  shareholders: read('shareholders'),
  balanceSheet: read('balanceSheet'),
  incomeStatement: read('incomeStatement'),
  ratios: read('ratios'),
  rae: read('rae'),
  sae: read('sae'),
  // Single-purpose endpoints (resolvers/sources.ts; pecHistory comes with IT-pec through the planner).
  pecHistory: read('pecHistory'),
  beneficialOwners,
  publicAdministration,
  splitPayment,
  isCeased,
  vatGroupTaxCodeCheck,
};

export const Manager: ManagerResolvers = {
  __resolveType: (parent) => (parent.kind === 'company' ? 'ManagerCompany' : 'ManagerPerson'),
};

export const Shareholder: ShareholderResolvers = {
  __resolveType: (parent) => (parent.kind === 'company' ? 'ShareholderCompany' : 'ShareholderPerson'),
};

export const ManagerCompany: ManagerCompanyResolvers = {
  company: (parent, _args, ctx, info) => nested({ taxCode: parent.taxCode, companyName: parent.companyName }, ctx, info),
};

export const ShareholderCompany: ShareholderCompanyResolvers = {
  company: (parent, _args, ctx, info) => nested({ taxCode: parent.taxCode, companyName: parent.companyName, serviceNumber: parent.serviceNumber }, ctx, info),
};

export const Subsidiary: SubsidiaryResolvers = {
  company: (parent, _args, ctx, info) => nested({ taxCode: parent.taxCode, companyName: parent.companyName }, ctx, info),
};

export const AffiliateCompany: AffiliateCompanyResolvers = {
  company: (parent, _args, ctx, info) => nested({ taxCode: parent.taxCode, companyName: parent.companyName }, ctx, info),
};

export const CompanyMonitor: CompanyMonitorResolvers = {
  company: (parent, _args, ctx, info) => nested({ vatCode: parent.vatCode, taxCode: parent.taxCode, id: parent.companyId, companyName: parent.companyName }, ctx, info),
};
