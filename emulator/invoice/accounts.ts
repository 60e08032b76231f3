/**
 * The invoicing area's state, per account (token owner): company configurations with their
 * notification settings, invoices (active and passive) and receipts; and the delivery of the
 * configuration's notifications (REFERENCE §9: events set per configuration; the vendor's enum
 * spells them with a dash, its examples with an underscore, both are accepted).
 */
import { deliverCallback, type StoredCallback } from '../callbacks.ts';
import type { EmuResponse } from '../core.ts';
import type { Obj } from '../../contract/values.ts';

/** The contract's six notification events, in the enum's (dash) spelling. */
export const EVENTS = ['receipt', 'receipt-credentials', 'receipt-retry', 'receipt-error', 'customer-invoice', 'supplier-invoice'] as const;
export type InvoiceEvent = (typeof EVENTS)[number];

/** An event name in either spelling (`customer_invoice`, `customer-invoice`), or null. */
export function eventOf(name: unknown): InvoiceEvent | null {
  if (typeof name !== 'string') return null;
  const n = name.trim().toLowerCase().replace(/_/g, '-');
  return (EVENTS as readonly string[]).includes(n) ? (n as InvoiceEvent) : null;
}

export interface ApiConfiguration {
  /** As the client spelled it (echoed so). */
  event: string;
  callback: StoredCallback;
}

export interface Configuration {
  id: string;
  fiscal_id: string;
  name: string;
  email: string;
  receipts: boolean;
  customer_invoice: boolean;
  supplier_invoice: boolean;
  /** Kept server side; only the tax code is ever shown. */
  receipts_authentication: { taxCode: string; password: string; pin: string } | null;
  api_configurations: ApiConfiguration[];
  active: boolean;
  create_timestamp: number;
}

export interface Invoice {
  record: Obj;
  owner: string;
  /** The document as submitted (outgoing) or received (incoming). */
  xml: string;
  format: 'FPR12' | 'FPA12';
  /** Why the SDI will refuse it, if it will (decided at submission, applied when it reaches the SDI). */
  sdiError: string | null;
  /** Recipient code 0000000 and no PEC: the SDI cannot deliver (NOT_DELIVERED, the tax portal has it). */
  noAddress: boolean;
  /** The next step's job on the scheduler. */
  job: number | null;
}

export interface Receipt {
  record: Obj;
  owner: string;
  job: number | null;
}

export class Account {
  readonly configurations = new Map<string, Configuration>();
  readonly invoices = new Map<string, Invoice>();
  readonly receipts = new Map<string, Receipt>();
  /** Custom qualified signatures activated (`POST /certificates/qes-automatic`), by fiscal id: the signer's user. */
  readonly certificates = new Map<string, { id: string; user: string; created_at: string }>();
  /** Last progressive number of a receipt, per fiscal id. */
  readonly receiptNumbers = new Map<string, number>();
}

/** The vendor's invoicing error envelope: `data` is the string `"null"`; some refusals say `success: true`. */
export const invoiceFail = (status: number, error: number, message: string, success = false): EmuResponse => ({
  status,
  json: { data: 'null', success, message, error },
});

/** `Fiscal ID not found or not registered` (404, error 111, `success: true` as the vendor sends it). */
export const fiscalIdNotFound = (): EmuResponse => invoiceFail(404, 111, 'Fiscal ID not found or not registered', true);

/** A configuration as the API shows it (no receipt password or PIN). */
export function showConfiguration(c: Configuration): Obj {
  return {
    fiscal_id: c.fiscal_id,
    name: c.name,
    email: c.email,
    receipts_authentication: c.receipts_authentication ? { taxCode: c.receipts_authentication.taxCode } : null,
    api_configurations: c.api_configurations.map((a) => ({ event: a.event, callback: { ...a.callback } })),
    receipts: c.receipts,
    customer_invoice: c.customer_invoice,
    supplier_invoice: c.supplier_invoice,
    active: c.active,
    create_timestamp: c.create_timestamp,
    id: c.id,
  };
}

/** The accounts by owner, and notification delivery. */
export class InvoiceState {
  private readonly accounts = new Map<string, Account>();
  private readonly deliveries = new Set<Promise<unknown>>();

  account(owner: string): Account {
    let a = this.accounts.get(owner);
    if (!a) {
      a = new Account();
      this.accounts.set(owner, a);
    }
    return a;
  }

  *allAccounts(): Iterable<[string, Account]> {
    yield* this.accounts;
  }

  reset(): void {
    this.accounts.clear();
  }

  /**
   * Delivers `data` to every callback of the configuration registered for `event` (either
   * spelling), as `{data, custom}` (REFERENCE §1.4, invoice callbacks; receipts nested as
   * `{data: {data, custom}}`). Returns when delivered.
   */
  notify(config: Configuration | undefined, event: InvoiceEvent, data: Obj, nested = false): Promise<void> {
    if (!config || !config.active) return Promise.resolve();
    const targets = config.api_configurations.filter((a) => eventOf(a.event) === event);
    // Receipts come nested one level deeper (the vendor's example: `{"data":{"data":{…},"custom":null}}`).
    const payload = (custom: unknown): Obj => (nested ? { data: { data, custom } } : { data, custom });
    const p = Promise.all(targets.map((t) => deliverCallback(t.callback, payload(t.callback.custom ?? null)))).then(() => undefined);
    this.deliveries.add(p);
    void p.finally(() => this.deliveries.delete(p));
    return p;
  }

  /** Waits for every delivery under way. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.deliveries]);
  }
}
