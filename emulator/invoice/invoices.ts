/**
 * Invoices of the invoicing area (REFERENCE §9): submission of FatturaPA XML (`POST /IT-invoices`,
 * optional custom signature in `X-Signature-User` / `X-Signature-Password`, never kept), the list
 * under the contract's `GET /invoices` and the vendor's `GET /IT-invoices` with their filters, one
 * invoice, its document (`GET /invoices_download/{id}`, XML or PDF by `Accept`), passive invoices
 * arriving for configurations with `supplier_invoice`, and the state machine:
 *
 * - `state` NEW → SENT → DONE | ERROR (RECEIVED for passive ones); `details.sdi_status` BOOKED →
 *   SENT → DELIVERED | NOT_DELIVERED | ERROR, and for the public administration (FPA12) DELIVERED
 *   keeps the invoice SENT until ACCEPTED (DONE), REJECTED (ERROR) or TERMS_EXPIRED (DONE);
 * - each step runs `sentAfterMs` / `outcomeAfterMs` / `paTermsAfterMs` after the previous one on
 *   the emulator's scheduler, or at once through the control API (`advance`);
 * - every change after submission notifies the configuration's `customer-invoice` callbacks
 *   (`supplier-invoice` for passive ones) with `{data: invoice, custom}`.
 *
 * The SDI's refusal is decided from the document (recipient code length for its format, the
 * recipient's Italian VAT checksum, line and VAT-summary totals) and applied when the invoice
 * reaches the SDI: the invoice then ends in ERROR with the SDI's message.
 */
import { cents, companyOf, documentTotalOf, expectedSummaries, readFattura, summaryFor, type FatturaParty, type FatturaSummary } from '../../contract/fatturapa.ts';
import { isValidItalianVat } from '../../contract/checksums.ts';
import { priceOf, subscribedSurchargeOf, surchargeOf } from '../../contract/prices.ts';
import { hexId, ok, type EmuRequest, type EmuResponse, type Route } from '../core.ts';
import { renderPdf } from '../pdf.ts';
import type { Scheduler } from '../scheduler.ts';
import { fiscalIdNotFound, invoiceFail, type Account, type Configuration, type Invoice, type InvoiceState } from './accounts.ts';
import { asText, isObj, type Obj, objects } from '../../contract/values.ts';

/** Every SDI status, and which end the invoice. */
export const SDI_STATUSES = ['BOOKED', 'SENT', 'DELIVERED', 'NOT_DELIVERED', 'RECEIVED', 'ACCEPTED', 'REJECTED', 'TERMS_EXPIRED', 'ERROR'] as const;
export type SdiStatus = (typeof SDI_STATUSES)[number];

export interface InvoiceTiming {
  /** BOOKED → SENT. ≤ 0: only `advance`. */
  sentAfterMs: number;
  /** SENT → delivery outcome. ≤ 0: only `advance`. */
  outcomeAfterMs: number;
  /** A PA invoice DELIVERED → TERMS_EXPIRED without an answer (the vendor: 15 days). ≤ 0: only `advance`. */
  paTermsAfterMs: number;
}

export const DEFAULT_INVOICE_TIMING: InvoiceTiming = { sentAfterMs: 1500, outcomeAfterMs: 1500, paTermsAfterMs: 15 * 24 * 3600 * 1000 };

const CODE_LENGTH = { FPR12: 7, FPA12: 6 } as const;
const WRONG_ID = /^[0-9a-f]{24}$/i;

function partyRecord(p: FatturaParty): Obj {
  return {
    name: p.name,
    vat_id: p.vatNumber,
    tax_code: p.fiscalCode,
    street: p.street,
    city: p.city,
    zip: p.zip,
    province: p.province,
    country_code: p.addressCountry ?? p.country,
    phone: p.phone ?? null,
    email: p.email ?? null,
  };
}

