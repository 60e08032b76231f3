/**
 * What the async-work kit (`runtime/tracking/`) needs of the company area: its one family of
 * tracked work, the company monitors (`/monitor`), how to read a monitor record, and the shape of
 * its ids.
 *
 * A monitor record has no state of its own: it is `ACTIVE` until the layer deletes it (`DELETED`,
 * final). Its dates are days (`checkedOn: "2026-02-03"`), so a check is told from the one before by
 * its version: the check date and the values it reported (`updatedFields`).
 */
import { createHash } from 'node:crypto';
import type { AreaSpec, FamilyTable, StatePolicy } from '../runtime/tracking/policy.ts';
import type { Obj } from '../../contract/values.ts';
import { COMPANY_ENDPOINTS } from './upstream.ts';

export type CompanyFamilyName = 'COMPANY_MONITOR';
export type CompanyRecordKind = 'CompanyMonitor';

export const COMPANY_FAMILIES: FamilyTable<CompanyFamilyName, CompanyRecordKind> = {
  COMPANY_MONITOR: {
    family: 'COMPANY_MONITOR',
    kind: 'CompanyMonitor',
    create: COMPANY_ENDPOINTS.monitorCreate,
    get: COMPANY_ENDPOINTS.monitorGet,
    list: COMPANY_ENDPOINTS.monitorList,
    remove: COMPANY_ENDPOINTS.monitorDelete,
  },
};

/** The state the layer gives a monitor it deleted (the upstream forgets it). */
export const MONITOR_DELETED = 'DELETED';
const MONITOR_ACTIVE = 'ACTIVE';

/** Unix seconds of a day (`2026-02-03`) or a date-time; null when it is neither. */
function secondsOf(v: unknown): number | null {
  if (typeof v !== 'string' || v === '') return null;
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T00:00:00Z` : v);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : null;
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Obj;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

export const COMPANY_POLICY: StatePolicy<CompanyRecordKind> = {
  stateOf: (r) => (typeof r.state === 'string' && r.state !== '' ? r.state : MONITOR_ACTIVE),
  timestampsOf: (r) => ({ createdAt: secondsOf(r.createdOn), updatedAt: secondsOf(r.checkedOn) ?? secondsOf(r.createdOn) }),
  isFinal: (s) => s === MONITOR_DELETED,
  awaitsUpstream: () => false,
  isActiveMonitor: (_kind, s) => s !== MONITOR_DELETED,
  // A check: its date and what it reported. A monitor never checked has no version.
  versionOf: (r) =>
    r.checkedOn === null || r.checkedOn === undefined
      ? null
      : createHash('sha256')
          .update(canonical({ checkedOn: r.checkedOn, updatedFields: r.updatedFields ?? null }))
          .digest('base64url')
          .slice(0, 22),
};

export const COMPANY_AREA: AreaSpec<CompanyFamilyName, CompanyRecordKind> = {
  name: 'company',
  families: COMPANY_FAMILIES,
  policy: COMPANY_POLICY,
  idPattern: /^[0-9a-f]{24}$/,
  // A monitor record: an id and what it watches (it has no state).
  isRecord: (o) => typeof o.id === 'string' && o.id !== '' && (typeof o.dataset === 'string' || typeof o.code === 'string'),
};
