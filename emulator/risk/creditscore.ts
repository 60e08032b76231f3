/**
 * Credit scores (synchronous): `GET /IT-creditscore-start|advanced|top/{vatCode_taxCode_or_id}`.
 *
 * Every value derives from the company's VAT number, so the same company gets the same score on
 * every call, and the three levels agree (start's colour is the advanced colour's family, advanced
 * and top share rating, severity and credit limit). Shapes follow the vendor spec's 200 examples.
 */
import type { EmuRequest, EmuResponse, Route } from '../core.ts';
import { fail, hexId, ok } from '../core.ts';
import { isValidFiscalCode, isValidItalianVat } from '../../contract/checksums.ts';
import { companyIdOfVat, vatOfCompanyId } from '../company-ids.ts';
import { HEX24, pick, rng } from './util.ts';

/** The company a credit score is about. */
export interface CompanyIdentity {
  vat: string;
  tax: string;
  companyId: string;
  name: string;
}

/** Start-level colours. */
export type StartScore = 'VERDE' | 'GIALLO' | 'ROSSO' | 'GRIGIO';
/** Advanced/top colours, from the best to the worst; GRIGIO when the analysis cannot conclude. */
export type RiskColour = 'VERDE' | 'VERDE SCURO' | 'VERDE CHIARO' | 'GIALLO' | 'ROSSO' | 'ROSSO VIVO' | 'ROSSO SCURO' | 'GRIGIO';

export interface ScoreProfile {
  severity: number;
  colour: RiskColour;
  start: StartScore;
  rating: string;
  description: string;
  creditLimit: number | null;
}

/** A valid VAT number derived from any text (the business of a sole trader known by personal tax code). */
function derivedVat(seed: string): string {
  const r = rng(`vat:${seed}`);
  let body = '';
  for (let i = 0; i < 10; i++) body += String(Math.floor(r() * 10));
  if (/^0+$/.test(body)) body = '1234567890';
  for (let check = 0; check < 10; check++) if (isValidItalianVat(body + check)) return body + check;
  return '12485671007';
}

const NAME_A = ['ALFA', 'AURORA', 'BORA', 'CORVO', 'DELTA', 'EUREKA', 'GALILEO', 'LEVANTE', 'MERIDIANA', 'NOVA', 'ORIONE', 'POLARIS', 'SIRIO', 'VEGA', 'ZENIT'];
const NAME_B = ['COSTRUZIONI', 'SERVIZI', 'TECNOLOGIE', 'LOGISTICA', 'ALIMENTARE', 'CONSULENZE', 'IMPIANTI', 'DISTRIBUZIONE', 'INFORMATICA', 'TRASPORTI', 'MECCANICA', 'ENERGIA'];
const FORMS = ['S.R.L.', 'S.P.A.', 'S.R.L.S.', 'S.N.C.', 'S.A.S.'];

/** A stable company name per VAT number (OpenAPI's own VAT keeps its real name, as in the spec). */
export function companyNameOf(vat: string): string {
  if (vat === '12485671007') return 'OPENAPI S.P.A.';
  const r = rng(`name:${vat}`);
  return `${pick(r, NAME_A)} ${pick(r, NAME_B)} ${pick(r, FORMS)}`;
}

/**
 * Resolves the path parameter: an 11-digit VAT (or numeric tax code), a 16-character personal tax
 * code, or a 24-hex company id. `missing` for an empty value, `invalid` when the checksum fails or
 * the value is none of these.
 */
export function identify(raw: string): CompanyIdentity | 'missing' | 'invalid' {
  const value = raw.trim().toUpperCase();
  if (value === '') return 'missing';
  if (HEX24.test(value)) {
    // Company ids are the company area's (reversible to the VAT number); a forged one is not valid.
    const vat = vatOfCompanyId(value);
    if (vat === null) return 'invalid';
    return { vat, tax: vat, companyId: value.toLowerCase(), name: companyNameOf(vat) };
  }
  if (/^\d{11}$/.test(value)) {
    if (!isValidItalianVat(value)) return 'invalid';
    return { vat: value, tax: value, companyId: companyIdOfVat(value), name: companyNameOf(value) };
  }
  if (value.length === 16 && isValidFiscalCode(value)) {
    // A sole trader's personal tax code: the emulator gives the business a stable VAT number.
    const vat = derivedVat(value);
    return { vat, tax: value, companyId: companyIdOfVat(vat), name: companyNameOf(vat) };
  }
  return 'invalid';
}

