/**
 * Electronic receipts (REFERENCE §9, vendor paths `/IT-receipts`): issue (`POST`), read as JSON or,
 * with the request header `Content-Type: application/pdf`, as a PDF (contract rule 4), list, return
 * items (`PATCH {items}` → a new receipt of type `return` with `parent_receipt_id`) and void
 * (`DELETE` → a new receipt of type `void`, the original `voided`). Status new → submitted → ready,
 * with `retry` (portal unreachable, tried again) and `failed`; each step runs `submitAfterMs` /
 * `readyAfterMs` after the previous one on the emulator's scheduler, or at once through the control
 * API. Receipts cannot reach the revenue agency between 23:55 and 00:00 Italian time: one issued
 * then stays `new`, queued, and is submitted at midnight. Notifications: `receipt` when ready,
 * `receipt-retry`, `receipt-error`, as `{data: {data: receipt, custom}}` (the vendor's example).
 * The vendor's request rules are kept: a complimentary item takes no discount, uncollected amounts
 * of goods or services go with `invoice_issuing` (and it with one of them), `linked_receipt` is at
 * most 50 characters; the answer echoes them with the totals of line discounts and uncollected amounts.
 */
import { hexId, ok, type EmuRequest, type EmuResponse, type Route } from '../core.ts';
import { renderPdf } from '../pdf.ts';
import type { Scheduler } from '../scheduler.ts';
import { fiscalIdNotFound, invoiceFail, type Configuration, type InvoiceState, type Receipt } from './accounts.ts';
import { asText, isObj, type Obj } from '../../contract/values.ts';

export interface ReceiptTiming {
  /** new → submitted. ≤ 0: only `receiptAdvance`. */
  submitAfterMs: number;
  /** submitted → ready. ≤ 0: only `receiptAdvance`. */
  readyAfterMs: number;
}

export const DEFAULT_RECEIPT_TIMING: ReceiptTiming = { submitAfterMs: 1000, readyAfterMs: 1000 };

/** VAT codes of receipt items and their rate (natures are 0 %). */
export const RECEIPT_VAT_CODES: Readonly<Record<string, number>> = { '22': 22, '10': 10, '5': 5, '4': 4, N1: 0, N2: 0, N3: 0, N4: 0, N5: 0, N6: 0 };

const r8 = (n: number): number => Math.round(n * 1e8) / 1e8;
const r2 = (n: number): number => Math.round((n + Number.EPSILON) * 100) / 100;

/** Minutes past midnight in Italy at `ms`. */
export function italianMinutes(ms: number): number {
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Rome', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(new Date(ms));
  const h = Number(parts.find((p) => p.type === 'hour')?.value ?? 0);
  const m = Number(parts.find((p) => p.type === 'minute')?.value ?? 0);
  return h * 60 + m;
}

/** Milliseconds until the next Italian midnight when `ms` falls in the 23:55–00:00 window, else 0. */
export function closedWindowWait(ms: number): number {
  const minutes = italianMinutes(ms);
  if (minutes < 23 * 60 + 55) return 0;
  const secondsInMinute = Math.floor((ms % 60_000) / 1000);
  return ((24 * 60 - minutes) * 60 - secondsInMinute) * 1000 - (ms % 1000);
}

