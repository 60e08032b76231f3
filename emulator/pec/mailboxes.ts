/**
 * The emulator's certified mailboxes (`pec.openapi.it`, REFERENCE §7): availability, registration,
 * activation documents, the verification that makes a box usable, changes (sizes, preservation,
 * upgrade), renewal, revocation, extra users and the forms as PDFs, with the vendor's error numbers.
 *
 * States (the vendor's words): `registrata` → (documents) `in_evasione` → (verification) `evasa`, or
 * `documenti_errati` (documents again) ; `evasa` → `revocata` (DELETE, or not renewed) → `evasa`
 * (renewal); `chiusa` and `registrazione_annullata` by the provider (control hooks). The
 * verification is a job on the emulator's scheduler `verifyAfterMs` after the upload; each change
 * the provider makes (verification outcome, expiry, closing) is delivered to the box's callback.
 */
import { isValidFiscalCode } from '../../contract/checksums.ts';
import { deliverCallback, isCallback, readCallback, type StoredCallback } from '../callbacks.ts';
import { fail, hexId, ok, sandboxHost, type EmuRequest, type EmuResponse, type Route } from '../core.ts';
import { decodeBase64Pdf, renderPdf } from '../pdf.ts';
import type { JobId, Scheduler } from '../scheduler.ts';
import { ADDRESS, domainsOf, isStandardFamily, PROVIDER_DOMAINS, STANDARD_FAMILY, vendorBoxType, type VendorBoxType } from '../pec-domains.ts';
import { bodyOf, ddmmyyyy, digits, HEX24, isDdMmYyyy, pdfAnswer, plusYears, str, textError } from '../pec-shared.ts';
import { isObj, type Obj } from '../../contract/values.ts';

interface Box {
  rec: Obj;
  owner: string;
  callback: StoredCallback | null;
  job: JobId | null;
  /** The next verification fails (`documenti_errati`). */
  reject: boolean;
}

const TYPE_RANK: Record<string, number> = { STANDARD: 0, BRONZE: 1, SILVER: 2, GOLD: 3 };
const CLIENT_TYPES = ['IM', 'PS', 'PL', 'PC', 'A', 'PV', 'X'];

/** Required fields of `POST /pec`, in the order the vendor checks them, with their error numbers (428). */
const REQUIRED: ReadonlyArray<[string, number]> = [
  ['casella_pec', 223],
  ['tipo_casella', 224],
  ['tipo_cliente', 225],
  ['nome_richiedente', 226],
  ['cognome_richiedente', 227],
  ['email', 228],
  ['telefono', 229],
  ['codice_fiscale_richiedente', 230],
  ['data_nascita_richiedente', 231],
  ['sesso_richiedente', 232],
  ['nazione_nascita_richiedente', 233],
  ['indirizzo_titolare', 234],
  ['comune_titolare', 235],
  ['cap_titolare', 236],
  ['nazione_titolare', 237],
  ['provincia_titolare', 238],
];

/** Sizes (MB) of a new box by type: disk, archive ("storico"). */
const SIZES: Record<VendorBoxType, [number, number]> = {
  STANDARD: [1024, 0],
  BRONZE: [1024, 1024],
  SILVER: [2048, 2048],
  GOLD: [3072, 3072],
  DOMICILIODIGITALE: [1024, 0],
  PECMASSIVA: [2048, 0],
};

export interface MailboxOptions {
  scheduler: Scheduler;
  /** Milliseconds between the documents' upload and the verification's outcome; ≤ 0: only `advance`. */
  verifyAfterMs: number;
}

export class Mailboxes {
  private readonly boxes = new Map<string, Box>();
  private readonly deliveries = new Set<Promise<unknown>>();
  verifyAfterMs: number;

  constructor(private readonly opts: MailboxOptions) {
    this.verifyAfterMs = opts.verifyAfterMs;
  }

  private now(): number {
    return this.opts.scheduler.now();
  }

  private nowS(): number {
    return Math.floor(this.now() / 1000);
  }