/** Why the SDI refuses this document, or null. */
export function sdiRefusal(s: FatturaSummary): string | null {
  const code = s.recipientCode ?? '';
  if (code.length !== CODE_LENGTH[s.format]) return `00311: CodiceDestinatario ${code || '(none)'} not valid for ${s.format}`;
  if (s.recipient.country === 'IT' && s.recipient.vatNumber !== null && !isValidItalianVat(s.recipient.vatNumber)) return '00305: IdFiscaleIVA of the recipient not valid';
  if (s.sender.country === 'IT' && s.sender.vatNumber !== null && !isValidItalianVat(s.sender.vatNumber)) return '00301: IdFiscaleIVA of the sender not valid';
  const expected = expectedSummaries(s);
  for (const sum of s.vatSummaries) {
    // Lines and pension contributions at the summary's rate, plus its rounding (SDI control 00422).
    const taxable = cents((summaryFor(expected, sum)?.taxable ?? 0) + (sum.rounding ?? 0));
    if (Math.abs(taxable - sum.taxable) > 0.01) return '00422: ImponibileImporto not consistent with the lines';
    if (Math.abs(cents((sum.taxable * sum.vatRate) / 100) - sum.tax) > 0.01) return '00421: Imposta not consistent with ImponibileImporto and AliquotaIVA';
  }
  if (s.total !== null && Math.abs(s.total - documentTotalOf(s)) > 0.01) return '00460: ImportoTotaleDocumento not consistent';
  return null;
}

function invoiceRecord(id: string, s: FatturaSummary, fiscalId: string, direction: 'outgoing' | 'incoming', nowIso: string, signed: boolean): Obj {
  const taxable = cents(s.vatSummaries.reduce((t, r) => t + r.taxable, 0));
  const tax = cents(s.vatSummaries.reduce((t, r) => t + r.tax, 0));
  const total = s.total ?? cents(taxable + tax);
  return {
    id,
    state: direction === 'outgoing' ? 'NEW' : 'RECEIVED',
    direction,
    fiscal_id: fiscalId,
    type: s.documentType,
    document_number: s.number,
    issue_date: s.date,
    currency: s.currency,
    total_gross_amount: total,
    total_amount_excluding_tax: taxable,
    total_tax_amount: tax,
    total_amount_including_tax: cents(taxable + tax),
    total_payable_amount: total,
    invoice_lines: s.lines.map((l) => ({
      line_number: l.number,
      description: l.description,
      quantity: l.quantity,
      unit_price: l.unitPrice,
      total_price: l.totalPrice,
      vat_rate: l.vatRate,
      nature: l.nature,
    })),
    payment_means: null,
    transmission_id: null,
    transmission_format: s.format,
    to_pa: s.format === 'FPA12',
    signed,
    details: {
      sdi_id: direction === 'incoming' ? String(Math.floor(1e9 + Math.random() * 8e9)) : null,
      sdi_filename: null,
      sdi_status: direction === 'outgoing' ? 'BOOKED' : 'RECEIVED',
      sdi_message: null,
      sdi_update_date: nowIso,
      invoice_date: s.date,
    },
    sender: partyRecord(s.sender),
    recipient: partyRecord(s.recipient),
    create_at: nowIso,
    updated_at: nowIso,
  };
}

