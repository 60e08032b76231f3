/**
 * Negative events (protests, prejudicial records, insolvency procedures) on a tax code or VAT:
 * `POST /IT-negativita` (→ `PENDING`, `COMPLETED` after `completeAfterMs` or a control `advance`,
 * callback fired), `GET /IT-richiesta[/{id}[/download]]`, `GET /IT-negativita/{id}/dettaglio`
 * (422 error 512 while PENDING; empty lists come back as `null`, as the vendor does). The PDF
 * download is allowed once the details were requested (422 error 502 before).
 *
 * The contract lists `GET /IT-negativita`: it answers like `GET /IT-richiesta` (and
 * `GET /IT-negativita/{id}` like `GET /IT-richiesta/{id}`).
 */
import type { EmuRequest, EmuResponse, Route } from '../core.ts';
import { fail, hexId, ok } from '../core.ts';
import { renderPdf } from '../pdf.ts';
import { isValidFiscalCode, isValidItalianVat } from '../../contract/checksums.ts';
import type { PendingWork, RiskContext } from './jobs.ts';
import type { StoredCallback } from './util.ts';
import { bodyOf, pdfResponse, pick, readRiskCallback, rng, sqlDate, str } from './util.ts';

const FAMILY = 'negativita';

interface Negatives {
  protesti: boolean;
  procedure: boolean;
  pregiudizievoli: boolean;
  coinvoltoInProcedura: boolean;
}

interface NegativitaRecord {
  id: string;
  owner: string;
  cfPiva: string;
  callback: StoredCallback | null;
  status: 'PENDING' | 'COMPLETED';
  timestamp: number;
  dateRequest: string | null;
  dateCompletion: string | null;
  negatives: Negatives | null;
  detailsRequested: boolean;
  logoPdf: string | null;
  titlePdf: string | null;
  textPdf: string | null;
}

/** Which negatives a subject has: a pure function of the code (most subjects have none). */
function negativesOf(code: string): Negatives {
  const r = rng(`neg:${code}`);
  const protesti = r() < 0.2;
  const pregiudizievoli = r() < 0.15;
  const procedure = /^\d{11}$/.test(code) && r() < 0.1;
  return { protesti, procedure, pregiudizievoli, coinvoltoInProcedura: procedure || r() < 0.05 };
}

const PLACES: Array<[string, string, string, string]> = [
  ['ROMA', 'RM', 'H501', '058091'],
  ['MILANO', 'MI', 'F205', '015146'],
  ['TORINO', 'TO', 'L219', '001272'],
  ['NAPOLI', 'NA', 'F839', '063049'],
  ['TERNI', 'TR', 'L117', '055032'],
];