const BANDS: Array<{ upTo: number; colour: RiskColour; description: string }> = [
  { upTo: 60, colour: 'VERDE', description: 'assenza eventi negativi' },
  { upTo: 160, colour: 'VERDE SCURO', description: 'molto bassa' },
  { upTo: 300, colour: 'VERDE CHIARO', description: 'inferiore alla media' },
  { upTo: 500, colour: 'GIALLO', description: 'nella media' },
  { upTo: 650, colour: 'ROSSO', description: 'superiore alla media' },
  { upTo: 800, colour: 'ROSSO VIVO', description: 'molto alta' },
  { upTo: 990, colour: 'ROSSO SCURO', description: 'massima' },
];
const RATINGS = ['A1', 'A2', 'A3', 'B1', 'B2', 'B3', 'C1', 'C2', 'C3'];

/** The score of a company: a pure function of its VAT number. */
export function scoreOf(vat: string): ScoreProfile {
  const r = rng(`score:${vat}`);
  const grey = r() < 0.04 && vat !== '12485671007';
  const severity = vat === '12485671007' ? 3 : 1 + Math.floor(r() * 990);
  const size = r();
  if (grey) {
    return { severity, colour: 'GRIGIO', start: 'GRIGIO', rating: 'ND', description: 'analisi da estendere ai soggetti collegati', creditLimit: null };
  }
  const band = BANDS.find((b) => severity <= b.upTo) ?? BANDS[BANDS.length - 1];
  const start: StartScore = band.colour.startsWith('VERDE') ? 'VERDE' : band.colour === 'GIALLO' ? 'GIALLO' : 'ROSSO';
  const rating = RATINGS[Math.min(8, Math.floor((severity - 1) / 110))];
  const creditLimit = vat === '12485671007' ? 110000 : Math.max(0, Math.round(((5_000 + size * 495_000) * (1 - severity / 1100)) / 1000) * 1000);
  return { severity, colour: band.colour, start, rating, description: band.description, creditLimit };
}

/** `nowMs`: the emulator's clock. */
const head = (nowMs: number): { requested_at: string; time_stamp: number } => ({
  requested_at: new Date(nowMs).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z'),
  time_stamp: Math.floor(nowMs / 1000),
});

export function startData(c: CompanyIdentity, nowMs: number): Record<string, unknown> {
  const s = scoreOf(c.vat);
  const { requested_at, time_stamp } = head(nowMs);
  return { organization_name: c.name, requested_at, risk_score: s.start, tax: c.tax, vat: c.vat, id: hexId(), company_id: c.companyId, time_stamp };
}

export function advancedData(c: CompanyIdentity, nowMs: number): Record<string, unknown> {
  const s = scoreOf(c.vat);
  const { requested_at, time_stamp } = head(nowMs);
  return {
    operational_credit_limit: s.creditLimit,
    organization_name: c.name,
    rating: s.rating,
    requested_at,
    risk_score: s.colour,
    risk_score_description: s.description,
    risk_severity: s.severity,
    tax: c.tax,
    vat: c.vat,
    id: hexId(),
    company_id: c.companyId,
    time_stamp,
  };
}

/** The last twelve months, oldest first, as `YYYY-MM`. */
function lastMonths(nowMs: number, count = 12): string[] {
  const now = new Date(nowMs);
  const out: string[] = [];
  for (let i = count - 1; i >= 0; i--) {
    const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - i, 1));
    out.push(d.toISOString().slice(0, 7));
  }
  return out;
}

const POSITIONS: Array<[string, string, string]> = [
  ['A5007', 'Equilibrio Patrimoniale', 'Indice di capitalizzazione'],
  ['A5026', 'Equilibrio Patrimoniale', 'Copertura globale delle immobilizzazioni'],
  ['A5004', 'Equilibrio Finanziario', 'Liquidità corrente'],
  ['A5005', 'Equilibrio Finanziario', 'Liquidità secca'],
  ['A5012', 'Equilibrio Economico', 'Redditività del capitale investito (ROI)'],
  ['A5011', 'Equilibrio Economico', 'Redditività operativa delle vendite (ROS)'],
  ['A5030', 'Sostenibilità del debito', 'Autofinanziamento / Debiti Totali'],
  ['A5042', 'Sostenibilità del debito', 'Debiti Totali/EBITDA'],
  ['A5034', 'Sviluppo - Trend', 'Variazione % fatturato'],
  ['A5051', 'Sviluppo - Trend', 'Variazione % ROL'],
];
const PROFILE_NAMES = ['Equilibrio Patrimoniale', 'Equilibrio Finanziario', 'Equilibrio Economico', 'Sostenibilità del debito', 'Sviluppo - Trend'];
const SCORE_WORDS = ['negativa', 'aspetti di criticità', 'nella media', 'positiva', 'molto positiva'];
const TRENDS = ['in grave peggioramento', 'in peggioramento', 'stabile', 'in lieve miglioramento', 'in miglioramento'];
const INDUSTRIES = [
  'Informatica: software,  consulenza e servizi',
  "Commercio all'ingrosso",
  'Costruzioni e impiantistica',
  'Industria alimentare',
  'Trasporti e logistica',
  'Meccanica di precisione',
];