  /** Whether an address is taken (a box not cancelled holds it). */
  isTaken(address: string): boolean {
    const a = address.toLowerCase();
    if (/^(taken|occupata|admin|info|postmaster)[._-]?/.test(a.split('@')[0] ?? '')) return true;
    for (const b of this.boxes.values()) if (String(b.rec.casella_pec).toLowerCase() === a && b.rec.stato !== 'registrazione_annullata') return true;
    return false;
  }

  private touch(b: Box, stato?: string): void {
    const ts = b.rec.timestamp as Obj;
    const prev = typeof ts.ultima_modifica === 'number' ? ts.ultima_modifica : 0;
    ts.ultima_modifica = Math.max(this.nowS(), prev + 1);
    if (stato !== undefined) b.rec.stato = stato;
  }

  private view(b: Box): Obj {
    return structuredClone(b.rec);
  }

  /** The list item: id, address, type, state, expiry, timestamps, owner. */
  private item(b: Box): Obj {
    const r = b.rec;
    return {
      id: r.id,
      casella_pec: r.casella_pec,
      tipo_casella: r.tipo_casella,
      stato: r.stato,
      data_scadenza: r.data_scadenza,
      timestamp: structuredClone(r.timestamp),
      owner: r.owner,
    };
  }

  /** The box of `id` for `owner`, or the vendor's answer (400 wrong id / 404 not found, numbers per endpoint). */
  private find(id: string, owner: string, wrong: number, missing: number): Box | EmuResponse {
    if (!HEX24.test(id)) return fail(400, wrong, 'Wrong id');
    const b = this.boxes.get(id.toLowerCase());
    if (!b || b.owner !== owner) return fail(404, missing, 'no pec found');
    return b;
  }

  private notify(b: Box): Promise<void> {
    const cb = b.callback;
    if (!cb || !isCallback(cb)) return Promise.resolve();
    const p = deliverCallback(cb, { data: this.view(b), success: true, message: '', error: null }, { scope: `POST:${sandboxHost('pec')}/pec`, domain: sandboxHost('pec') }).then(
      () => undefined,
    );
    this.deliveries.add(p);
    void p.finally(() => this.deliveries.delete(p));
    return p;
  }

  /** Provider-side change: new state, timestamps, callback. */
  private async providerMove(b: Box, stato: string): Promise<void> {
    this.touch(b, stato);
    await this.notify(b);
  }

  private arm(b: Box): void {
    this.disarm(b);
    if (this.verifyAfterMs > 0) b.job = this.opts.scheduler.after(this.verifyAfterMs, () => this.verify(b), `pec verify ${String(b.rec.id)}`);
  }

  private disarm(b: Box): void {
    if (b.job !== null) this.opts.scheduler.cancel(b.job);
    b.job = null;
  }

  /** The verification's outcome: `evasa` (usable for a year), or `documenti_errati` when rejected. */
  private async verify(b: Box): Promise<void> {
    this.disarm(b);
    if (b.rec.stato !== 'in_evasione') return;
    if (b.reject) {
      b.reject = false;
      return this.providerMove(b, 'documenti_errati');
    }
    const now = this.now();
    const ts = b.rec.timestamp as Obj;
    ts.evasione = Math.floor(now / 1000);
    const expiry = plusYears(now, 1);
    ts.scadenza = Math.floor(expiry / 1000);
    b.rec.data_attivazione = ddmmyyyy(now);
    b.rec.data_scadenza = ddmmyyyy(expiry);
    await this.providerMove(b, 'evasa');
  }

  // -----------------------------------------------------------------------------------------
  // Control

  /** Completes the verification of one box (or every box waiting); the ids moved. */
  async advance(id?: string): Promise<string[]> {
    const out: string[] = [];
    for (const b of this.boxes.values()) {
      if (b.rec.stato !== 'in_evasione' || (id !== undefined && b.rec.id !== id)) continue;
      await this.verify(b);
      out.push(String(b.rec.id));
    }
    return out;
  }

  /** The next verification of `id` rejects the documents. */
  rejectNext(id: string): boolean {
    const b = this.boxes.get(id);
    if (!b) return false;
    b.reject = true;
    return true;
  }

