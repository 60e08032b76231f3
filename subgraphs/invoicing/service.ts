/**
 * The invoicing area's work: the kit's service (`runtime/tracking/service.ts`) over the invoice
 * family and the invoicing state policy, plus what is the area's own: company configurations (with
 * the layer's one signed callback per configuration, registered upstream for the chosen events),
 * and invoice submission as FatturaPA XML (paid, under an idempotency key, custom signature
 * credentials in the submission's headers only). Settings: `INVOICING_*` of the env given.
 */
import { createHash, createHmac } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GraphQLError } from 'graphql';
import { isBuyerIssued } from '../../contract/fatturapa.ts';
import { INVOICE_CONFIGURATIONS_INCLUDED, priceOf, subscribedSurchargeOf, surchargeOf } from '../../contract/prices.ts';
import type { SubgraphContext } from '../runtime/context.ts';
import { badUserInput } from '../runtime/errors.ts';
import { fingerprintOf, requestTopicOf, tenantTopicOf, TrackingService, type CreateSend, type TrackingServiceOptions } from '../runtime/tracking/service.ts';
import { MemoryPollBook, type PollBook } from '../runtime/tracking/poller.ts';
import { BodyTooLarge, callbackPurpose, isDefiniteRefusal, readBody, refuse, relay, safeDecode } from '../runtime/tracking/ingress.ts';
import { refuseTooLarge, sendJson } from '../../platform/http.ts';
import type { RelayTarget, TrackedRequest } from '../runtime/tracking/store.ts';
import { layerSecret } from '../../platform/signing.ts';
import { CostMeter } from '../upstream/cost.ts';
import { UpstreamError } from '../upstream/errors.ts';
import { INVOICING_AREA, secondsOf } from './policy.ts';
import { INVOICING, type InvoicingFamily, type InvoicingKind } from './upstream.ts';
import { log } from '../../platform/log.ts';
import { asText, isObj, type Obj, objects } from '../../contract/values.ts';

export type InvoicingServiceOptions = TrackingServiceOptions<InvoicingFamily>;
export type TrackedInvoice = TrackedRequest<InvoicingFamily>;

/** The contract's six events, in the vendor's enum spelling, by GraphQL name. */
export const EVENT_NAMES = {
  RECEIPT: 'receipt',
  RECEIPT_CREDENTIALS: 'receipt-credentials',
  RECEIPT_RETRY: 'receipt-retry',
  RECEIPT_ERROR: 'receipt-error',
  CUSTOMER_INVOICE: 'customer-invoice',
  SUPPLIER_INVOICE: 'supplier-invoice',
} as const;
export type InvoicingEventName = keyof typeof EVENT_NAMES;

/** An event as the service spells it (dash or underscore) → its GraphQL name, or null. */
export function eventName(upstream: unknown): InvoicingEventName | null {
  if (typeof upstream !== 'string') return null;
  const n = upstream.trim().toLowerCase().replace(/_/g, '-');
  const hit = (Object.entries(EVENT_NAMES) as Array<[InvoicingEventName, string]>).find(([, v]) => v === n);
  return hit ? hit[0] : null;
}

/** Events whose deliveries name an invoice (re-read through the invoice family). */
const INVOICE_EVENTS: readonly InvoicingEventName[] = ['CUSTOMER_INVOICE', 'SUPPLIER_INVOICE'];
/** Events whose deliveries name a receipt (re-read through the receipt family). */
const RECEIPT_EVENTS: readonly InvoicingEventName[] = ['RECEIPT', 'RECEIPT_RETRY', 'RECEIPT_ERROR'];
/** Events whose deliveries carry the configuration (its receipt credentials changed): re-read as a configuration. */
const CREDENTIAL_EVENTS: readonly InvoicingEventName[] = ['RECEIPT_CREDENTIALS'];
/**
 * How long the same credentials delivery again is its retry, not a new change (seconds): longer
 * than the vendor's five retries of one delivery take, far shorter than credentials are renewed.
 */
const CREDENTIALS_RETRY_WINDOW_S = 120;
/** Suffix of the configuration name of a credentials callback's reservation. */
const CREDENTIALS_CONFIG = '#credentials';

/**
 * A configuration as the layer relays it: no receipt password or PIN (only the tax code), no
 * registered callbacks (the layer's signed URLs and other tokens' targets).
 */
export function shownConfiguration(c: Obj): Obj {
  const rest = { ...c };
  delete rest.api_configurations;
  const auth = c.receipts_authentication;
  return { ...rest, receipts_authentication: isObj(auth) && typeof auth.taxCode === 'string' ? { taxCode: auth.taxCode } : null };
}

export interface ConfigurationOrder {
  fiscalId: string;
  name: string;
  email: string;
  customerInvoices: boolean;
  supplierInvoices: boolean;
  receipts: boolean;
  credentials: { taxCode: string; password: string; pin: string } | null;
  events: InvoicingEventName[];
  relay: RelayTarget | null;
}

export interface ConfigurationChange {
  fiscalId: string;
  receipts?: boolean;
  credentials?: { taxCode: string; password: string; pin: string };
  events?: InvoicingEventName[];
  relay?: RelayTarget | null;
}