/** The `data` of IT-creditscore-top (also the monitor's dataset). */
export function topData(c: CompanyIdentity, nowMs: number): Record<string, unknown> {
  const s = scoreOf(c.vat);
  const r = rng(`top:${c.vat}`);
  const months = lastMonths(nowMs);
  const year = String(new Date(nowMs).getUTCFullYear() - 2);
  const industry = pick(r, INDUSTRIES);
  const quality = 1 - s.severity / 990; // 1 = best
  const quintile = (): string => `Q${Math.max(1, Math.min(5, Math.round(1 + quality * 3 + (r() - 0.5) * 2)))}`;
  const grey = s.colour === 'GRIGIO';
  const positions = grey
    ? []
    : POSITIONS.map(([index, profile, description]) => ({
        value: Math.round((r() * 60 - 10) * 1000) / 1000,
        industry_index: index,
        industry_index_profile: profile,
        industry_position: quintile(),
        industry_position_description: description,
        industry_position_last_year_trend: Math.round((r() * 40 - 20) * 1000) / 1000,
        industry_position_total: quintile(),
        industry_position_type: 'IND',
      }));
  const profiles = grey
    ? []
    : PROFILE_NAMES.map((name) => {
        const score = Math.max(1, Math.min(5, Math.round(1 + quality * 3 + (r() - 0.5) * 2)));
        return { name, note: null, score, score_description: SCORE_WORDS[score - 1], trend: pick(r, TRENDS) };
      });
  const { requested_at, time_stamp } = head(nowMs);
  return {
    company_id: c.companyId,
    data: {
      credit_check: {
        operational_credit_limit: s.creditLimit,
        rating: s.rating,
        risk_score: s.colour,
        risk_score_description: s.description,
      },
      history: {
        note: {
          description: 'Nel periodo osservato la valutazione è rimasta sostanzialmente invariata: non emergono eventi rilevanti.',
          events: [],
        },
        operational_credit_limit: months.map((month) => ({ month, value: s.creditLimit })),
        public_rating: months.map((month) => ({ balance_year: year, month, rating: s.rating })),
        risk_score: months.map((month) => ({ description: s.description, month, score: s.colour })),
      },
      last_balance_year: year,
      note: null,
      organization_name: c.name,
      positions: { positions, year, main_industry: industry },
      profiles: { positions_count: 10000 + Math.floor(r() * 30000), profiles, year, main_industry: industry },
    },
    requested_at,
    tax: c.tax,
    vat: c.vat,
    time_stamp,
    id: hexId(),
  };
}

type Level = 'start' | 'advanced' | 'top';
/** Error numbers per level: [404 missing, 406 not valid] (the spec gives top the advanced numbers). */
const ERRORS: Record<Level, [number, number]> = { start: [420, 421], advanced: [424, 425], top: [424, 425] };
const BUILD: Record<Level, (c: CompanyIdentity, nowMs: number) => Record<string, unknown>> = { start: startData, advanced: advancedData, top: topData };

function scoreHandler(level: Level, now: () => number) {
  return (_req: EmuRequest, params: Record<string, string>): EmuResponse => {
    const who = identify(params.id ?? '');
    const [missing, invalid] = ERRORS[level];
    if (who === 'missing') return fail(404, missing, 'id, p.iva or cf required');
    if (who === 'invalid') return fail(406, invalid, 'id, fiscal_code or tax_code not valid');
    return ok(BUILD[level](who, now()));
  };
}

/** `now`: the emulator's clock (epoch ms), which dates the answers. */
export function creditScoreRoutes(now: () => number): Route[] {
  const routes: Route[] = [];
  for (const level of ['start', 'advanced', 'top'] as const) {
    const path = `/IT-creditscore-${level}`;
    routes.push({ method: 'GET', pattern: `${path}/:id`, handler: scoreHandler(level, now) });
    routes.push({
      method: 'GET',
      pattern: path,
      handler: () => fail(404, ERRORS[level][0], 'id, p.iva or cf required'),
    });
  }
  return routes;
}
