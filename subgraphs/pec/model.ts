/**
 * How the layer reads the PEC area's records, in either spelling of the contract and the vendor:
 * mailbox states (`in_attivazione` / `in_evasione`), box types (`DIGITALDOMICILE` /
 * `DOMICILIODIGITALE`, `PECBULK` / `PECMASSIVA`), dates (`dd/mm/yyyy`) and timestamps.
 */
import { str as text } from '../upstream/coerce.ts';
import type { BoxType, PecKind } from './upstream.ts';
import { isObj, type Obj } from '../../contract/values.ts';

export { text };

/** Mailbox states in the contract's words (`in_attivazione`), plus the vendor's extra ones. */
export type MailboxState = 'registrata' | 'in_attivazione' | 'evasa' | 'documenti_errati' | 'revocata' | 'chiusa' | 'registrazione_annullata';

/** The schema's `MailboxStatus` of a raw state (either spelling); null for a word the layer does not know. */
export function mailboxStatus(
  raw: string | null | undefined,
): 'REGISTERED' | 'ACTIVATING' | 'ACTIVE' | 'DOCUMENTS_REJECTED' | 'REVOKED' | 'CLOSED' | 'REGISTRATION_CANCELLED' | null {
  switch (contractState(raw)) {
    case 'registrata':
      return 'REGISTERED';
    case 'in_attivazione':
      return 'ACTIVATING';
    case 'evasa':
      return 'ACTIVE';
    case 'documenti_errati':
      return 'DOCUMENTS_REJECTED';
    case 'revocata':
      return 'REVOKED';
    case 'chiusa':
      return 'CLOSED';
    case 'registrazione_annullata':
      return 'REGISTRATION_CANCELLED';
    default:
      return null;
  }
}

/** A raw state in the contract's word (`in_evasione` → `in_attivazione`); other words lower-cased as given. */
export function contractState(raw: string | null | undefined): string | null {
  if (raw === null || raw === undefined) return null;
  const s = raw.trim().toLowerCase().replace(/\s+/g, '_');
  return s === 'in_evasione' ? 'in_attivazione' : s;
}

/** Box type of a record in the contract's word, either spelling accepted; null when unknown. */
export function boxTypeOf(raw: unknown): BoxType | null {
  const v = text(raw)?.trim().toUpperCase();
  if (v === 'STANDARD' || v === 'BRONZE' || v === 'SILVER' || v === 'GOLD') return v;
  if (v === 'DIGITALDOMICILE' || v === 'DOMICILIODIGITALE') return 'DIGITALDOMICILE';
  if (v === 'PECBULK' || v === 'PECMASSIVA') return 'PECBULK';
  return null;
}

export const STANDARD_FAMILY: readonly BoxType[] = ['STANDARD', 'BRONZE', 'SILVER', 'GOLD'];
export const isStandardFamily = (t: BoxType): boolean => STANDARD_FAMILY.includes(t);
/** Order of the standard family (an upgrade goes up). */
export const BOX_RANK: Readonly<Record<string, number>> = { STANDARD: 0, BRONZE: 1, SILVER: 2, GOLD: 3 };

/** `dd/mm/yyyy` → `yyyy-mm-dd`; null when not a date. */
export function isoDay(v: unknown): string | null {
  const m = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(text(v)?.trim() ?? '');
  return m ? `${m[3]}-${m[2]}-${m[1]}` : null;
}

/** `yyyy-mm-dd` → `dd/mm/yyyy`. */
export const vendorDay = (iso: string): string => `${iso.slice(8, 10)}/${iso.slice(5, 7)}/${iso.slice(0, 4)}`;

const secs = (v: unknown): number | null => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : null;
};

/** Unix seconds → ISO date-time. */
export const isoTime = (v: unknown): string | null => {
  const s = secs(v);
  return s === null ? null : new Date(s * 1000).toISOString();
};

/** A record's named timestamp (`timestamp.registrazione` …), Unix seconds. */
export const stampOf = (record: Obj, name: string): number | null => (isObj(record.timestamp) ? secs(record.timestamp[name]) : null);

export const rawStateOf = (record: Obj): string | null => text(record.stato) ?? text(record.state);

/** Mailboxes: registration and last change; notifications carry one `timestamp` (its last step). */
export function timestampsOf(record: Obj): { createdAt: number | null; updatedAt: number | null } {
  if (isObj(record.timestamp)) return { createdAt: stampOf(record, 'registrazione'), updatedAt: stampOf(record, 'ultima_modifica') ?? stampOf(record, 'registrazione') };
  const t = secs(record.timestamp);
  return { createdAt: null, updatedAt: t };
}

/** Nothing changes after these: a closed box, a cancelled registration, a notification done. */
const FINAL = new Set(['chiusa', 'registrazione_annullata', 'comunicazione_evasa']);
export const isFinalState = (raw: string | null | undefined): boolean => FINAL.has(contractState(raw) ?? '');

/**
 * Polled: documents being verified, a notification's code, and an uploaded notification
 * (`documenti_caricati`), which waits for a finalize that may come from elsewhere (another token of
 * the account, the vendor's site). Its read by id (the contract's `GET /comunica_pec/{id}`) would
 * send it, so the poller sees it through the free list only (`PecService.fetchRecord`).
 */
const AWAITING = new Set(['in_attivazione', 'codice_in_richiesta']);
export const awaitsUpstream = (kind: PecKind, raw: string | null): boolean => {
  const state = contractState(raw) ?? '';
  return AWAITING.has(state) || (kind === 'PecNotification' && state === 'documenti_caricati');
};

/** A usable box can still change by itself (not renewed → revoked): read now and then. */
export const isActiveMonitor = (kind: PecKind, raw: string | null): boolean => kind === 'Mailbox' && contractState(raw) === 'evasa';
