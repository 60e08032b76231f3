/** The company subgraph's resolver map (one module per type family under `resolvers/`). */
import type { Resolvers } from './__generated__/resolvers-types.ts';
import { AffiliateCompany, Company, CompanyMonitor, Manager, ManagerCompany, Shareholder, ShareholderCompany, Subsidiary } from './resolvers/Company.ts';
import { Mutation, Query } from './resolvers/Query.ts';
import { DateTimeScalar } from '../runtime/scalars.ts';
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
};
