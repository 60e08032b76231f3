/** The company subgraph's resolver map (one module per type family under `resolvers/`). */
import type { Resolvers } from './__generated__/resolvers-types.ts';
import { AffiliateCompany, Company, CompanyMonitor, Manager, ManagerCompany, Shareholder, ShareholderCompany, Subsidiary } from './resolvers/Company.ts';
import { Mutation, Query } from './resolvers/Query.ts';
import { DateTimeScalar } from '../runtime/scalars.ts';
import { municipalityRef } from '../runtime/municipality.ts';
import { JSONScalar } from './scalars.ts';

export const resolvers: Resolvers = {
  DateTime: DateTimeScalar,
  JSON: JSONScalar,
  Query,
  Mutation,
  Company,
  Manager,
  Shareholder,
  ManagerCompany,
  ShareholderCompany,
  Subsidiary,
  AffiliateCompany,
  CompanyMonitor,
  // Addresses name their municipality for the postal subgraph (cadastral code, else town and province).
  CompanyAddress: { municipality: (a) => municipalityRef(a) },
  BeneficialOwnerAddress: { municipality: (a) => municipalityRef(a) },
};