/** Custom signature credentials of one submission: only ever in its headers. */
export interface SignatureCredentials {
  user: string;
  password: string;
}

/** What identifies an invoice in law: its sender (the configuration's fiscal id), number and date. */
export interface InvoiceIdentity {
  /** The sender's fiscal id as the service files it (the configuration's: VAT number without country, else fiscal code). */
  fiscalId: string;
  number: string;
  /** `YYYY-MM-DD`. */
  date: string;
  /** `TipoDocumento`: a self-invoice's (TD16–TD20) numbering is the company's own series of them. */
  documentType?: string;
}

/** Requests created this long before an unanswered submission still count as it (clock skew, seconds). */
const FIND_CLOCK_SKEW_S = 300;

/**
 * The default idempotency key of an invoice: its legal identity, the sender, the year and the number
 * (the SDI refuses a second invoice of the same sender, number and year, error 00404), hashed into
 * the key's alphabet; for a self-invoice (TD16–TD20, keyed by the company as buyer) the document
 * type too, so it never meets the company's own TD01 of the same number. The tenant is part of
 * every key already.
 */
export function invoiceKeyOf(doc: InvoiceIdentity): string {
  const type = doc.documentType !== undefined && isBuyerIssued(doc.documentType) ? `\u0000${doc.documentType}` : '';
  const h = createHash('sha256')
    .update(`${doc.fiscalId.toUpperCase()}\u0000${doc.date.slice(0, 4)}\u0000${doc.number}${type}`)
    .digest('base64url')
    .slice(0, 32);
  return `invoice:${doc.date.slice(0, 4)}:${h}`;
}

/**
 * How long a receipt issued without the till's idempotency key is keyed by its content (ms): a
 * retry within it (a lost answer, a double click) returns the first receipt; an identical sale
 * after it is another sale (two coffees an hour apart are two receipts).
 */
export const RECEIPT_RETRY_WINDOW_MS = 10 * 60 * 1000;

/**
 * The content keys of a receipt at `now`: its fiscal content (the configuration's fiscal id, the
 * items, payments, lottery code and tags of the upstream body), hashed like the kit's fingerprints,
 * in the retry window `now` falls in (`current`) and the one before (`previous`). The tenant is
 * part of every key already.
 */
export function receiptKeysOf(body: Obj, now: number): { current: string; previous: string } {
  const fp = fingerprintOf('RECEIPT', body).slice(0, 32);
  const w = Math.floor(now / RECEIPT_RETRY_WINDOW_MS);
  return { current: `receipt:${fp}:${w}`, previous: `receipt:${fp}:${w - 1}` };
}

/**
 * The key a receipt without the till's key is issued under: the previous window's while the order
 * made under it started less than `RECEIPT_RETRY_WINDOW_MS` ago, else the current window's (whose
 * orders all started less than that ago). So an identical receipt is one receipt for exactly the
 * window after the first order, never longer.
 */
export function receiptKeyAt(keys: { current: string; previous: string }, previousStartedAt: number | null, now: number): string {
  return previousStartedAt !== null && now - previousStartedAt < RECEIPT_RETRY_WINDOW_MS ? keys.previous : keys.current;
}

/**
 * The default idempotency key of a return: the sale and the items returned (ids and quantities,
 * in any order), hashed like the kit's fingerprints. Returning the same items of a sale again within
 * the key's 24 hours needs the till's own idempotencyKey.
 */
export function returnKeyOf(saleId: string, items: readonly Obj[]): string {
  return `return:${saleId}:${fingerprintOf('RECEIPT', { items: returnedItems(items) }).slice(0, 32)}`;
}

/** The items of a return as its fingerprint reads them: (id, quantity) pairs by id. */
const returnedItems = (items: readonly Obj[]): Array<[string, number]> =>
  items.map((i): [string, number] => [String(i.id), Number(i.quantity)]).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * A listed receipt is the sale `body` ordered: same items (description, quantity, gross unit price,
 * discount, VAT code, complimentary), payments, uncollected amounts, invoice issuing, receipt
 * discount, linked document, lottery code and tags.
 */
function sameSale(r: Obj, body: Obj): boolean {
  const num = (v: unknown): number => Math.round(Number(v ?? 0) * 100);
  // The service answers the gross unit price as `gross_price` (its `unit_price` is net of VAT), the code as `vat_rate`.
  const items = (v: unknown, listed: boolean): string =>
    JSON.stringify(
      objects(v).map((i) => [
        asText(i.description),
        Number(i.quantity ?? 1),
        num(listed ? (i.gross_price ?? i.unit_price) : i.unit_price),
        num(listed ? i.gross_discount : i.discount),
        asText(listed ? i.vat_rate : i.vat_rate_code).toUpperCase(),
        i.complimentary === true,
      ]),
    );
  const tags = (v: unknown): string => JSON.stringify(Array.isArray(v) ? v.map(String) : []);
  return (
    asText(r.fiscal_id).toUpperCase() === asText(body.fiscal_id).toUpperCase() &&
    (r.type === undefined || r.type === 'sale') &&
    items(r.items, true) === items(body.items, false) &&
    num(r.cash_payment_amount) === num(body.cash_payment_amount) &&
    num(r.electronic_payment_amount) === num(body.electronic_payment_amount) &&
    num(r.ticket_restaurant_payment_amount) === num(body.ticket_restaurant_payment_amount) &&
    num(r.goods_uncollected_amount) === num(body.goods_uncollected_amount) &&
    num(r.services_uncollected_amount) === num(body.services_uncollected_amount) &&
    num(r.discount) === num(body.discount) &&
    (r.invoice_issuing === true) === (body.invoice_issuing === true) &&
    (asText(r.linked_receipt) || null) === (body.linked_receipt ?? null) &&
    (r.lottery_code ?? null) === (body.lottery_code ?? null) &&
    tags(r.tags) === tags(body.tags)
  );
}

