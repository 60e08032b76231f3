/**
 * The emulator's company-register notification of a PEC address (`/comunica_pec`, REFERENCE §7):
 * `codice_in_richiesta` (the register's code is being requested) → `in_attesa_di_documenti` (the
 * delegation form can be downloaded; the signed delegation is awaited) → `documenti_caricati` →
 * `comunicazione_evasa` (notified). The provider's step (the register's code obtained) is a job on
 * the emulator's scheduler (`stepAfterMs`, or the control hook `advance`), delivered to the
 * request's callback; the last step is the caller's.
 *
 * The contract uploads the delegation with `POST /comunica_pec/{id}/procura_registro_imprese` and
 * lists `GET /comunica_pec/{id}` as "send and finalize"; the vendor uploads with
 * `PATCH /comunica_pec/{id}` and reads with the GET. Both uploads are served. The GET answers the
 * request as it stands (the vendor's read) and, on a request whose documents are in
 * (`documenti_caricati`), sends it to the register first (the contract's finalize):
 * `comunicazione_evasa`, answered at once. Nothing finalizes a request
 * by itself: the emulator waits for that GET. Since the same GET is the read, neither source has an
 * error for "finalize before the upload": the GET then just reads (the layer refuses it before
 * calling).
 */
import { isValidFiscalCode, isValidItalianVat } from '../../contract/checksums.ts';
import { deliverCallback, isCallback, readCallback, type StoredCallback } from '../callbacks.ts';
import { fail, hexId, ok, sandboxHost, type EmuRequest, type EmuResponse, type Route } from '../core.ts';
import { renderPdf } from '../pdf.ts';
import type { JobId, Scheduler } from '../scheduler.ts';
import { ADDRESS, isCertifiedDomain } from '../pec-domains.ts';
import { bodyOf, HEX24, pdfAnswer, str, textError } from '../pec-shared.ts';
import type { Obj } from '../../contract/values.ts';

interface Notice {
  rec: Obj;
  owner: string;
  callback: StoredCallback | null;
  job: JobId | null;
}

const ROLES = ['AMMINISTRATORE', 'AMMINISTRATORE_UNICO', 'LEGALE_RAPPRESENTANTE', 'INTERMEDIARIO', 'PRESIDENTE', 'SOCIO', 'TITOLARE'];
const REQUIRED: ReadonlyArray<[string, number]> = [
  ['casella_pec', 335],
  ['cf', 337],
  ['nome', 338],
  ['cognome', 339],
  ['qualifica', 340],
  ['email', 341],
  ['cellulare', 342],
  ['ragione_sociale', 343],
  ['cf_piva', 344],
  ['comune', 345],
  ['provincia', 346],
];

/** The provider's own step of each state (`documenti_caricati` waits for the caller's finalize). */
const NEXT: Record<string, string> = { codice_in_richiesta: 'in_attesa_di_documenti' };

export class Notices {
  private readonly notices = new Map<string, Notice>();
  private readonly deliveries = new Set<Promise<unknown>>();

  constructor(
    private readonly scheduler: Scheduler,
    public stepAfterMs: number,
  ) {}

  private nowS(): number {
    return Math.floor(this.scheduler.now() / 1000);
  }

  private view(n: Notice): Obj {
    return structuredClone(n.rec);
  }

  private arm(n: Notice): void {
    this.disarm(n);
    if (NEXT[String(n.rec.stato)] && this.stepAfterMs > 0) n.job = this.scheduler.after(this.stepAfterMs, () => this.step(n), `comunica_pec ${String(n.rec.id)}`);
  }

  private disarm(n: Notice): void {
    if (n.job !== null) this.scheduler.cancel(n.job);
    n.job = null;
  }

  private async step(n: Notice): Promise<boolean> {
    this.disarm(n);
    const next = NEXT[String(n.rec.stato)];
    if (!next) return false;
    n.rec.stato = next;
    n.rec.timestamp = Math.max(this.nowS(), Number(n.rec.timestamp) + 1);
    if (next === 'in_attesa_di_documenti') n.rec.documenti_registro_imprese = [];
    await this.notify(n);
    return true;
  }