  /** A provider-side move: `revocata` (not renewed), `chiusa`, `registrazione_annullata`. */
  async move(id: string, stato: 'revocata' | 'chiusa' | 'registrazione_annullata'): Promise<boolean> {
    const b = this.boxes.get(id);
    if (!b) return false;
    this.disarm(b);
    if (stato === 'revocata') (b.rec.timestamp as Obj).revoca = this.nowS();
    await this.providerMove(b, stato);
    return true;
  }

  setVerifyAfterMs(ms: number): void {
    this.verifyAfterMs = ms;
    for (const b of this.boxes.values()) if (b.rec.stato === 'in_evasione') this.arm(b);
  }

  pending(): string[] {
    return [...this.boxes.values()].filter((b) => b.rec.stato === 'in_evasione').map((b) => String(b.rec.id));
  }

  async drain(): Promise<void> {
    while (this.deliveries.size > 0) await Promise.allSettled([...this.deliveries]);
  }

  reset(): void {
    this.close();
    this.boxes.clear();
  }

  close(): void {
    for (const b of this.boxes.values()) this.disarm(b);
  }

  // -----------------------------------------------------------------------------------------
  // Handlers

  private verifica(req: EmuRequest, address: string): EmuResponse {
    const a = address.trim().toLowerCase();
    if (a === '') return fail(428, 207, 'casella_pec required');
    const m = ADDRESS.exec(a);
    // Only the standard family's and the digital domicile's addresses can be checked.
    const checkable = [...PROVIDER_DOMAINS.standard, ...PROVIDER_DOMAINS.DOMICILIODIGITALE];
    if (!m || !checkable.includes(m[2])) return fail(406, 208, 'invalid casella_pec');
    return ok({ available: !this.isTaken(a) });
  }

