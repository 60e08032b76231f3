/**
 * The asynchronous report families: patrimonial and report requests on a person
 * (`IT-patrimoniale-persona[-top[-supervisionato]]`, `IT-report-persona[-top]`,
 * `IT-eredi-con-accettazione`, `IT-eredi-senza-accettazione`) and on a company
 * (`IT-report-azienda[-top]`). Each family has: GET list, POST (→ `processing`), GET `/{id}`,
 * GET `/{id}/download` (the PDF, 406 error 303 until complete). The record becomes `complete`
 * `completeAfterMs` after creation, on a control `advance`, or at once with the sandbox
 * simulation `GET /{family}/{id}?callback`, which also fires the callback.
 *
 * Spellings mimic the vendor: the creation answer says `creation_timestamp` /
 * `last_update_timestamp`, the record `creationTimestamp` / `lastUpdateTimestamp` and `namePdf`.
 */
import type { EmuRequest, EmuResponse, Route } from '../core.ts';
import { fail, hexId, ok } from '../core.ts';
import { renderPdf } from '../pdf.ts';
import { isValidFiscalCode, isValidItalianVat } from '../../contract/checksums.ts';
import type { PendingWork, RiskContext } from './jobs.ts';
import type { StoredCallback } from './util.ts';
import { bodyOf, bump, noRequests, pdfResponse, pick, readRiskCallback, rng, str } from './util.ts';

export interface ReportFamily {
  path: string;
  subject: 'person' | 'company';
  /** Default PDF title when `titlePdf` is omitted. */
  title: string;
}

export const REPORT_FAMILIES: ReportFamily[] = [
  { path: '/IT-patrimoniale-persona', subject: 'person', title: 'Report patrimoniale persona' },
  { path: '/IT-patrimoniale-persona-top', subject: 'person', title: 'Report patrimoniale persona top' },
  { path: '/IT-patrimoniale-persona-top-supervisionato', subject: 'person', title: 'Report patrimoniale persona top supervisionato' },
  { path: '/IT-report-persona', subject: 'person', title: 'Report persona' },
  { path: '/IT-report-persona-top', subject: 'person', title: 'Report persona top' },
  { path: '/IT-eredi-con-accettazione', subject: 'person', title: 'Ricerca eredi con accettazione' },
  { path: '/IT-eredi-senza-accettazione', subject: 'person', title: 'Ricerca eredi senza accettazione' },
  { path: '/IT-report-azienda', subject: 'company', title: 'Report azienda' },
  { path: '/IT-report-azienda-top', subject: 'company', title: 'Report azienda top' },
];

type ReportState = 'processing' | 'complete';

interface ReportRecord {
  id: string;
  owner: string;
  family: ReportFamily;
  name?: string;
  surname?: string;
  companyName?: string;
  taxCode: string;
  vatCode?: string;
  titlePdf?: string;
  textPdf?: string;
  logoPdf?: string;
  note?: string;
  callback: StoredCallback | null;
  data: Record<string, unknown>;
  state: ReportState;
  created: number;
  updated: number;
}

/** Subject fields in the vendor's order. */
function subjectFields(rec: ReportRecord, order: 'create' | 'get'): Record<string, unknown> {
  if (rec.family.subject === 'company') {
    return order === 'create'
      ? { companyName: rec.companyName, taxCode: rec.taxCode, vatCode: rec.vatCode ?? null }
      : { taxCode: rec.taxCode, companyName: rec.companyName, vatCode: rec.vatCode ?? null };
  }
  return order === 'create' ? { name: rec.name, surname: rec.surname, taxCode: rec.taxCode } : { taxCode: rec.taxCode, surname: rec.surname, name: rec.name };
}

/** The answer to the creation (snake_case timestamps, no namePdf). */
const createdView = (rec: ReportRecord): Record<string, unknown> => ({
  ...subjectFields(rec, 'create'),
  callback: rec.callback,
  data: rec.data,
  state: rec.state,
  creation_timestamp: rec.created,
  last_update_timestamp: rec.updated,
  owner: rec.owner,
  id: rec.id,
});

