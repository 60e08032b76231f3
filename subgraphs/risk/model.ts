/**
 * From the risk area's upstream payloads to the schema's values: states, timestamps, subjects,
 * callbacks, risk colours, credit scores and KYC entities. Pure functions; tolerant of the vendor's
 * inconsistent spellings (creation_timestamp / creationTimestamp, numbers sent as strings and the
 * other way round, Italian or English colours).
 */
import type { CreditScore, CreditScoreLevel, KycEntity, KycQuery, RiskCallback, RiskRequestState, RiskScore, RiskSubject } from './__generated__/resolvers-types.ts';
import type { RiskRecordKind } from './upstream.ts';
import { bool, float as num, int, list, obj, str as text, dateTime as toDateTime, unixSeconds as toSeconds } from '../upstream/coerce.ts';
import { isObj, objects, type Obj } from '../../contract/values.ts';
import { callbackView } from '../runtime/tracking/ingress.ts';

// The one coercion of upstream values (`upstream/coerce.ts`), under the names this area uses:
// `text` trims and drops blanks, `int` rounds a fraction to the nearest integer (a severity of 12.7
// is 13, not unknown), `bool` reads 1/0 and "true"/"false", `toDateTime` reads Unix seconds or
// milliseconds and ISO or `YYYY-MM-DD HH:mm:ss` strings (UTC).
export { bool, int, isObj, num, text, toDateTime, toSeconds, type Obj };

/** States after which nothing changes any more. */
const FINAL = new Set(['complete', 'completed', 'deleted']);

export const isFinalState = (raw: string | null | undefined): boolean => raw !== null && raw !== undefined && FINAL.has(raw.toLowerCase());

export function normaliseState(raw: string | null | undefined): RiskRequestState {
  switch ((raw ?? '').trim().toLowerCase()) {
    case 'processing':
    case 'pending':
      return 'PROCESSING';
    case 'awaiting_delegation':
      return 'AWAITING_DELEGATION';
    case 'in_progress':
      return 'IN_PROGRESS';
    case 'complete':
    case 'completed':
      return 'COMPLETE';
    case 'activated':
    case 'active':
      return 'ACTIVE';
    case 'deleted':
      return 'DELETED';
    default:
      return 'UNKNOWN';
  }
}

/** The raw state of a record (`state`, or `status` for adverse records checks). */
export const rawStateOf = (record: Obj): string | null => text(record.state) ?? text(record.status);

/** Creation and last-change times in Unix seconds, whatever the record's spelling. */
export function timestampsOf(record: Obj): { createdAt: number | null; updatedAt: number | null } {
  const createdAt = toSeconds(record.creation_timestamp ?? record.creationTimestamp ?? record.timestamp ?? record.date_request);
  const updatedAt = toSeconds(record.last_update_timestamp ?? record.lastUpdateTimestamp ?? record.date_completion) ?? createdAt;
  return { createdAt, updatedAt };
}

/** Whether the request waits for the upstream (so a late callback is worth polling for). */
export function awaitsUpstream(kind: RiskRecordKind, raw: string | null): boolean {
  const s = (raw ?? '').toLowerCase();
  // A bureau request in `processing` waits for the caller's signed delegation, not for the upstream.
  if (kind === 'PersonBureauRequest' || kind === 'CompanyBureauRequest') return s === 'in_progress';
  if (kind === 'CreditScoreMonitorRequest' || kind === 'KycMonitorRequest') return s === 'pending';
  return s === 'processing' || s === 'pending' || s === 'in_progress';
}

/** Whether the request is a running monitor (worth an occasional read, in case a callback was lost). */
export function isActiveMonitor(kind: RiskRecordKind, raw: string | null): boolean {
  const s = (raw ?? '').toLowerCase();
  return (kind === 'CreditScoreMonitorRequest' || kind === 'KycMonitorRequest') && (s === 'activated' || s === 'active');
}

const joinName = (...parts: Array<string | null>): string | null => {
  const s = parts.filter((p): p is string => p !== null && p.trim() !== '').join(' ');
  return s === '' ? null : s;
};

