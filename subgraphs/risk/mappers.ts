/**
 * Parent types of the risk schema's object types (GraphQL Code Generator maps `<Type>Parent` to the
 * GraphQL type `<Type>`). Every request type is backed by the status store's snapshot; a company
 * reference carries only its key.
 */
import type { KycEntityModel } from './kyc.ts';
import type { TrackedRequest } from './store.ts';

/** A `Company` entity reference: the key the company subgraph gives (`lookupCode`). */
export interface CompanyParent {
  lookupCode: string;
}

export type RiskRequestParent = TrackedRequest;
export type PersonBureauRequestParent = TrackedRequest;
export type CompanyBureauRequestParent = TrackedRequest;
export type PatrimonialRequestParent = TrackedRequest;
export type PersonReportRequestParent = TrackedRequest;
export type HeirsRequestParent = TrackedRequest;
export type CompanyReportRequestParent = TrackedRequest;
export type NegativeRecordsRequestParent = TrackedRequest;
export type KycRequestParent = TrackedRequest;
export type KycMonitorRequestParent = TrackedRequest;
export type CreditScoreMonitorRequestParent = TrackedRequest;

/** A KYC entity, with the request it was found by (for its evidences and files). */
export type KycEntityParent = KycEntityModel;
