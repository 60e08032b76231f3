/**
 * Bureau requests with a delegation: the person request (contract `IT-bureau-persona`, vendor
 * `IT-crif-persona`; both paths share one implementation and one set of records) and the company
 * request (`IT-crif-azienda`).
 *
 * States: `processing` (created; the delegation form is downloadable at `/{id}/delega` once it
 * exists, `delegationAfterMs` after creation: before, the download answers 406 error 303 "the
 * delegation has not yet been created" and the record has no `delegation_file`) →
 * `in_progress` (PATCH with the signed delegation; callback fired) → `complete` after
 * `completeAfterMs` or a control `advance` (data filled, callback fired).
 */
import type { EmuRequest, EmuResponse, Route } from '../core.ts';
import { fail, hexId, ok } from '../core.ts';
import { decodeBase64Pdf, renderPdf } from '../pdf.ts';
import { isValidFiscalCode, isValidItalianVat } from '../../contract/checksums.ts';
import { priceOf, priceTable } from '../../contract/prices.ts';
import type { PendingWork, RiskContext } from './jobs.ts';
import type { StoredCallback } from './util.ts';
import { bodyOf, bump, isEmail, isIsoDate, noRequests, pdfResponse, readRiskCallback, rng, storedFileName, str } from './util.ts';

type Check = 'text' | 'email' | 'date' | 'gender' | 'document' | 'fiscal' | 'tax' | 'vat' | 'pdf';

/** The person's fields, in the vendor's order (their index gives the error number). */
const PERSON_FIELDS: Array<[string, Check]> = [
  ['first_name', 'text'],
  ['last_name', 'text'],
  ['email', 'email'],
  ['birth_date', 'date'],
  ['gender', 'gender'],
  ['fiscal_code', 'fiscal'],
  ['birth_city', 'text'],
  ['birth_province', 'text'],
  ['birth_country', 'text'],
  ['residence_address', 'text'],
  ['residence_street_number', 'text'],
  ['residence_city', 'text'],
  ['residence_postal_code', 'text'],
  ['residence_province', 'text'],
  ['residence_country', 'text'],
  ['document_type', 'document'],
  ['document_number', 'text'],
  ['release_date', 'date'],
  ['expiration_date', 'date'],
  ['release_city', 'text'],
  ['release_province', 'text'],
  ['public_authority', 'text'],
  ['document_file', 'pdf'],
  ['health_insurance_card_file', 'pdf'],
];

/** The company's fields; `company_certified_email` / `company_sdi` are "at least one of" (error 201). */
const COMPANY_FIELDS: Array<[string, Check]> = [
  ['company_name', 'text'],
  ['company_legal_form', 'text'],
  ['company_tax_code', 'tax'],
  ['company_vat_number', 'vat'],
  ['company_certified_email', 'email'],
  ['company_sdi', 'text'],
  ['company_address', 'text'],
  ['company_street_number', 'text'],
  ['company_city', 'text'],
  ['company_postal_code', 'text'],
  ['company_province', 'text'],
  ['company_country', 'text'],
  ...PERSON_FIELDS.filter(([name]) => name !== 'email'),
  ['company_registration_report_file', 'pdf'],
];
const OPTIONAL_COMPANY = new Set(['company_certified_email', 'company_sdi']);

interface BureauKind {
  family: string;
  /** Paths serving this kind (the contract's name first). */
  paths: string[];
  fields: Array<[string, Check]>;
  /** Field errors are `fieldBase + index` (spec: first_name 200, fiscal_code 205; company_tax_code 212). */
  fieldBase: number;
  errors: {
    list: number;
    getWrong: number;
    getMissing: number;
    patchWrong: number;
    patchMissing: number;
    cantUpload: number;
    badFile: number;
    fileRequired: number;
    delegaWrong: number;
    delegaMissing: number;
    delegaNotYet: number;
  };
  subject: (input: Record<string, string>) => string;
}