/** Topic of one invoice's changes. */
export const invoiceTopic = (tenant: string, id: string): string => requestTopicOf(INVOICING_AREA.name, tenant, id);
/** Topic of every change of a tenant's invoices. */
export const tenantTopic = (tenant: string): string => tenantTopicOf(INVOICING_AREA.name, tenant);
/**
 * Topic of the receipt-credentials changes of a tenant's configurations: one topic of its own
 * (never the tenant's topic, so receipt and invoice subscribers never see a configuration), each
 * event a configuration as `credentialsChange` carries it, its fiscal id as the event's id.
 */
export const credentialsTopic = (tenant: string): string => requestTopicOf(INVOICING_AREA.name, tenant, 'receipt-credentials');

/**
 * A credentials change as the bus carries it: the configuration without password or PIN
 * (`shownConfiguration`) and with its events only (no callback addresses), in the kit's event shape,
 * its fiscal id as id and the local time of the change as version.
 */
export function credentialsChange(tenant: string, config: Obj, now: number): TrackedInvoice {
  const events = (Array.isArray(config.api_configurations) ? config.api_configurations : []).filter(isObj).map((a) => ({ event: a.event }));
  return {
    tenant,
    family: 'RECEIPT',
    id: asText(config.fiscal_id).toUpperCase(),
    record: { ...shownConfiguration(config), api_configurations: events },
    rawState: null,
    createdAt: secondsOf(config.create_timestamp),
    updatedAt: Math.floor(now / 1000),
    seq: now,
    changedAt: now,
    checkedAt: now,
    relay: null,
  };
}

/** One period of a lease the layer holds while it works (renewed every third of it while the work runs, ms). */
const LEASE_MS = 30_000;
/** How often a replica waiting for that lease asks again (ms). */
const LEASE_RETRY_MS = 50;

/**
 * The place (0-based) of `fiscalId`'s configuration among the account's in order of creation
 * (`create_timestamp`, the service's list order among equals), or null when not listed.
 */
export function placeOf(list: readonly Obj[], fiscalId: string): number | null {
  const ordered = list
    .map((c, i) => ({ c, i, at: secondsOf(c.create_timestamp) ?? Number.MAX_SAFE_INTEGER }))
    .sort((a, b) => a.at - b.at || a.i - b.i)
    .map((x) => asText(x.c.fiscal_id).toUpperCase());
  const i = ordered.indexOf(fiscalId.toUpperCase());
  return i < 0 ? null : i;
}

export class InvoicingService extends TrackingService<InvoicingFamily, InvoicingKind> {
  /** The kit's leases (memory: one process; Redis: every replica sharing it). */
  private readonly book: PollBook;

  constructor(opts: InvoicingServiceOptions = {}) {
    super(INVOICING_AREA, opts);
    this.book = opts.pollBook ?? new MemoryPollBook();
  }

  /** The account's configurations (free). */
  async configurations(ctx: SubgraphContext): Promise<Obj[]> {
    try {
      const list = await ctx.upstream.call<unknown>(ctx, INVOICING.configurationList);
      return objects(list);
    } catch (err) {
      if (err instanceof UpstreamError && err.graphqlCode === 'UPSTREAM_NOT_FOUND') return [];
      throw err;
    }
  }

  /** The configuration of one fiscal id, or null (free). */
  async configuration(ctx: SubgraphContext, fiscalId: string): Promise<Obj | null> {
    try {
      const c = await ctx.upstream.call<unknown>(ctx, INVOICING.configurationGet, { params: { fiscalId } });
      return isObj(c) ? c : null;
    } catch (err) {
      if (err instanceof UpstreamError && err.graphqlCode === 'UPSTREAM_NOT_FOUND') return null;
      throw err;
    }
  }

