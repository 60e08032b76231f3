/**
 * Parent types of the PEC schema's object types (GraphQL Code Generator maps `<Type>Parent` to the
 * GraphQL type `<Type>`): mailboxes and notifications are the tracked store's snapshots.
 */
import type { TrackedRequest } from '../runtime/tracking/store.ts';
import type { PecFamily } from './upstream.ts';
import type { Sending } from './bulk.ts';

export type MailboxParent = TrackedRequest<PecFamily>;
export type PecNotificationParent = TrackedRequest<PecFamily>;
export type BulkSendingParent = Sending;

/** A `Company` entity reference: its key and, through `@requires`, its PEC address. */
export interface CompanyParent {
  lookupCode: string;
  pec?: string | null;
}

/** The address, its domain and whether it is certified (the caller's mailbox is looked up when selected). */
export interface CompanyCertifiedMailParent {
  address: string;
  domain: string;
  certifiedDomain: boolean;
}