function itemOf(raw: Obj, i: number): Obj | string {
  const quantity = Number(raw.quantity);
  const gross = Number(raw.unit_price);
  const code = asText(raw.vat_rate_code);
  if (!Number.isFinite(quantity) || quantity <= 0) return `items[${i}].quantity`;
  if (typeof raw.description !== 'string' || raw.description.trim() === '') return `items[${i}].description`;
  if (!Number.isFinite(gross) || gross < 0) return `items[${i}].unit_price`;
  if (!(code in RECEIPT_VAT_CODES)) return `items[${i}].vat_rate_code`;
  // The vendor: a discount "cannot be used with 'complimentary'".
  if (raw.complimentary === true && Number(raw.discount ?? 0) > 0) return `items[${i}].discount`;
  const rate = RECEIPT_VAT_CODES[code];
  const discount = Number(raw.discount ?? 0) || 0;
  // A complimentary item is given at its normal price (VAT still applies); the customer pays nothing for it.
  const total = r2(quantity * gross - discount);
  const taxable = r8(total / (1 + rate / 100));
  return {
    id: String(100000 + Math.floor(Math.random() * 900000)),
    quantity,
    description: raw.description,
    gross_price: gross,
    vat_rate: code,
    gross_discount: discount,
    complimentary: raw.complimentary === true,
    unit_price: r8(gross / (1 + rate / 100)),
    return: 0,
    taxable_amount: taxable,
    net_taxable_amount: taxable,
    vat_amount: r8(total - taxable),
    total_amount: total,
    unit_discount: r8(discount / quantity),
    sku: typeof raw.sku === 'string' ? raw.sku : null,
  };
}

export class ReceiptEngine {
  private timingValue: ReceiptTiming;

  constructor(
    private readonly state: InvoiceState,
    private readonly scheduler: Scheduler,
    timing: Partial<ReceiptTiming> = {},
  ) {
    this.timingValue = { ...DEFAULT_RECEIPT_TIMING, ...timing };
  }

  get timing(): ReceiptTiming {
    return { ...this.timingValue };
  }

  setTiming(t: Partial<ReceiptTiming>): ReceiptTiming {
    this.timingValue = { ...this.timingValue, ...t };
    return this.timing;
  }

  private nowIso(): string {
    return new Date(this.scheduler.now()).toISOString();
  }

  find(id: string): Receipt | undefined {
    for (const [, account] of this.state.allAccounts()) {
      const r = account.receipts.get(id.toLowerCase());
      if (r) return r;
    }
    return undefined;
  }

  pending(): Array<{ id: string; receipt: Receipt }> {
    const out: Array<{ id: string; receipt: Receipt }> = [];
    for (const [, account] of this.state.allAccounts())
      for (const [id, receipt] of account.receipts) if (['new', 'retry', 'submitted'].includes(String(receipt.record.status))) out.push({ id, receipt });
    return out;
  }

  private configOf(r: Receipt): Configuration | undefined {
    return this.state.account(r.owner).configurations.get(String(r.record.fiscal_id));
  }

  private arm(r: Receipt, delayMs: number): void {
    if (r.job !== null) this.scheduler.cancel(r.job);
    r.job = delayMs > 0 ? this.scheduler.after(delayMs, () => this.step(r), `receipt step ${String(r.record.id)}`) : null;
  }

  /** Arms the submission: at once after `submitAfterMs`, or at Italian midnight when the window is closed. */
  private armSubmission(r: Receipt): void {
    const wait = closedWindowWait(this.scheduler.now());
    if (wait > 0) {
      if (r.job !== null) this.scheduler.cancel(r.job);
      r.job = this.scheduler.after(wait + Math.max(0, this.timingValue.submitAfterMs), () => this.step(r), `receipt queued ${String(r.record.id)}`);
    } else this.arm(r, this.timingValue.submitAfterMs);
  }

  private async set(r: Receipt, status: string, extra: Obj = {}): Promise<void> {
    r.record = { ...r.record, status, ...extra, update_timestamp: Math.floor(this.scheduler.now() / 1000) };
    const config = this.configOf(r);
    const event = status === 'ready' ? 'receipt' : status === 'retry' ? 'receipt-retry' : status === 'failed' ? 'receipt-error' : null;
    if (event) await this.state.notify(config, event, r.record, true);
  }