  /**
   * The `api_configurations` the layer registers for `events`: its own signed callback (one per
   * configuration) for the invoice events; none when the layer has no public URL.
   */
  private async apiConfigurations(ctx: SubgraphContext, fiscalId: string, events: readonly InvoicingEventName[], relay: RelayTarget | null): Promise<Obj[]> {
    const out: Obj[] = [];
    // One signed callback per configuration and kind of record: every delivery is re-read through
    // its family; a credentials change (the configuration itself) by `credentialsDelivery`.
    for (const [family, config, kinds] of [
      ['INVOICE', fiscalId, INVOICE_EVENTS],
      ['RECEIPT', `${fiscalId}#receipts`, RECEIPT_EVENTS],
      ['RECEIPT', `${fiscalId}${CREDENTIALS_CONFIG}`, CREDENTIAL_EVENTS],
    ] as const) {
      const wanted = events.filter((e) => kinds.includes(e));
      if (wanted.length === 0) continue;
      const url = await this.configCallback(ctx, family, config, relay);
      if (url === null) continue;
      for (const e of wanted) out.push({ event: EVENT_NAMES[e], callback: { url, method: 'JSON', field: 'data', headers: {}, retry: 5 } });
    }
    return out;
  }

  /**
   * Creates a configuration: free for the account's first ten, each further one charged €1. The
   * count is the ACCOUNT's, which other tokens of it (other tenants, outside this tenant's lease)
   * may raise at the same moment, so the price is settled by position: at nine or more existing the
   * creation is reserved at €1 (never under-reported), and below ten the account's list is read
   * again after it (free) and the price settled to what the service charged by its place among
   * them. A tenant's creations run one at a time: chained in this process, and under the kit's
   * lease (`PollBook.lease`, in Redis with `REDIS_URL`) across replicas.
   */
  configure(ctx: SubgraphContext, order: ConfigurationOrder): Promise<Obj> {
    return this.oneAtATime(`configure:${ctx.auth.tenant}`, 'another configuration of this account is being created', () => this.configureNow(ctx, order));
  }

  /**
   * Runs `work` alone for `key`: after the work of the same key already queued in this process,
   * then under the kit's lease on it (`leased`) across replicas.
   */
  private oneAtATime<T>(key: string, holder: string, work: () => Promise<T>): Promise<T> {
    const before = this.queued.get(key) ?? Promise.resolve();
    const mine = before.catch(() => undefined).then(() => this.leased(key, holder, work));
    const tail = mine.catch(() => undefined);
    this.queued.set(key, tail);
    void tail.then(() => {
      if (this.queued.get(key) === tail) this.queued.delete(key);
    });
    return mine;
  }

  /** Work run one at a time in this process (configuration creations of a tenant, updates of a configuration), by key. */
  private readonly queued = new Map<string, Promise<unknown>>();

  /**
   * Runs `work` holding the kit's lease on `key` (one holder in all replicas sharing the book),
   * renewed while the work runs (however long its upstream calls take); waits for it while another
   * replica holds it, at most one lease period and a little more (a holder that died lets it lapse
   * by then); past that, refused before any call with `BUSY` (what holds it, when to retry).
   */
  private async leased<T>(key: string, holder: string, work: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + LEASE_MS + 5_000;
    while (!(await this.book.lease(key, LEASE_MS))) {
      if (Date.now() > deadline) {
        throw new GraphQLError(`${holder}; try again in a few seconds`, { extensions: { code: 'BUSY', retryAfter: 5 } });
      }
      await new Promise((r) => setTimeout(r, LEASE_RETRY_MS));
    }
    const renewal = setInterval(() => void this.book.renew?.(key, LEASE_MS).catch(() => undefined), LEASE_MS / 3);
    try {
      return await work();
    } finally {
      clearInterval(renewal);
      await this.book.release(key);
    }
  }

  private async configureNow(ctx: SubgraphContext, order: ConfigurationOrder): Promise<Obj> {
    const existing = await this.configurations(ctx);
    const extra = surchargeOf('invoice', 'extra-configuration');
    const free = priceOf('invoice', 'POST', INVOICING.configurationCreate.path);
    // At nine, another token of the account may be creating the tenth right now: reserve the €1.
    const price = existing.length >= INVOICE_CONFIGURATIONS_INCLUDED - 1 ? extra : free;
    const body: Obj = {
      fiscal_id: order.fiscalId,
      name: order.name,
      email: order.email,
      customer_invoice: order.customerInvoices,
      supplier_invoice: order.supplierInvoices,
      receipts: order.receipts,
      api_configurations: await this.apiConfigurations(ctx, order.fiscalId, order.events, order.relay),
    };
    if (order.credentials) body.receipts_authentication = order.credentials;
    const rec = await ctx.upstream.call<unknown>(ctx, INVOICING.configurationCreate, { body, price });
    if (!isObj(rec)) throw new UpstreamError('decode', 'the answer carries no configuration', 'invoice', 'api_configurations', 200);
    if (existing.length < INVOICE_CONFIGURATIONS_INCLUDED) {
      const place = placeOf(await this.configurations(ctx), order.fiscalId);
      // Not listed (yet): the price by count stands.
      if (place !== null) await ctx.meter.settle(INVOICING.configurationCreate.path, place >= INVOICE_CONFIGURATIONS_INCLUDED ? extra : free);
    }
    return rec;
  }