/** The detail object of `GET /IT-negativita/{id}/dettaglio`. */
function detailOf(code: string, neg: Negatives): Record<string, unknown> {
  const r = rng(`negdetail:${code}`);
  const [comune, provincia, codiceComune, istat] = pick(r, PLACES);
  const address = {
    denominazione: `VIA ROMA ${1 + Math.floor(r() * 200)}`,
    cap: null,
    codice_comune: codiceComune,
    codice_comune_istat: istat,
    comune,
    frazione: null,
    provincia,
    altre_indicazioni: null,
    codice_stato_estero: null,
    stato_estero: null,
  };
  const year = 2015 + Math.floor(r() * 9);
  const protesti = neg.protesti
    ? [
        {
          identificativo_protesto: 10000000 + Math.floor(r() * 89999999),
          denominazione: `SOGGETTO ${code.slice(0, 6)}`,
          codice_fiscale: code,
          data_nascita: null,
          provincia_nascita: null,
          luogo_nascita: null,
          codice_comune_nascita: null,
          codice_istat_comune_nascita: null,
          stato_nascita: null,
          codice_stato_nascita: null,
          indirizzo_residenza: address,
          effetti: [
            {
              cciaa: provincia,
              data_iscrizione: `${year}-03-05`,
              data_levata: `${year}-02-19`,
              provincia_levata: provincia,
              comune_levata: comune,
              codice_comune_levata: codiceComune,
              codice_istat_comune_levata: istat,
              data_scadenza: `${year}-02-10`,
              tipo_scadenza: null,
              codice_tipo_scadenza: null,
              tipo_effetto: 'CAMBIALE',
              codice_tipo_effetto: 'C',
              importo: 500 + Math.floor(r() * 20) * 250,
              motivo_rifiuto_pagamento: 'Mancanza di fondi disponibili',
              codice_motivo_rifiuto_pagamento: 'CM2',
              stato_effetto: 'NORMALE',
              codice_stato_effetto: 'N',
              informazione_legata_effetto: null,
              codice_informazione_legata_effetto: null,
              informazione: null,
            },
          ],
        },
      ]
    : null;
  const pregiudizievoli = neg.pregiudizievoli
    ? [
        {
          cancellata: false,
          codice_comune_conservatoria: codiceComune,
          codice_comune_istat_conservatoria: istat,
          codice_ministeriale_pregiudizievole: '0726',
          codice_pregiudizievole: 'IPG',
          codice_valuta_importo_capitale: 'EUR',
          codice_valuta_importo_iscritto: 'EUR',
          comune_conservatoria: comune,
          conservatoria: `${comune} 1`,
          contro: [{ codice_fiscale: code, denominazione: `SOGGETTO ${code.slice(0, 6)}`, persona_fisica: code.length === 16 }],
          data_registrazione: `${year}-06-12`,
          favore: [{ codice_fiscale: '00000000000', denominazione: 'AGENZIA DELLE ENTRATE-RISCOSSIONE', persona_fisica: false }],
          immobili: [],
          importo_capitale: 10000 + Math.floor(r() * 50) * 1000,
          importo_iscritto: 20000 + Math.floor(r() * 50) * 2000,
          numero_generale: String(10000 + Math.floor(r() * 80000)),
          numero_particolare: String(1000 + Math.floor(r() * 8000)),
          pregiudizievole: 'IPOTECA GIUDIZIALE',
          provincia_conservatoria: provincia,
          solo_sunto_disponibile: false,
        },
      ]
    : null;
  const procedure = neg.procedure
    ? [
        {
          accordo_ristrutturazione_debiti: false,
          cciaa: provincia,
          codice_fiscale: code,
          codice_procedura: 'LG',
          descrizione_procedura: 'LIQUIDAZIONE GIUDIZIALE',
          data_provvedimento: `${year}-09-30`,
          denominazione: `SOGGETTO ${code.slice(0, 6)}`,
          domanda_ammissione_concordato: false,
          identificativo_procedura: String(100000 + Math.floor(r() * 800000)),
          indirizzo: address,
          progressivo_procedura: 1,
          provincia_tribunale: provincia,
          tribunale: `TRIBUNALE DI ${comune}`,
        },
      ]
    : null;
  return {
    presenzaPregiudizievoli: neg.pregiudizievoli,
    pregiudizievoli,
    presenzaProcedure: neg.procedure,
    procedure,
    presenzaProtesti: neg.protesti,
    protesti,
  };
}

function view(rec: NegativitaRecord): Record<string, unknown> {
  let soggetto: Record<string, unknown> | null = null;
  if (rec.negatives) {
    soggetto = { code: rec.cfPiva, negativita: { ...rec.negatives } };
    if (rec.detailsRequested) soggetto.dettaglio_negativita = detailOf(rec.cfPiva, rec.negatives);
  }
  return {
    cf_piva: rec.cfPiva,
    tipo: ['negativita'],
    callback: rec.callback,
    status: rec.status,
    esito: rec.status === 'COMPLETED' ? { codice: 200, info: 'OK' } : null,
    timestamp: rec.timestamp,
    date_request: rec.dateRequest,
    date_completion: rec.dateCompletion,
    owner: rec.owner,
    id: rec.id,
    soggetto,
    logo_pdf: rec.logoPdf,
    title_pdf: rec.titlePdf,
    text_pdf: rec.textPdf,
  };
}

const listItem = (rec: NegativitaRecord): Record<string, unknown> => ({
  id: rec.id,
  cf_piva: rec.cfPiva,
  status: rec.status,
  esito: rec.status === 'COMPLETED' ? { codice: 200, info: 'OK' } : null,
  timestamp: rec.timestamp,
  owner: rec.owner,
});

function reportPdf(rec: NegativitaRecord): Buffer {
  const neg = rec.negatives ?? { protesti: false, procedure: false, pregiudizievoli: false, coinvoltoInProcedura: false };
  const yesNo = (b: boolean): string => (b ? 'PRESENTI' : 'assenti');
  return renderPdf(rec.titlePdf ?? 'Report negatività', [
    ...(rec.logoPdf ? [`Logo: ${rec.logoPdf}`] : []),
    `Soggetto: ${rec.cfPiva}`,
    `Richiesta n. ${rec.id} di ${rec.owner}`,
    `Richiesta il ${rec.dateRequest ?? '-'} - completata il ${rec.dateCompletion ?? '-'}`,
    '',
    `Protesti: ${yesNo(neg.protesti)}`,
    `Pregiudizievoli di conservatoria: ${yesNo(neg.pregiudizievoli)}`,
    `Procedure concorsuali: ${yesNo(neg.procedure)}`,
    `Coinvolto in procedura: ${neg.coinvoltoInProcedura ? 'sì' : 'no'}`,
    '',
    rec.textPdf ?? "Documento generato dall'emulatore openapi-supergraph: dati dimostrativi, non reali.",
  ]);
}