  /**
   * The receipt's next step: new|retry → submitted (or `retry` / `failed` when asked); submitted →
   * ready (or `failed`). A receipt queued by the closed window stays `new` until midnight. Returns
   * the new status, or null when there is no next step (or the window is closed).
   */
  async step(r: Receipt, outcome?: 'retry' | 'failed'): Promise<string | null> {
    const status = String(r.record.status);
    if (r.job !== null) this.scheduler.cancel(r.job);
    r.job = null;
    if (status === 'new' || status === 'retry') {
      if (closedWindowWait(this.scheduler.now()) > 0) {
        this.armSubmission(r);
        return null;
      }
      if (outcome === 'retry') {
        await this.set(r, 'retry');
        this.arm(r, this.timingValue.submitAfterMs);
        return 'retry';
      }
      if (outcome === 'failed') {
        await this.set(r, 'failed', { error_code: 'E01', error_message: 'Errore di comunicazione con il portale' });
        return 'failed';
      }
      const account = this.state.account(r.owner);
      const fiscal = String(r.record.fiscal_id);
      const n = (account.receiptNumbers.get(fiscal) ?? 0) + 1;
      account.receiptNumbers.set(fiscal, n);
      const year = new Date(this.scheduler.now()).getUTCFullYear();
      await this.set(r, 'submitted', { document_number: `OPENAPI${year}/0000-${String(4700 + n)}`, document_date: this.nowIso(), transaction_id: String(4700 + n) });
      this.arm(r, this.timingValue.readyAfterMs);
      return 'submitted';
    }
    if (status === 'submitted') {
      if (outcome === 'failed') {
        await this.set(r, 'failed', { error_code: 'E02', error_message: "Scartato dall'Agenzia delle Entrate" });
        return 'failed';
      }
      await this.set(r, 'ready');
      if (r.record.type === 'void' && typeof r.record.parent_receipt_id === 'string') {
        const parent = this.state.account(r.owner).receipts.get(r.record.parent_receipt_id);
        if (parent) await this.set(parent, 'voided');
      }
      return 'ready';
    }
    return null;
  }

  private create(req: EmuRequest, base: Obj, type: 'sale' | 'return' | 'void', parent: string | null): Receipt {
    const now = this.scheduler.now();
    const record: Obj = {
      ...base,
      linked_receipt: base.linked_receipt ?? null,
      lottery_code: base.lottery_code ?? null,
      created_at: new Date(now).toISOString(),
      error_message: null,
      error_code: null,
      document_number: null,
      document_date: null,
      transaction_id: null,
      create_timestamp: Math.floor(now / 1000),
      update_timestamp: Math.floor(now / 1000),
      parent_receipt_id: parent,
      status: 'new',
      type,
      id: hexId(),
    };
    const r: Receipt = { record, owner: req.token.owner, job: null };
    this.state.account(req.token.owner).receipts.set(String(record.id), r);
    this.armSubmission(r);
    return r;
  }

  /**
   * A document's totals: the items' (VAT included, taxable, VAT), their line discounts (gross, and
   * net of VAT as `total_discount`) and the uncollected amounts of goods and services.
   */
  private totals(items: Obj[], uncollected = 0): Obj {
    const total = r2(items.reduce((t, i) => t + Number(i.total_amount), 0));
    const taxable = r8(items.reduce((t, i) => t + Number(i.taxable_amount), 0));
    const gross = (i: Obj): number => Number(i.gross_discount ?? 0);
    const net = (i: Obj): number => gross(i) / (1 + (RECEIPT_VAT_CODES[asText(i.vat_rate)] ?? 0) / 100);
    return {
      total_amount: total,
      total_taxable_amount: taxable,
      total_vat_amount: r8(total - taxable),
      total_discount: r8(items.reduce((t, i) => t + net(i), 0)),
      total_gross_discount: r2(items.reduce((t, i) => t + gross(i), 0)),
      total_uncollected_amount: r2(uncollected),
      deductible_amount: 0,
    };
  }