  private create(req: EmuRequest): EmuResponse {
    const body = bodyOf(req);
    for (const [field, error] of REQUIRED) if (str(body[field]) === undefined) return fail(428, error, `${field} required`);
    const address = str(body.casella_pec)!.toLowerCase();
    const type = vendorBoxType(body.tipo_casella);
    if (!type) return fail(406, 240, `tipo_casella not valid, accepted values: ${[...STANDARD_FAMILY, 'DOMICILIODIGITALE', 'PECMASSIVA'].join('|')}`);
    const m = ADDRESS.exec(address);
    if (!m) return fail(406, 239, 'invalid casella_pec');
    if (!domainsOf(type).includes(m[2])) return fail(404, 326, `the domain ${m[2]} is non-existent in the system or belongs to someone else`);
    const clientType = str(body.tipo_cliente)!.toUpperCase();
    if (!CLIENT_TYPES.includes(clientType)) return fail(406, 241, `tipo_cliente not valid, accepted values: ${CLIENT_TYPES.join('|')}`);
    const birth = str(body.data_nascita_richiedente)!;
    if (!isDdMmYyyy(birth)) return fail(406, 242, 'data_nascita_richiedente not valid, accepted format: dd/mm/yyyy');
    const cf = str(body.codice_fiscale_richiedente)!.toUpperCase();
    if (!isValidFiscalCode(cf)) return fail(406, 243, 'codice_fiscale_richiedente not valid');
    const sex = str(body.sesso_richiedente)!.toUpperCase();
    if (sex !== 'M' && sex !== 'F') return fail(406, 244, 'sesso_richiedente not valid, accepted values: M|F');
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(str(body.email)!)) return fail(406, 245, 'email not valid');
    if (!/^\d{5}$/.test(str(body.cap_titolare)!)) return fail(406, 246, 'cap_titolare not valid');
    if (this.isTaken(address)) return fail(406, 250, `${address} is not available`);
    const cbRead = readCallback(body, { form: 'legacy', retry: 'clamp' });
    if ('error' in cbRead) return cbRead.error;
    const id = hexId();
    const now = this.nowS();
    const [disk, archive] = SIZES[type];
    const text = (k: string): string => str(body[k]) ?? '';
    const rec: Obj = {
      casella_pec: address,
      tipo_casella: type,
      tipo_cliente: clientType,
      sottotipo_cliente: text('sottotipo_cliente'),
      sottotipo_cliente_altro: text('sottotipo_cliente_altro'),
      nome_richiedente: text('nome_richiedente'),
      cognome_richiedente: text('cognome_richiedente'),
      email: text('email'),
      telefono: text('telefono'),
      codice_fiscale_richiedente: cf,
      data_nascita_richiedente: birth,
      sesso_richiedente: sex,
      nazione_nascita_richiedente: text('nazione_nascita_richiedente').toUpperCase(),
      provincia_nascita_richiedente: text('provincia_nascita_richiedente'),
      denominazione_titolare: text('denominazione_titolare'),
      cf_piva_titolare: text('cf_piva_titolare'),
      indirizzo_titolare: text('indirizzo_titolare'),
      comune_titolare: text('comune_titolare'),
      cap_titolare: text('cap_titolare'),
      nazione_titolare: text('nazione_titolare').toUpperCase(),
      provincia_titolare: text('provincia_titolare'),
      callback: cbRead.callback,
      dominio: m[2],
      owner: req.token.owner,
      timestamp: { registrazione: now, ultima_modifica: now },
      cellulare: text('cellulare'),
      comune_nascita_richiedente: text('comune_nascita_richiedente'),
      cod_attivazione: digits(id, 8),
      uid: `MA${digits(`${id}uid`, 6)}`,
      conservazione: false,
      data_scadenza: '',
      descrizione: address,
      sms: false,
      spazio_conservazione: 0,
      spazio_disco: disk,
      spazio_storico: archive,
      stato: 'registrata',
      storico: archive > 0,
      documenti_attivazione: [],
      data_attivazione: '',
      documenti_conservazione: [],
      multiutenza: [],
      id,
      autorinnovo: body.autorinnovo === true || body.autorinnovo === 'true' || body.autorinnovo === 1,
      // The identity document, as the vendor's mailbox record (Casella) carries it; stored as given.
      tipo_documento: text('tipo_documento'),
      numero_documento: text('numero_documento'),
      data_scadenza_documento: text('data_scadenza_documento'),
      documento_rilasciato_da: text('documento_rilasciato_da'),
      data_rilascio_documento: text('data_rilascio_documento'),
    };
    this.boxes.set(id, { rec, owner: req.token.owner, callback: cbRead.callback, job: null, reject: false });
    return ok(structuredClone(rec));
  }

  /** `documenti`: a list of base64 PDFs (or one); DOMICILIODIGITALE and PECMASSIVA take one PDF, the others two. */
  private activate(req: EmuRequest, id: string): EmuResponse {
    const b = this.find(id, req.token.owner, 265, 266);
    if (!('rec' in b)) return b;
    const raw = bodyOf(req).documenti;
    const docs = (Array.isArray(raw) ? raw : raw === undefined || raw === null || raw === '' ? [] : [raw]).filter((d) => d !== '');
    if (docs.length === 0) return fail(428, 268, 'documenti required');
    if (b.rec.stato !== 'registrata' && b.rec.stato !== 'documenti_errati') {
      return fail(428, 267, "you can activate the pec only when it is in the 'registrata|documenti_errati' state");
    }
    if (docs.some((d) => typeof d !== 'string' || decodeBase64Pdf(d) === null)) return fail(406, 296, 'wrong file format, pdf required');
    const single = !isStandardFamily(b.rec.tipo_casella as VendorBoxType);
    if (single ? docs.length !== 1 : docs.length !== 2) {
      return fail(
        406,
        297,
        single ? 'one pdf required: the signed activation form with the identity document' : 'two pdf required: the signed activation form and the identity document',
      );
    }
    b.rec.documenti_attivazione = docs.map((_, i) => `${id}_${i}_attivazione.pdf`);
    this.touch(b, 'in_evasione');
    this.arm(b);
    return ok(this.view(b));
  }

  private revoke(req: EmuRequest, id: string): EmuResponse {
    const b = this.find(id, req.token.owner, 301, 302);
    if (!('rec' in b)) return b;
    if (b.rec.stato === 'revocata') return fail(406, 303, 'your pec has already been revoked');
    if (b.rec.stato !== 'evasa') return fail(428, 304, 'you can revoke the pec only if it is active');
    (b.rec.timestamp as Obj).revoca = this.nowS();
    this.touch(b, 'revocata');
    return ok(this.view(b));
  }

  /** Standard family, `evasa` only: the checks `modifica`, `conservazione` and `trasformazione` share. */
  private changeable(b: Box, notActive: number): EmuResponse | null {
    if (!isStandardFamily(b.rec.tipo_casella as VendorBoxType)) return fail(428, 390, 'this service cannot be activated on these boxes: DOMICILIODIGITALE|PECMASSIVA');
    if (b.rec.stato !== 'evasa') return fail(428, notActive, 'you can change your certified mail only if it has been processed');
    return null;
  }

  /** Sizes in MB: absolute values, or `+N` to add; multiples of 1024; never smaller than now. */
  private modify(req: EmuRequest, id: string): EmuResponse {
    const b = this.find(id, req.token.owner, 265, 266);
    if (!('rec' in b)) return b;
    const refused = this.changeable(b, 281);
    if (refused) return refused;
    const body = bodyOf(req);
    const fields = ['spazio_disco', 'spazio_storico', 'spazio_conservazione'].filter((f) => body[f] !== undefined && body[f] !== null && body[f] !== '');
    if (fields.length === 0) return fail(428, 280, 'spazio_disco, spazio_storico or spazio_conservazione required');
    const next: Record<string, number> = {};
    for (const f of fields) {
      const v = String(body[f]).trim();
      const m = /^(\+)?(\d+)$/.exec(v);
      if (!m) return fail(406, 324, `${f} not valid`);
      const n = Number(m[2]);
      if (n % 1024 !== 0 || n === 0) return fail(406, 325, 'the system only takes into account multiples of 1024');
      const cur = Number(b.rec[f]) || 0;
      const value = m[1] ? cur + n : n;
      if (value < cur) return fail(406, 326, `${f} cannot be reduced`);
      next[f] = value;
    }
    if (next.spazio_conservazione !== undefined && b.rec.conservazione !== true) return fail(428, 282, "you must first activate the 'conservazione' service");
    for (const [f, v] of Object.entries(next)) b.rec[f] = v;
    if ((next.spazio_storico ?? 0) > 0) b.rec.storico = true;
    this.touch(b);
    return ok(this.view(b));
  }

  private preserve(req: EmuRequest, id: string): EmuResponse {
    const b = this.find(id, req.token.owner, 265, 266);
    if (!('rec' in b)) return b;
    const refused = this.changeable(b, 292);
    if (refused) return refused;
    if (b.rec.conservazione === true) return fail(406, 293, 'conservazione service is already active');
    const body = bodyOf(req);
    const raw = body.documenti;
    const docs = Array.isArray(raw) ? raw : raw === undefined || raw === null || raw === '' ? [] : [raw];
    if (docs.length === 0) return fail(428, 294, 'documenti required');
    if (docs.some((d) => typeof d !== 'string' || decodeBase64Pdf(d) === null)) return fail(406, 296, 'wrong file format, pdf required');
    const size = body.spazio_conservazione === undefined ? 512 : Number(body.spazio_conservazione);
    if (!Number.isInteger(size) || size <= 0 || (size !== 512 && size % 1024 !== 0)) return fail(406, 325, 'the system only takes into account multiples of 1024');
    b.rec.conservazione = true;
    b.rec.spazio_conservazione = size;
    b.rec.documenti_conservazione = docs.map((_, i) => `${id}_${i}_conservazione.pdf`);
    this.touch(b);
    return ok(this.view(b));
  }

  private upgrade(req: EmuRequest, id: string): EmuResponse {
    const b = this.find(id, req.token.owner, 265, 266);
    if (!('rec' in b)) return b;
    const target = str(bodyOf(req).tipo_casella)?.toUpperCase();
    if (!target) return fail(428, 271, 'tipo_casella required');
    const refused = this.changeable(b, 272);
    if (refused) return refused.json && (refused.json as Obj).error === 281 ? fail(428, 272, 'you can trasform your certified mail only if it has been processed') : refused;
    const cur = TYPE_RANK[String(b.rec.tipo_casella)] ?? 0;
    const next = TYPE_RANK[target];
    if ((target !== 'SILVER' && target !== 'GOLD') || next === undefined || next <= cur) {
      return fail(406, 276, "a downgrade of the 'tipo_casella' is not allowed; only SILVER or GOLD allowed");
    }
    const [disk, archive] = SIZES[target as VendorBoxType];
    b.rec.tipo_casella = target;
    b.rec.spazio_disco = Math.max(Number(b.rec.spazio_disco) || 0, disk);
    b.rec.spazio_storico = Math.max(Number(b.rec.spazio_storico) || 0, archive);
    b.rec.storico = true;
    this.touch(b);
    return ok(this.view(b));
  }

  /** Renewal for `anni` years (1–5): from the expiry (or today, when past); a revoked box is usable again. Charged per year. */
  private renew(req: EmuRequest, id: string, unitPrice: number): EmuResponse {
    const b = this.find(id, req.token.owner, 201, 202);
    if (!('rec' in b)) return b;
    const anniText = req.query.get('anni') ?? '1';
    const anni = Number(anniText);
    if (!/^\d+$/.test(anniText) || anni < 1 || anni > 5) return fail(406, 204, 'anni not valid, accepted values: 1-5');
    if (b.rec.stato !== 'evasa' && b.rec.stato !== 'revocata') return fail(428, 203, 'you can renew only evaded or revoked pec');
    const ts = b.rec.timestamp as Obj;
    const from = Math.max(this.now(), (Number(ts.scadenza) || 0) * 1000);
    const expiry = plusYears(from, anni);
    ts.scadenza = Math.floor(expiry / 1000);
    b.rec.data_scadenza = ddmmyyyy(expiry);
    if (b.rec.stato === 'revocata') delete ts.revoca;
    this.touch(b, 'evasa');
    return { ...ok(this.view(b)), price: unitPrice * anni };
  }

  private addUser(req: EmuRequest, id: string): EmuResponse {
    const b = this.find(id, req.token.owner, 212, 213);
    if (!('rec' in b)) return b;
    if (!isStandardFamily(b.rec.tipo_casella as VendorBoxType)) return fail(428, 390, 'this service cannot be activated on these boxes: DOMICILIODIGITALE|PECMASSIVA');
    const body = bodyOf(req);
    for (const [f, n] of [
      ['nome', 214],
      ['cognome', 215],
      ['descrizione', 216],
      ['email_gestione_password', 218],
    ] as const)
      if (!str(body[f])) return fail(428, n, `${f} required`);
    const users = b.rec.multiutenza as Obj[];
    if (users.length >= 25) return fail(406, 217, 'maximum number of users reached: 25');
    users.push({
      nome: str(body.nome),
      cognome: str(body.cognome),
      descrizione: str(body.descrizione),
      email_gestione_password: str(body.email_gestione_password),
      id_utenza: `${id}_${users.length}`,
      timestamp: { attivazione: this.nowS() },
      userid: `MA${digits(`${id}u${users.length}`, 6)}`,
    });
    this.touch(b);
    return ok(this.view(b));
  }

  private list(req: EmuRequest): EmuResponse {
    const mine = [...this.boxes.values()].filter((b) => b.owner === req.token.owner);
    if (mine.length === 0) return fail(404, 200, 'no pec linked to this account');
    return ok(mine.map((b) => this.item(b)));
  }

  /** The activation form: a PDF naming the box and its activation code; errors as text/plain. */
  private activationForm(req: EmuRequest, id: string): EmuResponse {
    if (!HEX24.test(id)) return textError(400, 'Invalid id');
    const b = this.boxes.get(id.toLowerCase());
    if (!b || b.owner !== req.token.owner) return textError(404, `no request matches this id: ${id}`);
    if (b.rec.stato === 'registrazione_annullata' || b.rec.stato === 'chiusa') return textError(406, 'you cannot download this module, the registration is no longer active');
    const r = b.rec;
    const pdf = renderPdf('Modulo di attivazione casella PEC', [
      `Casella: ${String(r.casella_pec)} (${String(r.tipo_casella)})`,
      `Codice di attivazione: ${String(r.cod_attivazione)}`,
      `Richiedente: ${String(r.nome_richiedente)} ${String(r.cognome_richiedente)}, C.F. ${String(r.codice_fiscale_richiedente)}`,
      `Titolare: ${String(r.indirizzo_titolare)}, ${String(r.cap_titolare)} ${String(r.comune_titolare)} (${String(r.provincia_titolare)})`,
      '',
      isStandardFamily(r.tipo_casella as VendorBoxType)
        ? 'Firmare il modulo e caricarlo insieme a un documento di identita (due PDF).'
        : 'Firmare il modulo e caricarlo in un unico PDF insieme al documento di identita.',
    ]);
    return pdfAnswer(pdf, `${id}_modulo_attivazione.pdf`);
  }

  private preservationForm(req: EmuRequest, id: string): EmuResponse {
    if (!HEX24.test(id)) return textError(400, 'Invalid id');
    const b = this.boxes.get(id.toLowerCase());
    if (!b || b.owner !== req.token.owner) return textError(404, `no request matches this id: ${id}`);
    if (b.rec.stato !== 'evasa') return textError(406, 'you cannot activate conservation if you do not first activate a pec');
    const pdf = renderPdf('Modulo di conservazione', [`Casella: ${String(b.rec.casella_pec)}`, `Codice: ${String(b.rec.cod_attivazione)}`]);
    return pdfAnswer(pdf, `${id}_modulo_conservazione.pdf`);
  }

  /**
   * The routes. `activationPaths`: where the documents are uploaded (the vendor's `attivazione` and
   * the contract's `activation`, both served).
   */
  routes(prices: { renew: number }): Route[] {
    const id = (p: Record<string, string>): string => p.id ?? '';
    return [
      { method: 'GET', pattern: '/verifica_pec/:pec', handler: (req, p) => this.verifica(req, p.pec ?? '') },
      { method: 'GET', pattern: '/verifica_pec', handler: () => fail(428, 207, 'casella_pec required') },
      { method: 'GET', pattern: '/pec', handler: (req) => this.list(req) },
      { method: 'POST', pattern: '/pec', handler: (req) => this.create(req) },
      {
        method: 'GET',
        pattern: '/pec/:id',
        handler: (req, p) => {
          const b = this.find(id(p), req.token.owner, 201, 202);
          return 'rec' in b ? ok(this.view(b)) : b;
        },
      },
      { method: 'DELETE', pattern: '/pec/:id', handler: (req, p) => this.revoke(req, id(p)) },
      { method: 'PATCH', pattern: '/pec/:id/attivazione', handler: (req, p) => this.activate(req, id(p)) },
      { method: 'PATCH', pattern: '/pec/:id/activation', handler: (req, p) => this.activate(req, id(p)) },
      { method: 'PATCH', pattern: '/pec/:id/modifica', handler: (req, p) => this.modify(req, id(p)) },
      { method: 'PATCH', pattern: '/pec/:id/conservazione', handler: (req, p) => this.preserve(req, id(p)) },
      { method: 'PATCH', pattern: '/pec/:id/trasformazione', handler: (req, p) => this.upgrade(req, id(p)) },
      { method: 'GET', pattern: '/pec/:id/rinnovo', handler: (req, p) => this.renew(req, id(p), prices.renew) },
      { method: 'POST', pattern: '/pec/:id/multiutenza', handler: (req, p) => this.addUser(req, id(p)) },
      { method: 'GET', pattern: '/pec/:id/modulo_attivazione', handler: (req, p) => this.activationForm(req, id(p)) },
      { method: 'GET', pattern: '/pec/:id/modulo_conservazione', handler: (req, p) => this.preservationForm(req, id(p)) },
    ];
  }
}

export { isObj };