  /**
   * Updates receipts, credentials, events or the relay of a configuration (free). The configuration
   * is the account's, shared by every token of it: the events chosen here are this tenant's
   * targets, merged with what else is registered on it (read first, free: other tenants' layer
   * callbacks, the account's own targets), so one token's update never silences another's
   * notifications; one update of a configuration at a time, across replicas.
   */
  update(ctx: SubgraphContext, change: ConfigurationChange): Promise<Obj> {
    // The read and the PATCH of the callbacks under one lease per configuration: two tokens
    // updating at once would each write back what it read, silencing the other's targets.
    return this.oneAtATime(`configuration:${change.fiscalId.toUpperCase()}`, `configuration ${change.fiscalId} is being updated by another request`, () =>
      this.updateNow(ctx, change),
    );
  }

  private async updateNow(ctx: SubgraphContext, change: ConfigurationChange): Promise<Obj> {
    const body: Obj = { fiscal_id: change.fiscalId };
    if (change.receipts !== undefined) body.receipts = change.receipts;
    if (change.credentials !== undefined) body.receipts_authentication = change.credentials;
    if (change.events !== undefined || change.relay !== undefined) {
      const now = await this.configuration(ctx, change.fiscalId);
      const registered = (Array.isArray(now?.api_configurations) ? now.api_configurations : []).filter(isObj);
      const { mine, others } = await this.targetsOf(ctx, change.fiscalId, registered);
      // Without new events: this tenant's own, else (none registered by it yet) the configuration's.
      const events = change.events ?? (mine.length > 0 ? mine : registered).map((a) => eventName(a.event)).filter((e): e is InvoicingEventName => e !== null);
      const relay = change.relay !== undefined ? change.relay : ((await this.store.configReservation(ctx.auth.tenant, change.fiscalId))?.relay ?? null);
      body.api_configurations = [...(await this.apiConfigurations(ctx, change.fiscalId, [...new Set(events)], relay)), ...others];
    }
    const rec = await ctx.upstream.call<unknown>(ctx, INVOICING.configurationUpdate, { body });
    if (!isObj(rec)) throw new UpstreamError('decode', 'the answer carries no configuration', 'invoice', 'IT-configuration', 200);
    return rec;
  }

  /**
   * Deletes a configuration (free). The service refuses it once receipts were sent for the company
   * (its spec); an unknown fiscal id is its 404 / error 111. Afterwards this tenant's signed
   * callbacks of the configuration are forgotten (nothing can deliver to them any more). Under the
   * configuration's lease, like an update, so no update writes callbacks back meanwhile.
   */
  deleteConfiguration(ctx: SubgraphContext, fiscalId: string): Promise<string> {
    return this.oneAtATime(`configuration:${fiscalId.toUpperCase()}`, `configuration ${fiscalId} is being updated by another request`, async () => {
      await ctx.upstream.call<unknown>(ctx, INVOICING.configurationDelete, { params: { fiscalId } });
      for (const config of [fiscalId, `${fiscalId}#receipts`, `${fiscalId}${CREDENTIALS_CONFIG}`]) {
        const r = await this.store.configReservation(ctx.auth.tenant, config);
        if (r) await this.store.dropReservation(r.key);
      }
      return fiscalId;
    });
  }

  /**
   * The registered `api_configurations` of a configuration split into this tenant's layer callbacks
   * (of its reservations for the configuration, live or expired: the update replaces them) and the
   * rest, kept as they are: other tenants' layer callbacks, and targets the account registered
   * elsewhere (another deployment's, its own servers'). Only a layer callback of this deployment
   * that no reservation answers any more (it can deliver to nobody) is dropped besides.
   */
  private async targetsOf(ctx: SubgraphContext, fiscalId: string, registered: readonly Obj[]): Promise<{ mine: Obj[]; others: Obj[] }> {
    const base = `${this.publicUrl()}/callbacks/${this.area.name}/`;
    const ownKeys = new Set<string>();
    for (const config of [fiscalId, `${fiscalId}#receipts`, `${fiscalId}${CREDENTIALS_CONFIG}`]) {
      const r = await this.store.configReservation(ctx.auth.tenant, config);
      if (r) ownKeys.add(r.key);
    }
    const mine: Obj[] = [];
    const others: Obj[] = [];
    for (const a of registered) {
      const url = isObj(a.callback) && typeof a.callback.url === 'string' ? a.callback.url : '';
      if (!url.startsWith(base)) {
        others.push(a);
        continue;
      }
      const token = safeDecode(url.slice(base.length).split('/')[0] ?? '') ?? '';
      // The reservation a layer URL names (its token's payload), read whether or not it still verifies.
      const key = token.split('.')[0] ?? '';
      if (ownKeys.has(key)) mine.push(a);
      else if (this.signer.verify(callbackPurpose(this.area.name), token).ok && (await this.store.reservation(key)) === undefined) continue;
      else others.push(a);
    }
    return { mine, others };
  }