  /** `POST /IT-receipts`. */
  issue(req: EmuRequest): EmuResponse {
    const b = isObj(req.body) ? req.body : {};
    if (typeof b.fiscal_id !== 'string' || b.fiscal_id === '') return invoiceFail(400, 423, 'Missing fiscal_id');
    const config = this.state.account(req.token.owner).configurations.get(b.fiscal_id);
    if (!config) return fiscalIdNotFound();
    if (!config.receipts || !config.receipts_authentication) return invoiceFail(403, 403, 'Unauthorized access');
    if (!Array.isArray(b.items) || b.items.length === 0) return invoiceFail(400, 424, 'Missing items');
    const items: Obj[] = [];
    for (const [i, raw] of b.items.entries()) {
      const item = isObj(raw) ? itemOf(raw, i) : `items[${i}]`;
      if (typeof item === 'string') return invoiceFail(400, 425, `Invalid ${item}`);
      items.push(item);
    }
    if (typeof b.cash_payment_amount !== 'number') return invoiceFail(400, 426, 'Missing cash_payment_amount');
    // The vendor: uncollected amounts require invoice_issuing, and invoice_issuing one of them.
    const uncollected = Number(b.goods_uncollected_amount ?? 0) + Number(b.services_uncollected_amount ?? 0);
    if (!Number.isFinite(uncollected) || uncollected < 0 || uncollected > 0 !== (b.invoice_issuing === true)) return invoiceFail(400, 425, 'Invalid invoice_issuing');
    if (b.linked_receipt !== undefined && b.linked_receipt !== null && (typeof b.linked_receipt !== 'string' || b.linked_receipt.length > 50)) {
      return invoiceFail(400, 425, 'Invalid linked_receipt');
    }
    const base: Obj = {
      fiscal_id: b.fiscal_id,
      items,
      cash_payment_amount: b.cash_payment_amount,
      invoice_issuing: b.invoice_issuing === true,
      services_uncollected_amount: Number(b.services_uncollected_amount ?? 0),
      goods_uncollected_amount: Number(b.goods_uncollected_amount ?? 0),
      electronic_payment_amount: Number(b.electronic_payment_amount ?? 0),
      ticket_restaurant_payment_amount: Number(b.ticket_restaurant_payment_amount ?? 0),
      ticket_restaurant_quantity: Number(b.ticket_restaurant_quantity ?? 0),
      discount: Number(b.discount ?? 0),
      linked_receipt: typeof b.linked_receipt === 'string' ? b.linked_receipt : null,
      lottery_code: typeof b.lottery_code === 'string' ? b.lottery_code : null,
      tags: Array.isArray(b.tags) ? b.tags.slice(0, 10) : [],
      ...this.totals(items, Number(b.goods_uncollected_amount ?? 0) + Number(b.services_uncollected_amount ?? 0)),
    };
    return ok(this.create(req, base, 'sale', null).record);
  }

  private own(req: EmuRequest, id: string): Receipt | undefined {
    return /^[0-9a-f]{24}$/i.test(id) ? this.state.account(req.token.owner).receipts.get(id.toLowerCase()) : undefined;
  }

  /** `PATCH /IT-receipts/{id}` `{items: [{id, quantity}]}`: returns items of a ready sale. */
  returnItems(req: EmuRequest, id: string): EmuResponse {
    const parent = this.own(req, id);
    if (!parent) return invoiceFail(404, 404, 'Receipt not found');
    if (parent.record.type !== 'sale' || parent.record.status !== 'ready') return invoiceFail(406, 406, `Receipt in status ${String(parent.record.status)} cannot be returned`);
    const b = isObj(req.body) ? req.body : {};
    if (!Array.isArray(b.items) || b.items.length === 0) return invoiceFail(400, 424, 'Missing items');
    const items: Obj[] = [];
    const parentItems = parent.record.items as Obj[];
    for (const [i, raw] of b.items.entries()) {
      const wanted = isObj(raw) ? parentItems.find((p) => p.id === String(raw.id)) : undefined;
      const quantity = isObj(raw) ? Number(raw.quantity) : NaN;
      if (!wanted) return invoiceFail(400, 425, `Invalid items[${i}].id`);
      const left = Number(wanted.quantity) - Number(wanted.return ?? 0);
      if (!Number.isFinite(quantity) || quantity <= 0 || quantity > left) return invoiceFail(400, 425, `Invalid items[${i}].quantity`);
      wanted.return = Number(wanted.return ?? 0) + quantity;
      const share = quantity / Number(wanted.quantity);
      items.push({
        ...wanted,
        quantity,
        return: quantity,
        total_amount: r2(Number(wanted.total_amount) * share),
        gross_discount: r2(Number(wanted.gross_discount ?? 0) * share),
        taxable_amount: r8(Number(wanted.taxable_amount) * share),
        net_taxable_amount: r8(Number(wanted.taxable_amount) * share),
        vat_amount: r8(Number(wanted.vat_amount) * share),
      });
    }
    const totals = this.totals(items);
    const base: Obj = { fiscal_id: parent.record.fiscal_id, items, cash_payment_amount: totals.total_amount, electronic_payment_amount: 0, tags: [], ...totals };
    return ok(this.create(req, base, 'return', String(parent.record.id)).record);
  }