const PERSON: BureauKind = {
  family: 'bureau-persona',
  paths: ['/IT-bureau-persona', '/IT-crif-persona'],
  fields: PERSON_FIELDS,
  fieldBase: 200,
  // The contract gives every wrong id error 301; the vendor's PATCH uses 305.
  errors: {
    list: 300,
    getWrong: 301,
    getMissing: 302,
    patchWrong: 301,
    patchMissing: 306,
    cantUpload: 307,
    badFile: 308,
    fileRequired: 309,
    delegaWrong: 301,
    delegaMissing: 302,
    delegaNotYet: 303,
  },
  subject: (i) => `${i.first_name ?? ''} ${i.last_name ?? ''}`.trim(),
};

const COMPANY: BureauKind = {
  family: 'crif-azienda',
  paths: ['/IT-crif-azienda'],
  fields: COMPANY_FIELDS,
  fieldBase: 210,
  errors: {
    list: 311,
    getWrong: 312,
    getMissing: 313,
    patchWrong: 315,
    patchMissing: 316,
    cantUpload: 317,
    badFile: 318,
    fileRequired: 319,
    delegaWrong: 312,
    delegaMissing: 313,
    delegaNotYet: 314,
  },
  subject: (i) => i.company_name ?? '',
};

type BureauState = 'processing' | 'in_progress' | 'complete';

interface BureauRecord {
  id: string;
  owner: string;
  kind: BureauKind;
  /** Input fields in vendor order; files replaced by stored names. */
  input: Record<string, string>;
  callback: StoredCallback | null;
  data: Record<string, unknown>;
  state: BureauState;
  created: number;
  updated: number;
  /** Name of the delegation form, once it exists. */
  delegationFile?: string;
  signedFile?: string;
}

/** The record as the vendor returns it (POST, GET /{id}, PATCH, callbacks). */
function view(rec: BureauRecord): Record<string, unknown> {
  const out: Record<string, unknown> = { ...rec.input };
  out.callback = rec.callback;
  out.data = rec.data;
  out.state = rec.state;
  out.creation_timestamp = rec.created;
  out.last_update_timestamp = rec.updated;
  out.owner = rec.owner;
  if (rec.delegationFile !== undefined) out.delegation_file = rec.delegationFile;
  if (rec.signedFile !== undefined) out.signed_delegation_file = rec.signedFile;
  out.id = rec.id;
  return out;
}

const listItem = (rec: BureauRecord): Record<string, unknown> => ({
  state: rec.state,
  creation_timestamp: rec.created,
  last_update_timestamp: rec.updated,
  owner: rec.owner,
  id: rec.id,
});

/** Validates the body: every required field first (428), then every value (406). */
function validate(kind: BureauKind, body: Record<string, unknown>): { input: Record<string, string> } | EmuResponse {
  const input: Record<string, string> = {};
  for (const [name] of kind.fields) {
    const value = str(body[name]);
    if (value !== undefined) input[name] = value;
    // The vendor's own example sends `"company_sdi": ""` next to a certified e-mail.
    else if (OPTIONAL_COMPANY.has(name) && body[name] === '') input[name] = '';
  }
  for (const [index, [name]] of kind.fields.entries()) {
    if (kind === COMPANY && OPTIONAL_COMPANY.has(name)) continue;
    if (input[name] === undefined) return fail(428, kind.fieldBase + index, `${name} required`);
  }
  if (kind === COMPANY && !input.company_certified_email && !input.company_sdi) {
    return fail(428, 201, 'at least one field between company_certified_email and company_sdi is required');
  }
  for (const [index, [name, check]] of kind.fields.entries()) {
    const value = input[name];
    if (value === undefined || value === '') continue;
    if (!passes(check, value)) return fail(406, kind.fieldBase + index, `${name} not valid`);
  }
  return { input };
}

function passes(check: Check, value: string): boolean {
  switch (check) {
    case 'text':
      return true;
    case 'email':
      return isEmail(value);
    case 'date':
      return isIsoDate(value);
    case 'gender':
      return /^[MF]$/i.test(value);
    case 'document':
      return ['IDENTITY_CARD', 'DRIVING_LICENSE', 'PASSPORT'].includes(value.toUpperCase());
    case 'fiscal':
      return value.trim().length === 16 && isValidFiscalCode(value);
    case 'tax':
      return isValidFiscalCode(value);
    case 'vat':
      return isValidItalianVat(value);
    case 'pdf':
      return decodeBase64Pdf(value) !== null;
  }
}