  /** Delivers the request as it stands to its callback, if it has one. */
  private async notify(n: Notice): Promise<void> {
    const cb = n.callback;
    if (cb && isCallback(cb)) {
      const p = deliverCallback(
        cb,
        { data: this.view(n), success: true, message: '', error: null },
        { scope: `POST:${sandboxHost('pec')}/comunica_pec`, domain: sandboxHost('pec') },
      );
      this.deliveries.add(p);
      void p.finally(() => this.deliveries.delete(p));
      await p;
    }
  }

  /**
   * `GET /comunica_pec/{id}`: the request as it stands; one whose documents are in is sent to the
   * register first (`comunicazione_evasa`, in this answer: the caller's own step, like an upload,
   * is not delivered to the callback).
   */
  private readOrFinalize(req: EmuRequest, id: string): EmuResponse {
    const n = this.find(id, req.token.owner, 333, 334);
    if (!('rec' in n)) return n;
    if (n.rec.stato === 'documenti_caricati') {
      this.disarm(n);
      n.rec.stato = 'comunicazione_evasa';
      n.rec.timestamp = Math.max(this.nowS(), Number(n.rec.timestamp) + 1);
    }
    return ok(this.view(n));
  }

  /** Takes one request (or every one) a provider step further; the ids moved. */
  async advance(id?: string): Promise<string[]> {
    const out: string[] = [];
    for (const n of this.notices.values()) {
      if (id !== undefined && n.rec.id !== id) continue;
      if (await this.step(n)) out.push(String(n.rec.id));
    }
    return out;
  }

  setStepAfterMs(ms: number): void {
    this.stepAfterMs = ms;
    for (const n of this.notices.values()) if (NEXT[String(n.rec.stato)]) this.arm(n);
  }

  pending(): string[] {
    return [...this.notices.values()].filter((n) => NEXT[String(n.rec.stato)]).map((n) => String(n.rec.id));
  }

  async drain(): Promise<void> {
    while (this.deliveries.size > 0) await Promise.allSettled([...this.deliveries]);
  }

  reset(): void {
    this.close();
    this.notices.clear();
  }

  close(): void {
    for (const n of this.notices.values()) this.disarm(n);
  }

  private find(id: string, owner: string, wrong: number, missing: number): Notice | EmuResponse {
    if (!HEX24.test(id)) return fail(400, wrong, 'Wrong id');
    const n = this.notices.get(id.toLowerCase());
    if (!n || n.owner !== owner) return fail(404, missing, 'no request found');
    return n;
  }

  private create(req: EmuRequest): EmuResponse {
    const body = bodyOf(req);
    for (const [field, error] of REQUIRED) if (str(body[field]) === undefined) return fail(428, error, `${field} required`);
    const address = str(body.casella_pec)!.toLowerCase();
    const m = ADDRESS.exec(address);
    if (!m || !isCertifiedDomain(m[2])) return fail(406, 336, 'invalid casella_pec');
    const cf = str(body.cf)!.toUpperCase();
    if (!isValidFiscalCode(cf)) return fail(406, 347, 'cf not valid');
    const cfPiva = str(body.cf_piva)!.toUpperCase();
    if (!isValidItalianVat(cfPiva) && !isValidFiscalCode(cfPiva)) return fail(406, 348, 'cf_piva not valid');
    const role = str(body.qualifica)!.toUpperCase();
    if (!ROLES.includes(role)) return fail(406, 349, `qualifica not valid, accepted values: ${ROLES.join('|')}`);
    const cb = readCallback(body, { form: 'legacy', retry: 'clamp' });
    if ('error' in cb) return cb.error;
    const id = hexId();
    const text = (k: string): string => str(body[k]) ?? '';
    const rec: Obj = {
      casella_pec: address,
      cf,
      nome: text('nome'),
      cognome: text('cognome'),
      qualifica: role,
      email: text('email'),
      cellulare: text('cellulare'),
      ragione_sociale: text('ragione_sociale'),
      cf_piva: cfPiva,
      comune: text('comune'),
      provincia: text('provincia').toUpperCase(),
      pec_amministratore: body.pec_amministratore === true || body.pec_amministratore === 'true',
      callback: cb.callback ?? false,
      stato: 'codice_in_richiesta',
      codice_registro_imprese: 'openapi',
      documenti_registro_imprese: [],
      owner: req.token.owner,
      timestamp: this.nowS(),
      id,
    };
    const n: Notice = { rec, owner: req.token.owner, callback: cb.callback, job: null };
    this.notices.set(id, n);
    this.arm(n);
    return ok(this.view(n));
  }