  /** `DELETE /IT-receipts/{id}`: voids a ready sale. */
  void(req: EmuRequest, id: string): EmuResponse {
    const parent = this.own(req, id);
    if (!parent) return invoiceFail(404, 404, 'Receipt not found');
    if (parent.record.type !== 'sale' || parent.record.status !== 'ready') return invoiceFail(406, 406, `Receipt in status ${String(parent.record.status)} cannot be voided`);
    const base: Obj = {
      fiscal_id: parent.record.fiscal_id,
      items: parent.record.items,
      cash_payment_amount: parent.record.total_amount,
      electronic_payment_amount: 0,
      tags: [],
      ...this.totals(parent.record.items as Obj[]),
    };
    return ok(this.create(req, base, 'void', String(parent.record.id)).record);
  }

  private one(req: EmuRequest, id: string): EmuResponse {
    const r = this.own(req, id);
    if (!r) return invoiceFail(404, 404, 'Receipt not found');
    // Contract rule 4: the request's Content-Type chooses the PDF.
    if (/application\/pdf/i.test(String(req.headers['content-type'] ?? ''))) {
      const rec = r.record;
      const lines = [
        `Documento commerciale ${asText(rec.document_number, '(in attesa)')} (${String(rec.type)})`,
        ...(rec.items as Obj[]).map((i) => `${String(i.description)}  x${String(i.quantity)}  ${String(i.total_amount)}  IVA ${String(i.vat_rate)}`),
        `Totale: ${String(rec.total_amount)} EUR`,
      ];
      return { status: 200, body: renderPdf('Documento commerciale', lines), contentType: 'application/pdf' };
    }
    return ok(r.record);
  }

  private list(req: EmuRequest): EmuResponse {
    const q = req.query;
    const status = q.get('status');
    const type = q.get('type');
    const fiscalId = q.get('fiscal_id');
    const parent = q.get('parent_receipt_id');
    const limit = Math.min(100, Math.max(1, Number(q.get('limit') ?? 100) || 100));
    const skip = Math.max(0, Number(q.get('skip') ?? 0) || 0);
    const all = [...this.state.account(req.token.owner).receipts.values()]
      .map((r) => r.record)
      .filter((r) => (!status || r.status === status) && (!type || r.type === type) && (!fiscalId || r.fiscal_id === fiscalId) && (!parent || r.parent_receipt_id === parent))
      .sort((a, b) => Number(b.create_timestamp) - Number(a.create_timestamp) || String(b.id).localeCompare(String(a.id)));
    return ok(all.slice(skip, skip + limit));
  }

  routes(): Route[] {
    return [
      { method: 'POST', pattern: '/IT-receipts', handler: (req) => this.issue(req) },
      { method: 'GET', pattern: '/IT-receipts', handler: (req) => this.list(req) },
      { method: 'GET', pattern: '/IT-receipts/:id', handler: (req, p) => this.one(req, p.id) },
      { method: 'PATCH', pattern: '/IT-receipts/:id', handler: (req, p) => this.returnItems(req, p.id) },
      { method: 'DELETE', pattern: '/IT-receipts/:id', handler: (req, p) => this.void(req, p.id) },
    ];
  }
}