  /**
   * Submits a checked FatturaPA document (paid once per idempotency key). Notifications come to the
   * configuration's callback, so the submission carries none. Custom signature credentials go in
   * the headers of this one call and are charged the signature's price on top (also when an active
   * subscription pays the invoice: then at the signature's subscription price).
   */
  issue(ctx: SubgraphContext, xml: string, doc: InvoiceIdentity, signature: SignatureCredentials | null, key: string | null): Promise<TrackedInvoice> {
    const ep = INVOICING.invoiceSubmit;
    const price = priceOf(ep.area, ep.method, ep.path) + (signature ? surchargeOf('invoice', 'custom-signature') : 0);
    const fingerprint = { xml: createHash('sha256').update(xml).digest('base64url'), customSignature: signature !== null };
    return this.submitOnce(ctx, doc, fingerprint, key, {
      callback: false,
      options: {
        raw: { contentType: 'application/xml', body: xml },
        headers: signature ? { 'x-signature-user': signature.user, 'x-signature-password': signature.password } : undefined,
        price,
        // Under an active subscription the signature is still charged, at its subscription price.
        surcharge: signature ? { subscribed: subscribedSurchargeOf('invoice', 'custom-signature') } : undefined,
      },
    });
  }

  /**
   * Submits an invoice under the caller's key, else under the key of the invoice's legal identity
   * (`invoiceKeyOf`: sender, year, number), so a retry without a key never pays twice; an unanswered
   * submission is found again by the service's free list (sender, number, date).
   */
  private async submitOnce(ctx: SubgraphContext, doc: InvoiceIdentity, body: Obj, callerKey: string | null, send: CreateSend): Promise<TrackedInvoice> {
    const key = callerKey ?? invoiceKeyOf(doc);
    try {
      return await this.create(ctx, 'INVOICE', body, null, key, { ...send, find: (c, held) => this.findSubmission(c, doc, held.startedAt) });
    } catch (err) {
      if (callerKey === null && err instanceof GraphQLError && err.extensions.code === 'IDEMPOTENCY_KEY_REUSED') {
        throw new GraphQLError(
          `invoice ${doc.number} of ${doc.date.slice(0, 4)} from ${doc.fiscalId} was already submitted through the layer in the last 24 hours with a different content; ` +
            `the SDI refuses a second invoice with the same number and year (00404). To send a corrected document knowingly (e.g. after the SDI refused the first), pass an idempotencyKey`,
          { extensions: { code: 'IDEMPOTENCY_KEY_REUSED', field: 'idempotencyKey', idempotencyKey: key } },
        );
      }
      throw err;
    }
  }

  /**
   * The submission of `doc` the service shows (free list by sender, number and date), created since
   * shortly before `startedAt`, the newest when several, read in full (free). Null when none (yet).
   */
  private async findSubmission(ctx: SubgraphContext, doc: InvoiceIdentity, startedAt: number): Promise<Obj | null> {
    let list: unknown;
    try {
      list = await ctx.upstream.call<unknown>(ctx, INVOICING.invoiceList, {
        query: { fiscal_id: doc.fiscalId, document_number: doc.number, issue_date: doc.date, direction: 'outgoing' },
      });
    } catch (err) {
      if (err instanceof UpstreamError && err.graphqlCode === 'UPSTREAM_NOT_FOUND') return null;
      throw err;
    }
    const since = Math.floor(startedAt / 1000) - FIND_CLOCK_SKEW_S;
    const hits = objects(list)
      .filter((r) => typeof r.id === 'string' && r.document_number === doc.number && r.issue_date === doc.date)
      .map((r) => ({ r, at: secondsOf(r.create_at ?? r.created_at) }))
      .filter((h) => h.at === null || h.at >= since)
      .sort((a, b) => (b.at ?? Infinity) - (a.at ?? Infinity));
    const hit = hits[0]?.r;
    if (!hit) return null;
    const full = await ctx.upstream.call<unknown>(ctx, INVOICING.invoiceGet, { params: { id: String(hit.id) } });
    return isObj(full) ? full : hit;
  }

  /**
   * Sends a checked cross-border invoice (paid once per idempotency key) once the sender's
   * configuration is known: the layer's own record of it (configured through the layer), else a
   * free read; a sender not configured is refused before the paid call.
   */
  async issueCrossBorder(ctx: SubgraphContext, body: Obj, fiscalId: string, key: string | null): Promise<TrackedInvoice> {
    const known = (await this.store.configReservation(ctx.auth.tenant, fiscalId)) !== undefined;
    if (!known && (await this.configuration(ctx, fiscalId)) === null) {
      throw badUserInput(`input.senderFiscalId ${fiscalId} is not configured: configure the branch (configureInvoicing with its country) first`, 'input.senderFiscalId');
    }
    const doc = { fiscalId, number: String(body.document_number), date: String(body.issue_date) };
    return this.submitOnce(ctx, doc, body, key, { callback: false, endpoint: INVOICING.crossBorderSubmit });
  }

  /** Activates the automatic QES with the company's own certificate (the credentials go to the service only). */
  async activateSignature(ctx: SubgraphContext, fiscalId: string, signature: SignatureCredentials): Promise<Obj> {
    const rec = await ctx.upstream.call<unknown>(ctx, INVOICING.signatureActivate, { body: { fiscal_id: fiscalId, username: signature.user, password: signature.password } });
    if (!isObj(rec)) throw new UpstreamError('decode', 'the answer carries no activation', 'invoice', 'certificates', 200);
    return rec;
  }