/** Who a request is about. */
export function subjectOf(kind: RiskRecordKind, r: Obj): RiskSubject | null {
  switch (kind) {
    case 'PersonBureauRequest':
      return { name: joinName(text(r.first_name), text(r.last_name)), taxCode: text(r.fiscal_code), vatCode: null };
    case 'CompanyBureauRequest':
      return { name: text(r.company_name), taxCode: text(r.company_tax_code), vatCode: text(r.company_vat_number) };
    case 'PatrimonialRequest':
    case 'PersonReportRequest':
    case 'HeirsRequest':
      return { name: joinName(text(r.name), text(r.surname)), taxCode: text(r.taxCode), vatCode: null };
    case 'CompanyReportRequest':
      return { name: text(r.companyName) ?? text(r.name), taxCode: text(r.taxCode), vatCode: text(r.vatCode) };
    case 'NegativeRecordsRequest': {
      const code = text(r.cf_piva);
      const isVat = code !== null && /^\d{11}$/.test(code);
      return { name: null, taxCode: code, vatCode: isVat ? code : null };
    }
    case 'KycRequest':
    case 'KycMonitorRequest': {
      const q = obj(r.query);
      return { name: text(q.name) ?? joinName(text(q.firstName), text(q.lastName)), taxCode: null, vatCode: null };
    }
    case 'CreditScoreMonitorRequest':
      return { name: text(r.companyName), taxCode: text(r.taxCode), vatCode: text(r.vatCode) ?? text(r.code) };
  }
}

/** A callback object as records store it, in the schema's form (the tracking kit's view); null when absent or without a URL. */
export const callbackOf = (v: unknown): RiskCallback | null => callbackView(v);

/** Risk colours in both spellings, normalised to upper case words. */
const SCORES: Record<string, RiskScore> = {
  VERDE: 'GREEN',
  GREEN: 'GREEN',
  'VERDE CHIARO': 'LIGHT_GREEN',
  'LIGHT GREEN': 'LIGHT_GREEN',
  'VERDE SCURO': 'DARK_GREEN',
  'DARK GREEN': 'DARK_GREEN',
  GIALLO: 'YELLOW',
  YELLOW: 'YELLOW',
  ROSSO: 'RED',
  RED: 'RED',
  'ROSSO VIVO': 'BRIGHT_RED',
  'BRIGHT RED': 'BRIGHT_RED',
  'ROSSO SCURO': 'DARK_RED',
  'DARK RED': 'DARK_RED',
  GRIGIO: 'GREY',
  GREY: 'GREY',
  GRAY: 'GREY',
};

/** The English risk colour of a vendor (VERDE … ROSSO SCURO) or contract (GREEN … DARK RED) value. */
export function riskScoreOf(raw: unknown): RiskScore | null {
  const s = text(raw);
  if (s === null) return null;
  return (
    SCORES[
      s
        .trim()
        .toUpperCase()
        .replace(/[\s_-]+/g, ' ')
    ] ?? null
  );
}

/** The year and main industry heading a credit check's industry positions and profiles. */
const industryOf = (section: Obj): { year: string | null; mainIndustry: string | null } => ({ year: text(section.year), mainIndustry: text(section.main_industry) });