export function negativitaRoutes(ctx: RiskContext): Route[] {
  const records = new Map<string, NegativitaRecord>();
  ctx.onReset(() => records.clear());

  const work = (rec: NegativitaRecord): PendingWork => ({
    id: rec.id,
    complete: () => {
      rec.status = 'COMPLETED';
      rec.negatives = negativesOf(rec.cfPiva);
      rec.dateRequest = sqlDate(new Date(rec.timestamp * 1000));
      rec.dateCompletion = sqlDate(new Date(ctx.now()));
    },
    view: () => view(rec),
    callback: () => rec.callback,
  });

  /** The record, or the error answer with the endpoint's numbers ([wrong id, not found]). */
  const find = (req: EmuRequest, id: string, errors: [number, number], notFoundText: string): NegativitaRecord | EmuResponse => {
    const seen = ctx.jobs.lookup(id, req.token.owner, FAMILY);
    if (seen === 'malformed' || seen === 'unknown') return fail(400, errors[0], 'Wrong id');
    const rec = records.get(id.toLowerCase());
    if (seen === 'foreign' || !rec) return fail(404, errors[1], notFoundText);
    return rec;
  };
  const isRecord = (v: NegativitaRecord | EmuResponse): v is NegativitaRecord => 'cfPiva' in v;

  const list = (req: EmuRequest): EmuResponse => {
    const mine = [...records.values()].filter((r) => r.owner === req.token.owner);
    return mine.length === 0 ? fail(404, 400, 'no request linked to this account') : ok(mine.map(listItem));
  };
  const one = (req: EmuRequest, id: string): EmuResponse => {
    const rec = find(req, id, [401, 402], 'no request found');
    return isRecord(rec) ? ok(view(rec)) : rec;
  };

  return [
    {
      method: 'POST',
      pattern: '/IT-negativita',
      handler: (req) => {
        const body = bodyOf(req);
        const cfPiva = str(body.cf_piva)?.trim().toUpperCase();
        if (cfPiva === undefined) return fail(428, 411, 'cf_piva required');
        const valid = /^\d{11}$/.test(cfPiva) ? isValidItalianVat(cfPiva) : cfPiva.length === 16 && isValidFiscalCode(cfPiva);
        if (!valid) return fail(406, 412, 'cf_piva not valid');
        const cb = readRiskCallback(body, 'standard', () => fail(428, 411, 'callback url required'));
        if ('error' in cb) return cb.error;
        const callback = cb.callback;
        const rec: NegativitaRecord = {
          id: hexId(),
          owner: req.token.owner,
          cfPiva,
          callback,
          status: 'PENDING',
          timestamp: ctx.nowSeconds(),
          dateRequest: null,
          dateCompletion: null,
          negatives: null,
          detailsRequested: false,
          logoPdf: str(body.logo_pdf) ?? null,
          titlePdf: str(body.title_pdf) ?? null,
          textPdf: str(body.text_pdf) ?? null,
        };
        records.set(rec.id, rec);
        ctx.jobs.register(rec.id, rec.owner, FAMILY);
        ctx.jobs.arm(work(rec));
        return ok(view(rec));
      },
    },
    { method: 'GET', pattern: '/IT-negativita', handler: list },
    { method: 'GET', pattern: '/IT-negativita/:id', handler: (req, p) => one(req, p.id ?? '') },
    {
      method: 'GET',
      pattern: '/IT-negativita/:id/dettaglio',
      handler: (req, p) => {
        const id = p.id ?? '';
        const rec = find(req, id, [509, 510], `no request matches this id: ${id}`);
        if (!isRecord(rec)) return rec;
        if (rec.status === 'PENDING' || !rec.negatives) return fail(422, 512, 'the request is still in PENDING status');
        rec.detailsRequested = true;
        return ok(detailOf(rec.cfPiva, rec.negatives));
      },
    },
    { method: 'GET', pattern: '/IT-richiesta', handler: list },
    { method: 'GET', pattern: '/IT-richiesta/:id', handler: (req, p) => one(req, p.id ?? '') },
    {
      method: 'GET',
      pattern: '/IT-richiesta/:id/download',
      handler: (req, p) => {
        const rec = find(req, p.id ?? '', [401, 402], 'no request found');
        if (!isRecord(rec)) return rec;
        if (!rec.detailsRequested) return fail(422, 502, 'the details of the negatives have not yet been requested');
        return pdfResponse(reportPdf(rec), `${rec.id}.pdf`);
      },
    },
  ];
}