  /** Imports a historical invoice (once per idempotency key). */
  importInvoice(ctx: SubgraphContext, body: Obj, key: string | null): Promise<TrackedInvoice> {
    return this.create(ctx, 'INVOICE', body, null, key, { callback: false, endpoint: INVOICING.invoiceImport });
  }

  /**
   * Issues a receipt (paid once per idempotency key); its states come to the configuration's
   * callback. Without the caller's key, under the key of its fiscal content for
   * `RECEIPT_RETRY_WINDOW_MS` (`receiptKeysOf`, `receiptKeyAt`): a retry within it returns the first
   * receipt instead of paying (and filing) a second one, and one whose answer was lost finds it in
   * the free list (`findReceipt`). A receipt answered from an earlier order says so in
   * `extensions.cost`: a `dedup` call to `POST /IT-receipts`, no upstream call, no euro.
   */
  async issueReceipt(ctx: SubgraphContext, body: Obj, key: string | null): Promise<TrackedInvoice> {
    const tenant = ctx.auth.tenant;
    let chosen = key;
    if (chosen === null) {
      const now = Date.now();
      const keys = receiptKeysOf(body, now);
      chosen = receiptKeyAt(keys, (await this.store.idempotencyRecord(tenant, keys.previous))?.startedAt ?? null, now);
    }
    const before = await this.store.idempotencyRecord(tenant, chosen);
    const entry = await this.create(ctx, 'RECEIPT', body, null, chosen, { callback: false, find: (c, held) => this.findReceipt(c, body, held.startedAt) });
    if (before !== undefined) {
      const ep = INVOICING.receiptIssue;
      ctx.meter.record({ area: ep.area, method: ep.method, path: ep.path, status: 200, euro: 0, ms: 0, source: 'dedup' }, ep.path);
    }
    return entry;
  }

  /**
   * The receipt of an order that got no answer, as the service lists it (free): a sale of the same
   * configuration with the same items, payments, lottery code and tags, created since shortly before
   * `startedAt`, the first such when several, read in full (free). Null when none (yet).
   */
  private async findReceipt(ctx: SubgraphContext, body: Obj, startedAt: number): Promise<Obj | null> {
    const since = Math.floor(startedAt / 1000) - FIND_CLOCK_SKEW_S;
    const list = await this.receiptsPage(ctx, { fiscal_id: String(body.fiscal_id), type: 'sale', 'created_at[after]': new Date(since * 1000).toISOString(), limit: 100 });
    const hit = list
      .filter((r) => typeof r.id === 'string' && sameSale(r, body))
      .map((r) => ({ r, at: secondsOf(r.created_at ?? r.create_timestamp) }))
      .filter((h) => h.at === null || h.at >= since)
      .sort((a, b) => (a.at ?? Number.MAX_SAFE_INTEGER) - (b.at ?? Number.MAX_SAFE_INTEGER))[0]?.r;
    if (!hit) return null;
    const full = await ctx.upstream.call<unknown>(ctx, INVOICING.receiptGet, { params: { id: String(hit.id) } });
    return isObj(full) ? full : hit;
  }

  /**
   * Returns items of a ready sale: a new receipt of type `return` (paid once per idempotency key;
   * without one, once per sale and items returned, `returnKeyOf`, so a retry never pays twice).
   */
  returnReceiptItems(ctx: SubgraphContext, id: string, items: Obj[], key: string | null): Promise<TrackedInvoice> {
    return this.create(ctx, 'RECEIPT', { returnOf: id, items: returnedItems(items) }, null, key ?? returnKeyOf(id, items), {
      callback: false,
      endpoint: INVOICING.receiptReturn,
      options: { params: { id }, body: { items } },
    });
  }

  /** Voids a ready sale: a new receipt of type `void` (paid once per idempotency key; without one, once per sale: a sale is voided once). */
  voidReceipt(ctx: SubgraphContext, id: string, key: string | null): Promise<TrackedInvoice> {
    return this.create(ctx, 'RECEIPT', { voidOf: id }, null, key ?? `void:${id}`, { callback: false, endpoint: INVOICING.receiptVoid, options: { params: { id } } });
  }

  /** A void that is ready makes its sale `voided`, which the service does not notify: the sale is read again (free). */
  protected override async changed(entry: TrackedInvoice): Promise<void> {
    const r = entry.record;
    if (entry.family !== 'RECEIPT' || r.type !== 'void' || r.status !== 'ready' || typeof r.parent_receipt_id !== 'string') return;
    const upstream = this.upstream;
    const kept = await this.store.tokenOf(entry.tenant, entry.id);
    if (!upstream || !kept) return;
    const parent = r.parent_receipt_id;
    setImmediate(() => {
      // The token valid when it calls: the layer's own may have been rotated since the void was issued.
      void this.read({ auth: { token: this.workTokens.use(kept), tenant: entry.tenant }, meter: new CostMeter(), upstream }, 'RECEIPT', parent).catch((err: unknown) =>
        log.warn({ area: 'invoicing', id: parent, err }, 'voided sale not re-read'),
      );
    });
  }

