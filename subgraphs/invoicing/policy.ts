/**
 * What the async-work kit (`runtime/tracking/`) needs of the invoicing area: its family table
 * (`upstream.ts`), its state policy and the shape of its record ids. Invoices move NEW → SENT →
 * DONE | ERROR (passive ones arrive RECEIVED); the SDI status (`details.sdi_status`) changes within
 * SENT for invoices to the public administration (DELIVERED while awaiting acceptance), so it is the
 * records' version: such a change is published like a new state. Receipts move new → submitted →
 * ready (retry and failed on the way), and a ready sale becomes voided when voided.
 */
import type { AreaSpec, StatePolicy } from '../runtime/tracking/policy.ts';
import { FAMILIES, type InvoicingFamily, type InvoicingKind } from './upstream.ts';
import { isObj, type Obj } from '../../contract/values.ts';

/** States after which nothing changes: invoices' (upper case) and receipts' (lower case). */
const FINAL = new Set(['DONE', 'ERROR', 'RECEIVED', 'failed', 'voided']);
/** States in which the service is still working (a late notification is worth a free read). */
const AWAITING = new Set(['NEW', 'SENT', 'new', 'retry', 'submitted']);

/** Unix seconds of an ISO date-time or a number of seconds, else null. */
export function secondsOf(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return Math.floor(v);
  if (typeof v !== 'string' || v.trim() === '') return null;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? null : Math.floor(ms / 1000);
}

export const INVOICING_POLICY: StatePolicy<InvoicingKind> = {
  stateOf: (r: Obj) => (typeof r.state === 'string' ? r.state : typeof r.status === 'string' ? r.status : null),
  timestampsOf: (r: Obj) => ({
    createdAt: secondsOf(r.create_at ?? r.created_at ?? r.create_timestamp),
    updatedAt: secondsOf(r.updated_at ?? r.update_timestamp ?? (isObj(r.details) ? r.details.sdi_update_date : undefined) ?? r.create_at),
  }),
  isFinal: (state) => state !== null && state !== undefined && FINAL.has(state),
  awaitsUpstream: (_kind, state) => state !== null && AWAITING.has(state),
  isActiveMonitor: () => false,
  versionOf: (r: Obj) => (isObj(r.details) && typeof r.details.sdi_status === 'string' ? r.details.sdi_status : null),
};

export const INVOICING_AREA: AreaSpec<InvoicingFamily, InvoicingKind> = {
  name: 'invoicing',
  families: FAMILIES,
  policy: INVOICING_POLICY,
  idPattern: /^[0-9a-f]{24}$/,
};