/** The record as `GET /{id}` returns it (camelCase timestamps, namePdf). */
const recordView = (rec: ReportRecord): Record<string, unknown> => ({
  ...subjectFields(rec, 'get'),
  callback: rec.callback,
  data: rec.data,
  state: rec.state,
  creationTimestamp: rec.created,
  owner: rec.owner,
  namePdf: `${rec.id}.pdf`,
  lastUpdateTimestamp: rec.updated,
  id: rec.id,
});

const listItem = (rec: ReportRecord): Record<string, unknown> => ({
  state: rec.state,
  creation_timestamp: rec.created,
  last_update_timestamp: rec.updated,
  owner: rec.owner,
  id: rec.id,
});

function validate(
  family: ReportFamily,
  body: Record<string, unknown>,
): Omit<ReportRecord, 'id' | 'owner' | 'family' | 'callback' | 'data' | 'state' | 'created' | 'updated'> | EmuResponse {
  const taxCode = str(body.taxCode)?.trim();
  if (taxCode === undefined) return fail(400, 321, 'taxCode required.');
  const optional = {
    titlePdf: str(body.titlePdf),
    textPdf: str(body.textPdf),
    logoPdf: str(body.logoPdf),
    note: str(body.note),
  };
  if (family.subject === 'person') {
    const name = str(body.name);
    const surname = str(body.surname);
    if (name === undefined) return fail(400, 321, 'name required.');
    if (surname === undefined) return fail(400, 321, 'surname required.');
    if (taxCode.length !== 16 || !isValidFiscalCode(taxCode)) return fail(406, 322, 'taxCode not valid');
    return { name, surname, taxCode: taxCode.toUpperCase(), ...optional };
  }
  const companyName = str(body.companyName);
  if (companyName === undefined) return fail(400, 321, 'companyName required.');
  if (!isValidFiscalCode(taxCode)) return fail(406, 322, 'taxCode not valid');
  const vatCode = str(body.vatCode)?.trim();
  if (vatCode !== undefined && !isValidItalianVat(vatCode)) return fail(406, 322, 'vatCode not valid');
  return { companyName, taxCode: taxCode.toUpperCase(), vatCode, ...optional };
}

const FINDINGS_PERSON = [
  'Nessun immobile intestato rilevato nelle conservatorie consultate.',
  'Rilevata 1 unità immobiliare ad uso abitativo (quota di proprietà 50%).',
  'Rilevate 2 unità immobiliari (abitazione e pertinenza), piena proprietà.',
  'Risulta rapporto di lavoro dipendente in essere.',
  'Risulta titolare di pensione.',
  'Nessun protesto e nessuna pregiudizievole di conservatoria.',
  'Presenza di una ipoteca volontaria a garanzia di mutuo.',
];
const FINDINGS_COMPANY = [
  'Impresa attiva, nessuna procedura concorsuale in corso.',
  "Ultimo bilancio depositato con utile d'esercizio.",
  "Ultimo bilancio depositato con perdita d'esercizio contenuta.",
  "Nessun protesto a carico dell'impresa.",
  'Rilevate 2 unità immobiliari strumentali di proprietà.',
  'Presenza di pregiudizievoli di conservatoria cancellate.',
];