  override async http(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
    if (path.startsWith('/callbacks/') && (await this.credentialsDelivery(req, res, path.slice('/callbacks/'.length)))) return true;
    return super.http(req, res, path);
  }

  /**
   * A `receipt-credentials` delivery to a configuration's credentials callback (true when the URL
   * names one; anything else is the kit's): the body only names the configuration, which is read
   * again (free) with the token it was registered with, published to the tenant's
   * `credentialsTopic` (`receiptCredentialsUpdated`) and relayed to the caller's own callback as
   * `{event, data}` without password or PIN (`shownConfiguration`), once per delivery (its retries
   * within `CREDENTIALS_RETRY_WINDOW_S` refused). Nothing of it is stored (but its HMAC) or logged.
   */
  private async credentialsDelivery(req: IncomingMessage, res: ServerResponse, rest: string): Promise<boolean> {
    const token = safeDecode(rest.split('/')[0] ?? '');
    const verified = token === null ? null : this.signer.verify(callbackPurpose(this.area.name), token);
    if (!verified?.ok) return false;
    const reservation = await this.store.reservation(verified.payload);
    if (!reservation?.config?.endsWith(CREDENTIALS_CONFIG)) return false;
    const fiscalId = reservation.config.slice(0, -CREDENTIALS_CONFIG.length);
    let raw: Buffer;
    try {
      raw = await readBody(req);
    } catch (err) {
      if (!(err instanceof BodyTooLarge)) throw err;
      refuseTooLarge(req, res);
      return true;
    }
    let posted: unknown;
    try {
      posted = JSON.parse(raw.toString('utf8'));
    } catch {
      posted = null;
    }
    const outer = isObj(posted) && isObj(posted.data) ? posted.data : null;
    const named = outer && isObj(outer.data) ? outer.data : outer;
    if (!named || asText(named.fiscal_id).toUpperCase() !== fiscalId.toUpperCase()) {
      refuse(res, 'payload');
      return true;
    }
    const upstream = this.upstream;
    if (!upstream) {
      refuse(res, 'upstream');
      return true;
    }
    let config: unknown;
    try {
      config = await upstream.call<unknown>(
        { auth: { token: this.workTokens.use(reservation.token), tenant: reservation.tenant }, meter: new CostMeter() },
        INVOICING.configurationGet,
        { params: { fiscalId } },
      );
    } catch (err) {
      refuse(res, isDefiniteRefusal(err) ? 'unknown-request' : 'upstream');
      return true;
    }
    if (!isObj(config)) {
      refuse(res, 'unknown-request');
      return true;
    }
    const shown = shownConfiguration(config);
    // One relay per delivery: the same body again within the vendor's retry span is its retry (the
    // body names no change and carries no id or time, so only time tells a retry from the next
    // change, e.g. the quarterly renewal of the same tax code's password). The body's HMAC under
    // the layer secret, never the body, per window (this one and the one before).
    const mac = createHmac('sha256', layerSecret(this.env)).update('invoicing:receipt-credentials\n').update(raw).digest('base64url');
    const w = Math.floor(Date.now() / 1000 / CREDENTIALS_RETRY_WINDOW_S);
    const nonce = `${mac}:${w}`;
    if ((await this.replay.seen(reservation.key, nonce)) || (await this.replay.seen(reservation.key, `${mac}:${w - 1}`))) {
      refuse(res, 'replay');
      return true;
    }
    // Subscribers of the tenant's credentials changes hear it (on the kit's bus, every replica).
    await this.bus.publish(credentialsTopic(reservation.tenant), credentialsChange(reservation.tenant, config, Date.now()));
    if (reservation.relay) {
      const target = reservation.relay;
      await relay(
        target,
        { event: EVENT_NAMES.RECEIPT_CREDENTIALS, data: shown },
        { allowPrivate: this.allowPrivateRelay, onRefused: (why) => log.warn({ area: 'invoicing', reason: why }, 'credentials change of a configuration not relayed') },
      );
    }
    await this.replay.accept(reservation.key, nonce, verified.expiresAt);
    sendJson(res, 200, { ok: true });
    return true;
  }

  /** One page of the caller's receipts as the service lists them (free). */
  async receiptsPage(ctx: SubgraphContext, query: Record<string, string | number | undefined>): Promise<Obj[]> {
    try {
      const list = await ctx.upstream.call<unknown>(ctx, INVOICING.receiptList, { query });
      return objects(list);
    } catch (err) {
      if (err instanceof UpstreamError && err.graphqlCode === 'UPSTREAM_NOT_FOUND') return [];
      throw err;
    }
  }

  /** One page of the caller's invoices as the service lists them (free), `first + 1` asked to know whether more follow. */
  async page(ctx: SubgraphContext, query: Record<string, string | number | undefined>): Promise<Obj[]> {
    try {
      const list = await ctx.upstream.call<unknown>(ctx, INVOICING.invoiceList, { query });
      return objects(list);
    } catch (err) {
      if (err instanceof UpstreamError && err.graphqlCode === 'UPSTREAM_NOT_FOUND') return [];
      throw err;
    }
  }
}