/** One value of a filter that may be repeated, bracketed (`state[]=`) or comma-separated. */
function multi(q: URLSearchParams, name: string): string[] {
  return [...q.getAll(name), ...q.getAll(`${name}[]`)]
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

export class InvoiceEngine {
  private timingValue: InvoiceTiming;
  private counter = 0;

  constructor(
    private readonly state: InvoiceState,
    private readonly scheduler: Scheduler,
    timing: Partial<InvoiceTiming> = {},
  ) {
    this.timingValue = { ...DEFAULT_INVOICE_TIMING, ...timing };
  }

  get timing(): InvoiceTiming {
    return { ...this.timingValue };
  }

  setTiming(t: Partial<InvoiceTiming>): InvoiceTiming {
    this.timingValue = { ...this.timingValue, ...t };
    return this.timing;
  }

  private nowIso(): string {
    return new Date(this.scheduler.now()).toISOString();
  }

  private configOf(inv: Invoice): Configuration | undefined {
    return this.state.account(inv.owner).configurations.get(String(inv.record.fiscal_id));
  }

  /** Invoices that have a next step (outgoing, not final), by id. */
  pending(): Array<{ id: string; inv: Invoice }> {
    const out: Array<{ id: string; inv: Invoice }> = [];
    for (const [, account] of this.state.allAccounts()) {
      for (const [id, inv] of account.invoices) if (inv.record.direction === 'outgoing' && inv.record.state !== 'DONE' && inv.record.state !== 'ERROR') out.push({ id, inv });
    }
    return out;
  }

  find(id: string): Invoice | undefined {
    for (const [, account] of this.state.allAccounts()) {
      const inv = account.invoices.get(id.toLowerCase());
      if (inv) return inv;
    }
    return undefined;
  }

  private arm(inv: Invoice, delayMs: number): void {
    if (inv.job !== null) this.scheduler.cancel(inv.job);
    inv.job = delayMs > 0 ? this.scheduler.after(delayMs, () => this.step(inv), `invoice step ${String(inv.record.id)}`) : null;
  }

  /** Moves the invoice to `sdiStatus` (and its state), notifies, and arms the next step. */
  private async move(inv: Invoice, sdiStatus: SdiStatus, message: string | null = null): Promise<void> {
    const rec = inv.record;
    const details = { ...(rec.details as Obj) };
    const pa = inv.format === 'FPA12';
    let state = rec.state as string;
    if (sdiStatus === 'SENT') {
      state = 'SENT';
      this.counter++;
      details.sdi_id = String(9_000_000_000 + this.counter * 7919 + Math.floor(this.scheduler.now() % 1000));
      details.sdi_filename = `IT${String((rec.sender as Obj).vat_id ?? rec.fiscal_id)}_${this.counter.toString(36).padStart(5, '0').toUpperCase()}.xml${rec.signed ? '.p7m' : ''}`;
    } else if (sdiStatus === 'DELIVERED') state = pa ? 'SENT' : 'DONE';
    else if (sdiStatus === 'NOT_DELIVERED' || sdiStatus === 'ACCEPTED' || sdiStatus === 'TERMS_EXPIRED') state = 'DONE';
    else if (sdiStatus === 'ERROR' || sdiStatus === 'REJECTED') state = 'ERROR';
    details.sdi_status = sdiStatus;
    details.sdi_message = message;
    details.sdi_update_date = this.nowIso();
    inv.record = { ...rec, state, details, updated_at: this.nowIso() };
    if (inv.job !== null) this.scheduler.cancel(inv.job);
    inv.job = null;
    if (state === 'SENT' && sdiStatus === 'SENT') this.arm(inv, this.timingValue.outcomeAfterMs);
    else if (state === 'SENT' && sdiStatus === 'DELIVERED') this.arm(inv, this.timingValue.paTermsAfterMs);
    await this.state.notify(this.configOf(inv), 'customer-invoice', inv.record);
  }

  /**
   * The invoice's next step: BOOKED → SENT; SENT → the SDI's outcome (`sdiStatus` when given and
   * allowed, else ERROR for a document the SDI refuses, NOT_DELIVERED for code 0000000 without PEC,
   * else DELIVERED); a PA invoice DELIVERED → `sdiStatus` (ACCEPTED, REJECTED) or TERMS_EXPIRED.
   * Returns the new SDI status, or null when the invoice had no next step.
   */
  async step(inv: Invoice, sdiStatus?: SdiStatus, message?: string): Promise<SdiStatus | null> {
    const rec = inv.record;
    const current = (rec.details as Obj).sdi_status as SdiStatus;
    if (rec.direction !== 'outgoing' || rec.state === 'DONE' || rec.state === 'ERROR') return null;
    let next: SdiStatus;
    if (current === 'BOOKED') next = 'SENT';
    else if (current === 'SENT') {
      inv.sdiError ??= this.duplicateRefusal(inv);
      if (sdiStatus === 'ERROR' || sdiStatus === 'NOT_DELIVERED' || sdiStatus === 'DELIVERED') next = sdiStatus;
      else if (inv.sdiError !== null) next = 'ERROR';
      else {
        next = inv.noAddress ? 'NOT_DELIVERED' : 'DELIVERED';
      }
    } else if (current === 'DELIVERED' && inv.format === 'FPA12') {
      next = sdiStatus === 'ACCEPTED' || sdiStatus === 'REJECTED' || sdiStatus === 'TERMS_EXPIRED' ? sdiStatus : 'TERMS_EXPIRED';
    } else return null;
    const msg = message ?? (next === 'ERROR' ? (inv.sdiError ?? 'Scarto: file non conforme') : next === 'REJECTED' ? 'EC02: rifiutata dalla PA' : null);
    await this.move(inv, next, msg);
    return next;
  }

  /**
   * The SDI's duplicate refusal (error 00404 "Fattura duplicata"): an invoice of the same sender
   * (IdFiscaleIVA), the same year of `Data` and the same `Numero` was sent before and not refused.
   * Inferred, not from the vendor's documents (REFERENCE §9–10 say nothing of duplicates): the SDI's
   * own list of checks has 00404 on these fields; the vendor, which answers the submission before
   * the SDI has seen it, is taken to accept and charge the POST, the refusal coming later as the
   * invoice's ERROR with the SDI's message (like every other SDI refusal here). Whether the SDI
   * also compares `TipoDocumento` is not modelled (stricter here).
   */
  private duplicateRefusal(inv: Invoice): string | null {
    const r = inv.record;
    const year = String(r.issue_date).slice(0, 4);
    for (const [, other] of this.state.account(inv.owner).invoices) {
      if (other === inv) return null; // only invoices submitted before this one count
      const o = other.record;
      if (o.direction !== 'outgoing' || o.state === 'ERROR') continue;
      if (o.fiscal_id === r.fiscal_id && o.document_number === r.document_number && String(o.issue_date).slice(0, 4) === year) return '00404: Fattura duplicata';
    }
    return null;
  }

  /** `POST /IT-invoices`. */
  submit(req: EmuRequest): EmuResponse {
    const xml = req.rawBody.toString('utf8');
    const read = readFattura(xml);
    if (!read.ok)
      return read.error === 'structure' ? invoiceFail(400, 400, 'Invalid XML structure') : invoiceFail(422, 422, `Validation Error: Missing required field ${read.field}`);
    const s = read.summary;
    const account = this.state.account(req.token.owner);
    // The company's own configuration: the seller's, or the buyer's on a self-invoice (TD16–TD20).
    const company = companyOf(s);
    const fiscalId = company.vatNumber ?? '';
    const config = account.configurations.get(fiscalId) ?? (company.fiscalCode ? account.configurations.get(company.fiscalCode) : undefined);
    if (!config) return fiscalIdNotFound();
    if (!config.customer_invoice) return invoiceFail(403, 403, 'Unauthorized access');
    const user = header(req, 'x-signature-user');
    const password = header(req, 'x-signature-password');
    if ((user === null) !== (password === null)) return invoiceFail(422, 422, 'Validation Error: X-Signature-User and X-Signature-Password go together');
    const custom = user !== null;
    // Custom signing needs the company's automatic QES activated with that signer (contract rule 3).
    if (custom && account.certificates.get(config.fiscal_id)?.user !== user) return invoiceFail(403, 403, 'Unauthorized access: custom signature not activated for this signer');
    // An active subscription pays the invoice (the server uses one of its requests), not the
    // signature: that is charged to the wallet on top, at its subscription price.
    const subscribed = req.subscribed === true;
    const signaturePrice = custom ? (subscribed ? subscribedSurchargeOf('invoice', 'custom-signature') : surchargeOf('invoice', 'custom-signature')) : 0;
    const price = (subscribed ? 0 : priceOf('invoice', 'POST', '/IT-invoices')) + signaturePrice;
    if (price > req.token.credit + 1e-9) return invoiceFail(402, 610, `Billing error message: Insufficient Credit in Wallet: ${price} > ${req.token.credit} code 810`);
    const id = hexId();
    const record = invoiceRecord(id, s, config.fiscal_id, 'outgoing', this.nowIso(), s.format === 'FPA12' || custom);
    const noAddress = s.recipientCode === '0000000' && !s.recipientPec;
    const inv: Invoice = { record, owner: req.token.owner, xml, format: s.format, sdiError: sdiRefusal(s), noAddress, job: null };
    account.invoices.set(id, inv);
    this.arm(inv, this.timingValue.sentAfterMs);
    return { ...ok(record), price };
  }

  /**
   * `POST /WW-invoices` (contract rule 1): a cross-border B2B invoice from France or Germany, as
   * JSON (`sender {country, fiscal_id, name, …}`, `recipient {country, vat_id, name, …}`,
   * `document_number`, `issue_date`, `currency`, `lines [{description, quantity, unit_price,
   * vat_rate}]`). The sender's country must be FR or DE, the recipient's another country, and the
   * configuration the one of `sender.fiscal_id` in that country. It then moves like an Italian
   * invoice to a private party (NEW → SENT → DONE | ERROR) and notifies `customer-invoice`.
   */
  submitCrossBorder(req: EmuRequest): EmuResponse {
    const b = isObj(req.body) ? req.body : {};
    const sender = isObj(b.sender) ? b.sender : null;
    const recipient = isObj(b.recipient) ? b.recipient : null;
    if (!sender || !recipient) return invoiceFail(422, 422, 'Validation Error: Missing required field sender or recipient');
    const from = asText(sender.country).toUpperCase();
    const to = asText(recipient.country).toUpperCase();
    if (from !== 'FR' && from !== 'DE') return invoiceFail(400, 400, 'sender.country must be FR or DE');
    if (!/^[A-Z]{2}$/.test(to)) return invoiceFail(422, 422, 'Validation Error: Missing required field recipient.country');
    if (to === from) return invoiceFail(400, 400, 'recipient.country equals sender.country: use the domestic invoicing endpoint');
    const fiscalId = asText(sender.fiscal_id).toUpperCase();
    const account = this.state.account(req.token.owner);
    const config = account.configurations.get(fiscalId);
    if (!config || !fiscalId.startsWith(from)) return fiscalIdNotFound();
    if (!config.customer_invoice) return invoiceFail(403, 403, 'Unauthorized access');
    const lines = objects(b.lines);
    if (lines.length === 0 || typeof b.document_number !== 'string' || typeof b.issue_date !== 'string') return invoiceFail(422, 422, 'Validation Error: Missing required field');
    const price = priceOf('invoice', 'POST', '/WW-invoices');
    if (price > req.token.credit + 1e-9) return invoiceFail(402, 610, `Billing error message: Insufficient Credit in Wallet: ${price} > ${req.token.credit} code 810`);
    const invoiceLines = lines.map((l, i) => {
      const quantity = Number(l.quantity ?? 1);
      const unit = Number(l.unit_price);
      return {
        line_number: i + 1,
        description: asText(l.description),
        quantity,
        unit_price: unit,
        total_price: cents(quantity * unit),
        vat_rate: Number(l.vat_rate ?? 0),
        nature: null,
      };
    });
    const taxable = cents(invoiceLines.reduce((t, l) => t + l.total_price, 0));
    const tax = cents(invoiceLines.reduce((t, l) => t + (l.total_price * l.vat_rate) / 100, 0));
    const now = this.nowIso();
    const id = hexId();
    const party = (p: Obj, vat: unknown): Obj => ({
      name: p.name ?? null,
      vat_id: vat ?? null,
      tax_code: null,
      street: p.street ?? null,
      city: p.city ?? null,
      zip: p.zip ?? null,
      province: null,
      country_code: p.country,
      phone: null,
      email: null,
    });
    const record: Obj = {
      id,
      state: 'NEW',
      direction: 'outgoing',
      fiscal_id: config.fiscal_id,
      type: 'INVOICE',
      document_number: b.document_number,
      issue_date: b.issue_date,
      currency: typeof b.currency === 'string' ? b.currency : 'EUR',
      total_gross_amount: cents(taxable + tax),
      total_amount_excluding_tax: taxable,
      total_tax_amount: tax,
      total_amount_including_tax: cents(taxable + tax),
      total_payable_amount: cents(taxable + tax),
      invoice_lines: invoiceLines,
      payment_means: null,
      transmission_id: null,
      transmission_format: 'WW',
      to_pa: false,
      signed: false,
      details: { sdi_id: null, sdi_filename: null, sdi_status: 'BOOKED', sdi_message: null, sdi_update_date: now, invoice_date: b.issue_date },
      sender: party(sender, sender.fiscal_id),
      recipient: party(recipient, recipient.vat_id),
      create_at: now,
      updated_at: now,
    };
    const inv: Invoice = { record, owner: req.token.owner, xml: JSON.stringify(b, null, 2), format: 'FPR12', sdiError: null, noAddress: false, job: null };
    account.invoices.set(id, inv);
    this.arm(inv, this.timingValue.sentAfterMs);
    return { ...ok(record), price };
  }

  /**
   * `POST /certificates/qes-automatic` `{fiscal_id, username, password}`: activates the automatic
   * qualified electronic signature with the company's own certificate (its signer's credentials are
   * checked, never echoed); submissions then carry them in `X-Signature-User` / `X-Signature-Password`.
   */
  activateSignature(req: EmuRequest): EmuResponse {
    const b = isObj(req.body) ? req.body : {};
    const fiscalId = typeof b.fiscal_id === 'string' ? b.fiscal_id : '';
    const user = typeof b.username === 'string' ? b.username.trim() : '';
    const password = typeof b.password === 'string' ? b.password : '';
    if (!fiscalId || !user || !password) return invoiceFail(400, 400, 'Invalid input data: fiscal_id, username and password are required');
    const account = this.state.account(req.token.owner);
    if (!account.configurations.has(fiscalId)) return fiscalIdNotFound();
    const cert = { id: hexId(), user, created_at: this.nowIso() };
    account.certificates.set(fiscalId, cert);
    return ok({ id: cert.id, fiscal_id: fiscalId, type: 'EU-QES_automatic', username: user, active: true, created_at: cert.created_at });
  }

  /**
   * `POST /IT-invoices_import` `{invoice: XML or base64 XML, details?: {sdi_id, sdi_filename,
   * sdi_status (definitive), sdi_message, sdi_update_date, invoice_date}}`: an invoice sent or
   * received through another system. The direction follows the configured fiscal id (sender:
   * outgoing, recipient: incoming); duplicates (the same `sdi_id`, or the same fiscal id, number,
   * date and direction) are refused. Imported invoices are final and notify nothing.
   */
  importInvoice(req: EmuRequest): EmuResponse {
    const b = isObj(req.body) ? req.body : {};
    if (typeof b.invoice !== 'string' || b.invoice.trim() === '') return invoiceFail(400, 400, 'Invalid input data');
    const xml = b.invoice.trim().startsWith('<') ? b.invoice : Buffer.from(b.invoice, 'base64').toString('utf8');
    const read = readFattura(xml);
    if (!read.ok) return invoiceFail(400, 400, 'Invalid input data');
    const details = isObj(b.details) ? b.details : {};
    const status = details.sdi_status === undefined ? 'DELIVERED' : asText(details.sdi_status);
    if (!['DELIVERED', 'ACCEPTED', 'REJECTED', 'TERMS_EXPIRED', 'NOT_DELIVERED'].includes(status))
      return invoiceFail(400, 400, 'Invalid input data: sdi_status must be definitive');
    const s = read.summary;
    const account = this.state.account(req.token.owner);
    const key = (k: string | null): Configuration | undefined => (k ? account.configurations.get(k) : undefined);
    const asSender = key(s.sender.vatNumber) ?? key(s.sender.fiscalCode);
    const asRecipient = key(s.recipient.vatNumber) ?? key(s.recipient.fiscalCode);
    const config = asSender ?? asRecipient;
    if (!config) return fiscalIdNotFound();
    const direction = asSender ? 'outgoing' : 'incoming';
    const sdiId = details.sdi_id === undefined ? null : asText(details.sdi_id);
    for (const inv of account.invoices.values()) {
      const r = inv.record;
      const d = r.details as Obj;
      if ((sdiId !== null && d.sdi_id === sdiId) || (r.fiscal_id === config.fiscal_id && r.document_number === s.number && r.issue_date === s.date && r.direction === direction)) {
        return invoiceFail(400, 400, 'Invalid input data: invoice already imported');
      }
    }
    const id = hexId();
    const record = invoiceRecord(id, s, config.fiscal_id, direction, this.nowIso(), false);
    const state = direction === 'incoming' ? 'RECEIVED' : status === 'REJECTED' ? 'ERROR' : 'DONE';
    record.state = state;
    record.details = {
      ...(record.details as Obj),
      sdi_id: sdiId,
      sdi_filename: typeof details.sdi_filename === 'string' ? details.sdi_filename : null,
      sdi_status: direction === 'incoming' ? 'RECEIVED' : status,
      sdi_message: typeof details.sdi_message === 'string' ? details.sdi_message : null,
      sdi_update_date: typeof details.sdi_update_date === 'string' ? details.sdi_update_date : this.nowIso(),
      invoice_date: typeof details.invoice_date === 'string' ? details.invoice_date : s.date,
    };
    account.invoices.set(id, { record, owner: req.token.owner, xml, format: s.format, sdiError: null, noAddress: false, job: null });
    return { status: 200, json: { data: record, success: true, message: 'Invoice imported', error: null } };
  }

  /**
   * A passive invoice arriving from the SDI for a configured company (control API): stored as
   * `incoming` / RECEIVED and notified to `supplier-invoice`. Null when no configuration of any
   * account receives invoices for the document's recipient.
   */
  async receive(xml: string, owner?: string): Promise<Obj | null> {
    const read = readFattura(xml);
    if (!read.ok) throw new Error(`passive: not a FatturaPA document (${read.error} ${read.field})`);
    const s = read.summary;
    for (const [who, account] of this.state.allAccounts()) {
      if (owner !== undefined && who !== owner) continue;
      const config = [s.recipient.vatNumber, s.recipient.fiscalCode].map((k) => (k ? account.configurations.get(k) : undefined)).find((c) => c !== undefined);
      if (!config || !config.supplier_invoice) continue;
      const id = hexId();
      const record = invoiceRecord(id, s, config.fiscal_id, 'incoming', this.nowIso(), false);
      account.invoices.set(id, { record, owner: who, xml, format: s.format, sdiError: null, noAddress: false, job: null });
      await this.state.notify(config, 'supplier-invoice', record);
      return record;
    }
    return null;
  }

  routes(): Route[] {
    const list = (req: EmuRequest): EmuResponse => this.list(req, req.query);
    return [
      { method: 'POST', pattern: '/IT-invoices', handler: (req) => this.submit(req) },
      { method: 'POST', pattern: '/WW-invoices', handler: (req) => this.submitCrossBorder(req) },
      { method: 'POST', pattern: '/IT-invoices_import', handler: (req) => this.importInvoice(req) },
      { method: 'POST', pattern: '/certificates/qes-automatic', handler: (req) => this.activateSignature(req) },
      { method: 'GET', pattern: '/IT-invoices', handler: list },
      { method: 'GET', pattern: '/invoices', handler: list },
      { method: 'GET', pattern: '/IT-invoices/:id', handler: (req, p) => this.one(req, p.id) },
      { method: 'GET', pattern: '/invoices_download/:id', handler: (req, p) => this.download(req, p.id) },
    ];
  }

  private own(account: Account, id: string): Invoice | undefined {
    return WRONG_ID.test(id) ? account.invoices.get(id.toLowerCase()) : undefined;
  }

  private one(req: EmuRequest, id: string): EmuResponse {
    const inv = this.own(this.state.account(req.token.owner), id);
    return inv ? ok(inv.record) : invoiceFail(404, 404, 'Invoice not found');
  }

  /** The document: the XML as kept (`Accept: application/xml`, the default) or a PDF rendering. */
  private download(req: EmuRequest, id: string): EmuResponse {
    const inv = this.own(this.state.account(req.token.owner), id);
    if (!inv) return invoiceFail(404, 404, 'Invoice not found');
    if (inv.record.transmission_format === 'WW') return invoiceFail(404, 404, 'No FatturaPA document for a cross-border invoice');
    const accept = String(req.headers.accept ?? '');
    if (/application\/pdf/i.test(accept) && !/application\/xml/i.test(accept.split(',')[0] ?? '')) {
      const r = inv.record;
      const lines = [
        `Invoice ${String(r.document_number)} of ${String(r.issue_date)} (${String(r.type)})`,
        `From: ${String((r.sender as Obj).name)} ${asText((r.sender as Obj).vat_id)}`,
        `To: ${String((r.recipient as Obj).name)} ${asText((r.recipient as Obj).vat_id ?? (r.recipient as Obj).tax_code)}`,
        ...((r.invoice_lines as Obj[]) ?? []).map((l) => `${String(l.description)}  x${String(l.quantity)}  ${String(l.total_price)}  VAT ${String(l.vat_rate)}%`),
        `Total: ${String(r.total_gross_amount)} ${String(r.currency)}`,
      ];
      return { status: 200, body: renderPdf('Fattura elettronica', lines), contentType: 'application/pdf' };
    }
    return { status: 200, body: inv.xml, contentType: 'application/xml; charset=utf-8' };
  }

  private list(req: EmuRequest, q: URLSearchParams): EmuResponse {
    const limitText = q.get('limit');
    const skipText = q.get('skip');
    const limit = limitText === null ? 100 : Number(limitText);
    const skip = skipText === null ? 0 : Number(skipText);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) return invoiceFail(400, 400, 'limit must be between 1 and 100');
    if (!Number.isInteger(skip) || skip < 0) return invoiceFail(400, 400, 'skip must be 0 or more');
    const states = multi(q, 'state');
    const directions = multi(q, 'direction');
    const fiscalId = q.get('fiscal_id');
    const number = q.get('document_number');
    const type = q.get('type');
    const on = q.get('issue_date');
    const before = q.get('issue_date[before]');
    const after = q.get('issue_date[after]');
    const all = [...this.state.account(req.token.owner).invoices.values()]
      .map((i) => i.record)
      .filter((r) => states.length === 0 || states.includes(String(r.state)))
      .filter((r) => directions.length === 0 || directions.includes(String(r.direction)))
      .filter((r) => !fiscalId || r.fiscal_id === fiscalId)
      .filter((r) => !number || r.document_number === number)
      .filter((r) => !type || r.type === type)
      .filter((r) => !on || r.issue_date === on)
      .filter((r) => !before || String(r.issue_date) < before)
      .filter((r) => !after || String(r.issue_date) > after)
      .sort((a, b) => String(b.create_at).localeCompare(String(a.create_at)) || String(b.id).localeCompare(String(a.id)));
    return ok(all.slice(skip, skip + limit));
  }
}

function header(req: EmuRequest, name: string): string | null {
  const v = req.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return typeof s === 'string' && s.trim() !== '' ? s : null;
}