/** The report PDF: cover title, subject, findings derived from the tax code, footer text. */
function reportPdf(rec: ReportRecord): Buffer {
  const r = rng(`report:${rec.family.path}:${rec.taxCode}`);
  const findings = rec.family.subject === 'person' ? FINDINGS_PERSON : FINDINGS_COMPANY;
  const picked = new Set<string>();
  for (let i = 0; i < 3; i++) picked.add(pick(r, findings));
  const who =
    rec.family.subject === 'person'
      ? [`Soggetto: ${rec.name} ${rec.surname}`, `Codice fiscale: ${rec.taxCode}`]
      : [`Impresa: ${rec.companyName}`, `Codice fiscale: ${rec.taxCode}`, ...(rec.vatCode ? [`Partita IVA: ${rec.vatCode}`] : [])];
  return renderPdf(rec.titlePdf ?? rec.family.title, [
    ...(rec.logoPdf ? [`Logo: ${rec.logoPdf}`] : []),
    `Tipo di richiesta: ${rec.family.path.slice(1)}`,
    `Richiesta n. ${rec.id} di ${rec.owner}`,
    `Creata il ${new Date(rec.created * 1000).toISOString()} - completata il ${new Date(rec.updated * 1000).toISOString()}`,
    '',
    ...who,
    '',
    'Esito delle verifiche:',
    ...[...picked].map((f) => `- ${f}`),
    ...(rec.note ? ['', `Note: ${rec.note}`] : []),
    '',
    rec.textPdf ?? "Documento generato dall'emulatore openapi-supergraph: dati dimostrativi, non reali.",
  ]);
}

export function reportRoutes(ctx: RiskContext): Route[] {
  const records = new Map<string, ReportRecord>();
  ctx.onReset(() => records.clear());

  const work = (rec: ReportRecord): PendingWork => ({
    id: rec.id,
    complete: () => {
      rec.state = 'complete';
      rec.updated = bump(rec.updated, ctx.nowSeconds());
    },
    view: () => recordView(rec),
    callback: () => rec.callback,
  });

  const find = (family: ReportFamily, req: EmuRequest, id: string): ReportRecord | EmuResponse => {
    const seen = ctx.jobs.lookup(id, req.token.owner, family.path);
    if (seen === 'malformed' || seen === 'unknown') return fail(400, 301, 'Wrong id');
    const rec = records.get(id.toLowerCase());
    if (seen === 'foreign' || !rec) return fail(404, 302, 'no request found');
    return rec;
  };
  const isRecord = (v: ReportRecord | EmuResponse): v is ReportRecord => 'family' in v;

  return REPORT_FAMILIES.flatMap((family): Route[] => [
    {
      method: 'GET',
      pattern: family.path,
      handler: (req) => {
        const mine = [...records.values()].filter((r) => r.family === family && r.owner === req.token.owner);
        return mine.length === 0 ? noRequests(req.token.owner) : ok(mine.map(listItem));
      },
    },
    {
      method: 'POST',
      pattern: family.path,
      handler: (req) => {
        const body = bodyOf(req);
        const fields = validate(family, body);
        if ('status' in fields) return fields;
        const cb = readRiskCallback(body, 'legacy');
        if ('error' in cb) return cb.error;
        const callback = cb.callback;
        const now = ctx.nowSeconds();
        const rec: ReportRecord = {
          ...fields,
          id: hexId(),
          owner: req.token.owner,
          family,
          callback,
          data: {},
          state: 'processing',
          created: now,
          updated: now,
        };
        records.set(rec.id, rec);
        ctx.jobs.register(rec.id, rec.owner, family.path);
        ctx.jobs.arm(work(rec));
        return ok(createdView(rec));
      },
    },
    {
      method: 'GET',
      pattern: `${family.path}/:id`,
      handler: (req, p) => {
        const rec = find(family, req, p.id ?? '');
        if (!isRecord(rec)) return rec;
        if (req.query.has('callback')) {
          // Sandbox simulation: the PDF is created now and the callback fires (again, if already complete).
          const w = work(rec);
          if (ctx.jobs.isPending(rec.id)) void ctx.jobs.complete(rec.id);
          else void ctx.jobs.notify(w);
        }
        return ok(recordView(rec));
      },
    },
    {
      method: 'GET',
      pattern: `${family.path}/:id/download`,
      handler: (req, p) => {
        const rec = find(family, req, p.id ?? '');
        if (!isRecord(rec)) return rec;
        if (rec.state !== 'complete') return fail(406, 303, 'the pdf has not yet been created');
        return pdfResponse(reportPdf(rec), `${rec.id}.pdf`);
      },
    },
  ]);
}