/** The bureau's answer once complete (the vendor does not show it: a compact, deterministic summary). */
function resultOf(rec: BureauRecord, nowMs: number): Record<string, unknown> {
  // About the company for a company request (its legal representative's code is the signer's).
  const code = ((rec.kind === COMPANY ? rec.input.company_tax_code : rec.input.fiscal_code) ?? rec.id).toUpperCase();
  const r = rng(`bureau:${code}`);
  const score = 300 + Math.floor(r() * 600);
  const contracts = Math.floor(r() * 4);
  const overdue = r() < 0.15 ? 1 + Math.floor(r() * 3) : 0;
  return {
    esito: 'OK',
    soggetto: kindSubject(rec),
    codice_fiscale: code,
    data_elaborazione: new Date(nowMs).toISOString().slice(0, 10),
    score: { valore: score, classe: score >= 700 ? 'A' : score >= 550 ? 'B' : score >= 400 ? 'C' : 'D' },
    contratti: {
      attivi: contracts,
      importo_residuo: contracts * (1000 + Math.floor(r() * 20000)),
      rate_insolute: overdue,
    },
    richieste_ultimi_6_mesi: Math.floor(r() * 5),
    protesti: r() < 0.1,
    pregiudizievoli: r() < 0.1,
  };
}

const kindSubject = (rec: BureauRecord): string => rec.kind.subject(rec.input);

function delegationPdf(rec: BureauRecord): Buffer {
  const i = rec.input;
  const lines =
    rec.kind === PERSON
      ? [
          `Il/La sottoscritto/a ${i.first_name} ${i.last_name}, codice fiscale ${(i.fiscal_code ?? '').toUpperCase()},`,
          `nato/a a ${i.birth_city} (${i.birth_province}), ${i.birth_country}, il ${i.birth_date},`,
          `residente in ${i.residence_address} ${i.residence_street_number}, ${i.residence_postal_code} ${i.residence_city} (${i.residence_province}), ${i.residence_country},`,
          `documento ${i.document_type} n. ${i.document_number}, rilasciato da ${i.public_authority} di ${i.release_city} il ${i.release_date}, scadenza ${i.expiration_date},`,
        ]
      : [
          `Il/La sottoscritto/a ${i.first_name} ${i.last_name}, codice fiscale ${(i.fiscal_code ?? '').toUpperCase()},`,
          `legale rappresentante di ${i.company_name} ${i.company_legal_form}, codice fiscale ${i.company_tax_code}, partita IVA ${i.company_vat_number},`,
          `con sede in ${i.company_address} ${i.company_street_number}, ${i.company_postal_code} ${i.company_city} (${i.company_province}), ${i.company_country},`,
        ];
  return renderPdf('Delega per la richiesta di informazioni creditizie', [
    ...lines,
    '',
    `DELEGA ${rec.owner} a richiedere per suo conto le informazioni creditizie che lo/la riguardano`,
    'presso i sistemi di informazioni creditizie, ai sensi della normativa vigente.',
    '',
    `Richiesta n. ${rec.id} del ${new Date(rec.created * 1000).toISOString().slice(0, 10)}`,
    '',
    'Luogo e data ______________________          Firma ______________________________',
    '',
    'Compilare, firmare e caricare il file con PATCH sulla richiesta (signed_delegation_file, PDF in base64).',
  ]);
}