/** A credit score answer (start, advanced or top) in the schema's shape. */
export function toCreditScore(level: CreditScoreLevel, raw: unknown): CreditScore {
  const d = obj(raw);
  const inner = obj(d.data);
  const check = obj(inner.credit_check);
  const pick = (name: string): unknown => d[name] ?? check[name] ?? inner[name];
  const rawScore = text(pick('risk_score'));
  const history = isObj(inner.history) ? inner.history : null;
  const positions = isObj(inner.positions) ? inner.positions : null;
  const profiles = isObj(inner.profiles) ? inner.profiles : null;
  const historyNote = history ? obj(history.note) : {};
  return {
    level,
    id: text(d.id),
    companyId: text(d.company_id),
    vatCode: text(d.vat),
    taxCode: text(d.tax),
    companyName: text(d.organization_name ?? inner.organization_name),
    requestedAt: toDateTime(d.requested_at),
    assessedAt: toDateTime(d.time_stamp),
    score: riskScoreOf(rawScore),
    rawScore,
    scoreDescription: text(pick('risk_score_description')),
    rating: text(pick('rating')),
    severity: int(pick('risk_severity')),
    creditLimit: num(pick('operational_credit_limit')),
    lastBalanceYear: text(inner.last_balance_year),
    note: inner.note ?? null,
    history: history
      ? {
          note: text(historyNote.description) ?? text(history.note),
          events: list(historyNote.events),
          scores: objects(history.risk_score).map((m) => ({
            month: text(m.month) ?? '',
            score: riskScoreOf(m.score),
            rawScore: text(m.score),
            description: text(m.description),
          })),
          ratings: objects(history.public_rating).map((m) => ({ month: text(m.month) ?? '', rating: text(m.rating), balanceYear: text(m.balance_year) })),
          creditLimits: objects(history.operational_credit_limit).map((m) => ({ month: text(m.month) ?? '', value: num(m.value) })),
        }
      : null,
    positions: positions
      ? {
          ...industryOf(positions),
          positions: objects(positions.positions).map((p) => ({
            index: text(p.industry_index),
            profile: text(p.industry_index_profile),
            description: text(p.industry_position_description),
            value: num(p.value),
            position: text(p.industry_position),
            totalPosition: text(p.industry_position_total),
            lastYearTrend: num(p.industry_position_last_year_trend),
            type: text(p.industry_position_type),
          })),
        }
      : null,
    profiles: profiles
      ? {
          ...industryOf(profiles),
          positionsCount: int(profiles.positions_count),
          profiles: objects(profiles.profiles).map((p) => ({
            name: text(p.name),
            score: int(p.score),
            scoreDescription: text(p.score_description),
            trend: text(p.trend),
            note: text(p.note),
          })),
        }
      : null,
  };
}

export function kycQueryOf(v: unknown): KycQuery | null {
  if (!isObj(v)) return null;
  return {
    name: text(v.name),
    firstName: text(v.firstName),
    lastName: text(v.lastName),
    birthDate: text(v.birthDate),
    entityType: text(v.entityType),
    removeDeceased: bool(v.removeDeceased),
  };
}

const partialDates = (v: unknown) => objects(v).map((d) => ({ day: int(d.day), month: int(d.month), year: int(d.year), inferred: bool(d.inferred) }));

/** A KYC entity's own fields (its evidences and files are read by `kyc.ts`). */
export function kycEntityOf(e: Obj): Omit<KycEntity, 'evidences' | 'evidenceReport' | 'photoFiles'> {
  return {
    id: text(e.id),
    entityType: text(e.entity_type),
    names: objects(e.names).map((n) => ({
      title: text(n.title),
      firstName: text(n.first_name),
      lastName: text(n.last_name),
      fullName: text(n.full_name),
      primary: bool(n.primary),
      native: bool(n.native),
    })),
    gender: text(e.gender),
    birthDates: partialDates(e.birth_dates),
    deathDates: partialDates(e.death_dates),
    locations: objects(e.locations).map((l) => ({
      address: text(l.address),
      street: text(l.street),
      city: text(l.city),
      region: text(l.region),
      country: text(l.country),
      type: text(l.type),
    })),
    nationalities: list(e.nationalities)
      .map(text)
      .filter((s): s is string => s !== null),
    codes: objects(e.codes).map((c) => ({ type: text(c.type), value: text(c.value) })),
    photos: list(e.photos)
      .map(text)
      .filter((s): s is string => s !== null),
    recaps: objects(e.recaps).map((r) => ({ lang: text(r.lang), recap: text(r.recap) })),
    organizationDetails: e.organization_details ?? null,
    lastUpdate: e.last_update ?? null,
  };
}

export const jsonList = (v: unknown): unknown[] => list(v);
export const objectOrNull = (v: unknown): Obj | null => (isObj(v) ? v : null);