  /** The signed delegation (a p7m or a PDF, base64): only while `in_attesa_di_documenti`. */
  private upload(req: EmuRequest, id: string): EmuResponse {
    const n = this.find(id, req.token.owner, 353, 354);
    if (!('rec' in n)) return n;
    const raw = bodyOf(req).documenti;
    const docs = (Array.isArray(raw) ? raw : raw === undefined || raw === null || raw === '' ? [] : [raw]).filter((d): d is string => typeof d === 'string' && d !== '');
    if (docs.length === 0) return fail(428, 356, 'documenti required');
    if (n.rec.stato !== 'in_attesa_di_documenti') return fail(406, 355, "you can only upload documents when stato is 'in_attesa_di_documenti'");
    if (docs.some((d) => !/^[A-Za-z0-9+/=\s]+$/.test(d.replace(/^data:[^,]*;base64,/i, '')))) return fail(406, 357, 'wrong file format');
    n.rec.documenti_registro_imprese = docs.map((_, i) => `${id}_${i}_registro_imprese.p7m`);
    n.rec.stato = 'documenti_caricati';
    n.rec.timestamp = Math.max(this.nowS(), Number(n.rec.timestamp) + 1);
    this.arm(n);
    return ok(this.view(n));
  }

  private delegationForm(req: EmuRequest, id: string): EmuResponse {
    if (!HEX24.test(id)) return textError(400, 'Invalid id');
    const n = this.notices.get(id.toLowerCase());
    if (!n || n.owner !== req.token.owner) return textError(404, `no request matches this id: ${id}`);
    if (n.rec.stato === 'codice_in_richiesta') return textError(406, "you cannot download this module, it doesn't exist yet");
    const r = n.rec;
    return pdfAnswer(
      renderPdf('Procura speciale - Registro Imprese', [
        `Impresa: ${String(r.ragione_sociale)} (C.F./P.IVA ${String(r.cf_piva)})`,
        `Indirizzo PEC da comunicare: ${String(r.casella_pec)}`,
        `Dichiarante: ${String(r.nome)} ${String(r.cognome)}, ${String(r.qualifica)}, C.F. ${String(r.cf)}`,
        'Firmare digitalmente (CAdES, .p7m) e caricare.',
      ]),
      `${id}_procura_registro_imprese.pdf`,
    );
  }

  routes(): Route[] {
    const id = (p: Record<string, string>): string => p.id ?? '';
    return [
      { method: 'POST', pattern: '/comunica_pec', handler: (req) => this.create(req) },
      {
        method: 'GET',
        pattern: '/comunica_pec',
        handler: (req) => {
          const mine = [...this.notices.values()].filter((n) => n.owner === req.token.owner);
          if (mine.length === 0) return fail(404, 332, 'no request linked to this account');
          return ok(mine.map((n) => ({ id: n.rec.id, casella_pec: n.rec.casella_pec, stato: n.rec.stato, timestamp: n.rec.timestamp, owner: n.rec.owner })));
        },
      },
      {
        method: 'GET',
        pattern: '/comunica_pec/:id',
        handler: (req, p) => this.readOrFinalize(req, id(p)),
      },
      { method: 'PATCH', pattern: '/comunica_pec/:id', handler: (req, p) => this.upload(req, id(p)) },
      { method: 'POST', pattern: '/comunica_pec/:id/procura_registro_imprese', handler: (req, p) => this.upload(req, id(p)) },
      { method: 'GET', pattern: '/comunica_pec/:id/procura_registro_imprese', handler: (req, p) => this.delegationForm(req, id(p)) },
    ];
  }
}