export function bureauRoutes(ctx: RiskContext): Route[] {
  const records = new Map<string, BureauRecord>();
  ctx.onReset(() => records.clear());

  const work = (rec: BureauRecord): PendingWork => ({
    id: rec.id,
    complete: () => {
      rec.state = 'complete';
      rec.data = resultOf(rec, ctx.now());
      rec.updated = bump(rec.updated, ctx.nowSeconds());
    },
    view: () => view(rec),
    callback: () => rec.callback,
  });

  /**
   * The record for `id`, or the vendor's error answer: 400 "Wrong id" for a value that is not an id,
   * 404 "no request found" for a well-formed id that is no request of this caller (unknown, or
   * someone else's: the two look the same).
   */
  const find = (kind: BureauKind, req: EmuRequest, id: string, wrong: number, missing: number): BureauRecord | EmuResponse => {
    const seen = ctx.jobs.lookup(id, req.token.owner, kind.family);
    if (seen === 'malformed') return fail(400, wrong, 'Wrong id');
    const rec = records.get(id.toLowerCase());
    if (seen === 'foreign' || !rec) return fail(404, missing, 'no request found');
    return rec;
  };
  const isRecord = (v: BureauRecord | EmuResponse): v is BureauRecord => 'kind' in v;

  const routesOf = (kind: BureauKind, path: string): Route[] => {
    // The contract's path is priced by the table; the vendor alias costs the same unless priced itself.
    const postPrice = priceTable()[`risk POST ${path.slice(1)}`] ?? priceOf('risk', 'POST', kind.paths[0] ?? path);
    return [
      {
        method: 'GET',
        pattern: path,
        handler: (req) => {
          const mine = [...records.values()].filter((r) => r.kind === kind && r.owner === req.token.owner);
          return mine.length === 0 ? noRequests(req.token.owner, kind.errors.list) : ok(mine.map(listItem));
        },
      },
      {
        method: 'POST',
        pattern: path,
        price: postPrice,
        handler: (req) => {
          const body = bodyOf(req);
          const checked = validate(kind, body);
          if ('status' in checked) return checked;
          const cb = readRiskCallback(body, 'legacy');
          if ('error' in cb) return cb.error;
          const callback = cb.callback;
          const id = hexId();
          const input = { ...checked.input };
          for (const [name, check] of kind.fields) if (check === 'pdf' && input[name] !== undefined) input[name] = storedFileName();
          const now = ctx.nowSeconds();
          const rec: BureauRecord = {
            id,
            owner: req.token.owner,
            kind,
            input,
            callback,
            data: {},
            state: 'processing',
            created: now,
            updated: now,
          };
          const prepare = (): void => {
            rec.delegationFile = `${id}_delega.pdf`;
          };
          const after = ctx.delegationAfterMs();
          if (after > 0) ctx.later(after, prepare, `risk delegation ${id}`);
          else prepare();
          records.set(id, rec);
          ctx.jobs.register(id, req.token.owner, kind.family);
          return ok(view(rec));
        },
      },
      {
        method: 'GET',
        pattern: `${path}/:id`,
        handler: (req, p) => {
          const rec = find(kind, req, p.id ?? '', kind.errors.getWrong, kind.errors.getMissing);
          return isRecord(rec) ? ok(view(rec)) : rec;
        },
      },
      {
        method: 'PATCH',
        pattern: `${path}/:id`,
        handler: (req, p) => {
          const rec = find(kind, req, p.id ?? '', kind.errors.patchWrong, kind.errors.patchMissing);
          if (!isRecord(rec)) return rec;
          const file = str(bodyOf(req).signed_delegation_file);
          if (file === undefined) return fail(428, kind.errors.fileRequired, 'signed_delegation_file required');
          if (rec.state !== 'processing') return fail(406, kind.errors.cantUpload, "you can't upload the delegation yet");
          if (decodeBase64Pdf(file) === null) return fail(406, kind.errors.badFile, 'signed_delegation_file not valid');
          rec.state = 'in_progress';
          rec.signedFile = storedFileName();
          rec.updated = bump(rec.updated, ctx.nowSeconds());
          const w = work(rec);
          ctx.jobs.arm(w);
          void ctx.jobs.notify(w);
          return ok(view(rec));
        },
      },
      {
        method: 'GET',
        pattern: `${path}/:id/delega`,
        handler: (req, p) => {
          const rec = find(kind, req, p.id ?? '', kind.errors.delegaWrong, kind.errors.delegaMissing);
          if (!isRecord(rec)) return rec;
          if (rec.delegationFile === undefined) return fail(406, kind.errors.delegaNotYet, 'the delegation has not yet been created');
          return pdfResponse(delegationPdf(rec), rec.delegationFile);
        },
      },
    ];
  };

  return [PERSON, COMPANY].flatMap((kind) => kind.paths.flatMap((path) => routesOf(kind, path)));
}
