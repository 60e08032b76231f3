/**
 * Every resolver of the invoicing subgraph, typed by the generated `Resolvers`. Inputs are checked
 * before any call (BAD_USER_INPUT naming the field); submissions go through the service (paid once
 * per idempotency key); live status comes from the kit's bus, latest state first.
 */
import { cursorOffset, offsetCursor } from '../../runtime/cursor.ts';
import { GraphQLError } from 'graphql';
import type { SubgraphContext } from '../../runtime/context.ts';
import { badUserInput, toClientError } from '../../runtime/errors.ts';
import { DateTimeScalar, parseIsoDateTime } from '../../runtime/scalars.ts';
import { idempotencyKey, relayTarget } from '../../runtime/tracking/args.ts';
import { payloads } from '../../runtime/tracking/subscribe.ts';
import { email, fiscalCode, isCalendarDay, italianCodeShape, requiredText, vatOrFiscalCode } from '../../runtime/validate.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import type {
  InvoiceResolvers,
  InvoiceState,
  InvoicingConfigurationResolvers,
  InvoicingEvent,
  ReceiptStatus,
  ReceiptType,
  Resolvers,
  SdiStatus,
} from '../__generated__/resolvers-types.ts';
import { companyOf, readFattura, type FatturaSummary } from '../../../contract/fatturapa.ts';
import { branchVatId, buildFattura, checkFatturaXml, crossBorderBody, invoiceFromInput } from '../fatturapa.ts';
import type { InvoiceParent } from '../mappers.ts';
import { receiptBody } from '../receipts.ts';
import { INVOICING_POLICY, secondsOf } from '../policy.ts';
import { INVOICING } from '../upstream.ts';
import {
  credentialsTopic,
  eventName,
  invoiceTopic,
  tenantTopic,
  type InvoiceIdentity,
  type InvoicingEventName,
  type InvoicingService,
  type SignatureCredentials,
  type TrackedInvoice,
} from '../service.ts';
import { asText, isObj, type Obj, objects } from '../../../contract/values.ts';
import { float as numOrNull } from '../../upstream/coerce.ts';

const INVOICE_STATES: readonly string[] = ['NEW', 'SENT', 'RECEIVED', 'DONE', 'ERROR'];
const SDI_STATUSES: readonly string[] = ['BOOKED', 'SENT', 'DELIVERED', 'NOT_DELIVERED', 'RECEIVED', 'ACCEPTED', 'REJECTED', 'TERMS_EXPIRED', 'ERROR'];
const RECEIPT_STATUSES: readonly string[] = ['NEW', 'RETRY', 'SUBMITTED', 'READY', 'FAILED', 'VOIDED'];
const RECEIPT_TYPES: readonly string[] = ['SALE', 'RETURN', 'VOID'];
const INVOICE_ID = /^[0-9a-f]{24}$/;

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null);
const iso = (v: unknown): string | null => {
  const s = secondsOf(v);
  return s === null ? null : new Date(s * 1000).toISOString();
};

function invoiceId(value: string, field = 'id'): string {
  const v = value.trim().toLowerCase();
  if (!INVOICE_ID.test(v)) throw badUserInput(`${field} must be an invoice id of 24 hexadecimal characters`, field);
  return v;
}

/** The configurations a stream of credentials changes carries (`return()` kept, so a client that leaves releases the bus). */
function configurationsOf(source: AsyncIterableIterator<TrackedInvoice>): AsyncIterableIterator<Obj> {
  const wrap = (r: IteratorResult<TrackedInvoice>): IteratorResult<Obj> => (r.done ? { value: undefined, done: true } : { value: { ...r.value.record }, done: false });
  const it: AsyncIterableIterator<Obj> = {
    [Symbol.asyncIterator]: () => it,
    next: async () => wrap(await source.next()),
    return: async () => wrap(source.return ? await source.return() : { value: undefined, done: true }),
    throw: async (e?: unknown) => wrap(source.throw ? await source.throw(e) : { value: undefined, done: true }),
  };
  return it;
}

/** Errors thrown while setting up a subscription take the same codes as query errors. */
const clientError = (err: unknown): unknown => toClientError(err) ?? err;

function signatureOf(input: { user: string; password: string } | null | undefined): SignatureCredentials | null {
  if (!input) return null;
  return { user: requiredText(input.user, 'signature.user', 200), password: requiredText(input.password, 'signature.password', 200) };
}

function credentialsOf(input: { taxCode: string; password: string; pin: string } | null | undefined, field: string): { taxCode: string; password: string; pin: string } | null {
  if (!input) return null;
  return {
    taxCode: fiscalCode(input.taxCode, `${field}.taxCode`),
    password: requiredText(input.password, `${field}.password`, 200),
    pin: requiredText(input.pin, `${field}.pin`, 50),
  };
}

/** The configuration's fiscal id: an Italian VAT number or fiscal code, checksum-validated. */
function configFiscalId(value: string, field: string): string {
  return vatOrFiscalCode(value, field).code;
}

/** A configuration's fiscal id of any country: a French or German VAT id, else an Italian VAT number or fiscal code. */
function anyConfigFiscalId(value: string, field: string): string {
  const v = value.replace(/\s/g, '').toUpperCase();
  return /^(FR|DE)/.test(v) ? branchVatId(v.slice(0, 2) as 'FR' | 'DE', v, field) : configFiscalId(value, field);
}

/** The legal identity of a checked Italian invoice: the company's VAT number (the configuration's fiscal id: the seller's, the buyer's on a self-invoice), number, date and type. */
const identityOf = (s: FatturaSummary): InvoiceIdentity => {
  const company = companyOf(s);
  return { fiscalId: company.vatNumber ?? company.fiscalCode ?? '', number: s.number, date: s.date, documentType: s.documentType };
};

/** The progressive number of a transmission (`ProgressivoInvio`, up to 10 letters and digits) from the document number. */
function progressiveOf(number: string): string {
  const clean = number.replace(/[^A-Za-z0-9]/g, '').slice(-10);
  return clean === '' ? '1' : clean;
}

const offsetOf = (after: string | null | undefined): number => cursorOffset('o', after, 'after is not a cursor of this list');

/** Per request: the account's configurations, read once (free) for every company asked about. */
const configurationsByRequest = new WeakMap<SubgraphContext, Promise<Obj[]>>();

export function createResolvers(service: InvoicingService): Resolvers {
  const relayOpts = { allowPrivate: service.allowPrivateRelay };

  /** The changes of one invoice or receipt of the caller until it is final (latest first); NOT_FOUND when the account has none of that id. */
  async function changesOfOne(ctx: SubgraphContext, id: string, family: 'INVOICE' | 'RECEIPT'): Promise<AsyncIterableIterator<TrackedInvoice>> {
    const { tenant } = ctx.auth;
    let entry: TrackedInvoice;
    try {
      entry = await service.findForSubscription(ctx, invoiceId(id), family);
    } catch (err) {
      if (err instanceof UpstreamError && err.kind === 'http' && (err.status === 400 || err.status === 404)) {
        throw new GraphQLError(`no ${family === 'INVOICE' ? 'invoice' : 'receipt'} ${id} of this account`, { extensions: { code: 'NOT_FOUND' } });
      }
      throw clientError(err);
    }
    return service.bus.subscribe(invoiceTopic(tenant, entry.id), {
      initial: async () => [(await service.store.get(tenant, entry.id)) ?? entry],
      identity: (e) => e.id,
      version: (e) => e.seq,
      until: (e) => INVOICING_POLICY.isFinal(e.rawState),
    });
  }

  const Invoice: InvoiceResolvers = {
    id: (p) => p.id,
    state: (p) => {
      const s = str(p.record.state);
      return (s !== null && INVOICE_STATES.includes(s) ? s : 'RAW_UNKNOWN') as InvoiceState;
    },
    rawState: (p) => str(p.record.state),
    direction: (p) => (p.record.direction === 'incoming' ? 'INCOMING' : 'OUTGOING'),
    fiscalId: (p) => str(p.record.fiscal_id),
    documentType: (p) => str(p.record.type),
    documentNumber: (p) => str(p.record.document_number),
    issueDate: (p) => str(p.record.issue_date),
    currency: (p) => str(p.record.currency),
    totalAmount: (p) => numOrNull(p.record.total_gross_amount ?? p.record.total_amount_including_tax),
    taxableAmount: (p) => numOrNull(p.record.total_amount_excluding_tax),
    taxAmount: (p) => numOrNull(p.record.total_tax_amount),
    payableAmount: (p) => numOrNull(p.record.total_payable_amount),
    toPublicAdministration: (p) => (typeof p.record.to_pa === 'boolean' ? p.record.to_pa : null),
    lines: (p) => objects(p.record.invoice_lines),
    sender: (p) => (isObj(p.record.sender) ? p.record.sender : null),
    recipient: (p) => (isObj(p.record.recipient) ? p.record.recipient : null),
    sdi: (p) => (isObj(p.record.details) ? p.record.details : null),
    createdAt: (p) => iso(p.record.create_at ?? p.record.created_at),
    updatedAt: (p) => iso(p.record.updated_at ?? p.record.create_at),
    document: (p, { format }, ctx) => {
      const pdf = format === 'PDF';
      const name = `${(str(p.record.document_number) ?? p.id).replace(/[^A-Za-z0-9._-]+/g, '_')}.${pdf ? 'pdf' : 'xml'}`;
      return service.files.issue(service.publicUrl(), ctx.auth, pdf ? INVOICING.invoicePdf : INVOICING.invoiceXml, { id: p.id }, name, pdf ? 'application/pdf' : 'application/xml');
    },
  };

  const InvoicingConfiguration: InvoicingConfigurationResolvers = {
    id: (c) => asText(c.id),
    fiscalId: (c) => asText(c.fiscal_id),
    name: (c) => asText(c.name),
    email: (c) => asText(c.email),
    customerInvoices: (c) => c.customer_invoice !== false,
    supplierInvoices: (c) => c.supplier_invoice === true,
    receipts: (c) => c.receipts === true,
    receiptsCredentialsTaxCode: (c) => (isObj(c.receipts_authentication) ? str(c.receipts_authentication.taxCode) : null),
    events: (c) =>
      [
        ...new Set(
          (Array.isArray(c.api_configurations) ? c.api_configurations : []).map((a) => (isObj(a) ? eventName(a.event) : null)).filter((e): e is InvoicingEventName => e !== null),
        ),
      ] as InvoicingEvent[],
    active: (c) => c.active !== false,
    createdAt: (c) => iso(c.create_timestamp),
  };

  const defaultEvents = (customer: boolean, supplier: boolean, receipts: boolean): InvoicingEventName[] => [
    ...(customer ? (['CUSTOMER_INVOICE'] as const) : []),
    ...(supplier ? (['SUPPLIER_INVOICE'] as const) : []),
    ...(receipts ? (['RECEIPT', 'RECEIPT_RETRY', 'RECEIPT_ERROR'] as const) : []),
  ];

  return {
    DateTime: DateTimeScalar,
    Query: {
      invoicingConfigurations: (_r, _a, ctx) => service.configurations(ctx),
      invoice: async (_r, { id }, ctx) => {
        const key = invoiceId(id);
        try {
          return await service.read(ctx, 'INVOICE', key);
        } catch (err) {
          if (err instanceof UpstreamError && err.kind === 'http' && (err.status === 404 || err.status === 400)) return null;
          throw err;
        }
      },
      invoicingConfiguration: (_r, { fiscalId }, ctx) => service.configuration(ctx, anyConfigFiscalId(fiscalId, 'fiscalId')),
      receipts: async (_r, { fiscalId, status, first, after }, ctx) => {
        const size = first ?? 20;
        if (!Number.isInteger(size) || size < 1 || size > 100) throw badUserInput('first must be between 1 and 100', 'first');
        const offset = offsetOf(after);
        const query: Record<string, string | number | undefined> = { skip: offset, limit: Math.min(100, size + 1) };
        if (fiscalId) query.fiscal_id = configFiscalId(fiscalId, 'fiscalId');
        if (status) {
          if (status === 'RAW_UNKNOWN') throw badUserInput('status: RAW_UNKNOWN is no status to filter by', 'status');
          query.status = status.toLowerCase();
        }
        const items = await service.receiptsPage(ctx, query);
        const hasNextPage = items.length > size;
        return {
          nodes: items.slice(0, size).map((r) => ({ id: String(r.id), record: r })),
          pageInfo: { hasNextPage, endCursor: hasNextPage ? offsetCursor('o', offset + size) : null },
        };
      },
      receipt: async (_r, { id }, ctx) => {
        try {
          return await service.read(ctx, 'RECEIPT', invoiceId(id));
        } catch (err) {
          if (err instanceof UpstreamError && err.kind === 'http' && (err.status === 404 || err.status === 400)) return null;
          throw err;
        }
      },
      invoices: async (_r, { filter, first, after }, ctx) => {
        const size = first ?? 20;
        if (!Number.isInteger(size) || size < 1 || size > 100) throw badUserInput('first must be between 1 and 100', 'first');
        const offset = offsetOf(after);
        const query: Record<string, string | number | undefined> = { skip: offset, limit: Math.min(100, size + 1) };
        if (filter?.direction) query.direction = filter.direction === 'INCOMING' ? 'incoming' : 'outgoing';
        if (filter?.states && filter.states.length > 0) {
          const bad = filter.states.find((s) => s === 'RAW_UNKNOWN');
          if (bad) throw badUserInput('filter.states: RAW_UNKNOWN is no state to filter by', 'filter.states');
          query.state = filter.states.join(',');
        }
        if (filter?.fiscalId) query.fiscal_id = configFiscalId(filter.fiscalId, 'filter.fiscalId');
        if (filter?.documentType) query.type = requiredText(filter.documentType, 'filter.documentType', 4).toUpperCase();
        if (filter?.documentNumber) query.document_number = requiredText(filter.documentNumber, 'filter.documentNumber', 20);
        for (const [k, q] of [
          ['issuedAfter', 'issue_date[after]'],
          ['issuedBefore', 'issue_date[before]'],
        ] as const) {
          const v = filter?.[k];
          if (v === null || v === undefined) continue;
          if (!isCalendarDay(v)) throw badUserInput(`filter.${k} must be a day YYYY-MM-DD`, `filter.${k}`);
          query[q] = v;
        }
        const items = await service.page(ctx, query);
        const nodes: InvoiceParent[] = items.slice(0, size).map((r) => ({ id: String(r.id), record: r }));
        const hasNextPage = items.length > size;
        return { nodes, pageInfo: { hasNextPage, endCursor: hasNextPage ? offsetCursor('o', offset + size) : null } };
      },
    },
    Mutation: {
      configureInvoicing: (_r, { input }, ctx) => {
        const customer = input.customerInvoices ?? true;
        const supplier = input.supplierInvoices ?? false;
        const receipts = input.receipts ?? false;
        const credentials = credentialsOf(input.receiptsCredentials, 'input.receiptsCredentials');
        if (receipts && credentials === null) throw badUserInput('input.receiptsCredentials are required to send receipts', 'input.receiptsCredentials');
        const country = (input.country ?? 'IT').trim().toUpperCase();
        if (country !== 'IT' && country !== 'FR' && country !== 'DE') throw badUserInput('input.country must be IT, FR or DE', 'input.country');
        if (country !== 'IT' && receipts) throw badUserInput('input.receipts: electronic receipts exist in Italy only', 'input.receipts');
        return service.configure(ctx, {
          fiscalId: country === 'IT' ? configFiscalId(input.fiscalId, 'input.fiscalId') : branchVatId(country, input.fiscalId, 'input.fiscalId'),
          name: requiredText(input.name, 'input.name', 200),
          email: email(input.email, 'input.email'),
          customerInvoices: customer,
          supplierInvoices: supplier,
          receipts,
          credentials,
          events: [...new Set(input.events ?? defaultEvents(customer, supplier, receipts))] as InvoicingEventName[],
          relay: relayTarget(input.callback, 'input.callback', relayOpts),
        });
      },
      updateInvoicingConfiguration: (_r, { input }, ctx) => {
        const change: Parameters<InvoicingService['update']>[1] = { fiscalId: configFiscalId(input.fiscalId, 'input.fiscalId') };
        if (input.receipts !== null && input.receipts !== undefined) change.receipts = input.receipts;
        const credentials = credentialsOf(input.receiptsCredentials, 'input.receiptsCredentials');
        if (credentials) change.credentials = credentials;
        if (input.events) change.events = [...new Set(input.events)] as InvoicingEventName[];
        if (input.callback) change.relay = relayTarget(input.callback, 'input.callback', relayOpts);
        return service.update(ctx, change);
      },
      deleteInvoicingConfiguration: (_r, { fiscalId }, ctx) => service.deleteConfiguration(ctx, anyConfigFiscalId(fiscalId, 'fiscalId')),
      issueInvoice: (_r, { input, signature, idempotencyKey: key }, ctx) => {
        const idem = idempotencyKey(key);
        const sig = signatureOf(signature);
        const summary = invoiceFromInput(input);
        const xml = buildFattura(summary, progressiveOf(summary.number));
        // The document built is read back and checked like any given XML.
        checkFatturaXml(xml);
        return service.issue(ctx, xml, identityOf(summary), sig, idem);
      },
      issueInvoiceXml: (_r, { xml, signature, idempotencyKey: key }, ctx) => {
        const idem = idempotencyKey(key);
        const sig = signatureOf(signature);
        const summary = checkFatturaXml(xml);
        return service.issue(ctx, xml, identityOf(summary), sig, idem);
      },
      activateCustomSignature: (_r, { fiscalId, credentials }, ctx) => {
        const sig = signatureOf(credentials)!;
        return service.activateSignature(ctx, configFiscalId(fiscalId, 'fiscalId'), sig);
      },
      importInvoice: (_r, { xml, sdiId, sdiFileName, sdiStatus, idempotencyKey: key }, ctx) => {
        const idem = idempotencyKey(key);
        if (xml.length > 5 * 1024 * 1024) throw badUserInput('xml is larger than 5 MB', 'xml');
        const read = readFattura(xml);
        if (!read.ok)
          throw badUserInput(
            read.error === 'structure' ? 'xml is not a well-formed FatturaPA 1.2 document' : `xml: ${read.field} is missing or not valid`,
            read.error === 'structure' ? 'xml' : `xml:${read.field}`,
          );
        const status = sdiStatus ?? 'DELIVERED';
        if (!['DELIVERED', 'NOT_DELIVERED', 'ACCEPTED', 'REJECTED', 'TERMS_EXPIRED'].includes(status)) {
          throw badUserInput('sdiStatus must be definitive: DELIVERED, NOT_DELIVERED, ACCEPTED, REJECTED or TERMS_EXPIRED', 'sdiStatus');
        }
        const details: Obj = { sdi_status: status };
        if (sdiId) details.sdi_id = requiredText(sdiId, 'sdiId', 64);
        if (sdiFileName) details.sdi_filename = requiredText(sdiFileName, 'sdiFileName', 100);
        return service.importInvoice(ctx, { invoice: xml, details }, idem);
      },
      issueCrossBorderInvoice: (_r, { input, idempotencyKey: key }, ctx) => {
        const idem = idempotencyKey(key);
        const { body, fiscalId } = crossBorderBody(input);
        return service.issueCrossBorder(ctx, body, fiscalId, idem);
      },
      issueReceipt: (_r, { input, idempotencyKey: key }, ctx) => {
        const idem = idempotencyKey(key);
        const { body } = receiptBody(configFiscalId(input.fiscalId, 'input.fiscalId'), input);
        return service.issueReceipt(ctx, body, idem);
      },
      returnReceiptItems: (_r, { id, items, idempotencyKey: key }, ctx) => {
        const idem = idempotencyKey(key);
        const receipt = invoiceId(id);
        if (items.length === 0) throw badUserInput('items must hold at least one item', 'items');
        const body = items.map((it, i) => {
          if (!Number.isFinite(it.quantity) || it.quantity <= 0) throw badUserInput(`items[${i}].quantity must be more than 0`, `items[${i}].quantity`);
          return { id: requiredText(it.itemId, `items[${i}].itemId`, 64), quantity: it.quantity };
        });
        return service.returnReceiptItems(ctx, receipt, body, idem);
      },
      voidReceipt: (_r, { id, idempotencyKey: key }, ctx) => service.voidReceipt(ctx, invoiceId(id), idempotencyKey(key)),
    },
    Subscription: {
      invoiceUpdated: {
        subscribe: async (_r, { id }, ctx: SubgraphContext) => {
          const { tenant } = ctx.auth;
          if (id !== null && id !== undefined) return payloads('invoiceUpdated', await changesOfOne(ctx, id, 'INVOICE'));
          const source = service.bus.subscribe(tenantTopic(tenant), {
            replayLatest: false,
            initial: async () => (await service.store.list(tenant, 'INVOICE')).filter((e) => e.record.direction !== 'incoming' && !INVOICING_POLICY.isFinal(e.rawState)),
            filter: (e) => e.family === 'INVOICE' && e.record.direction !== 'incoming',
            identity: (e) => e.id,
            version: (e) => e.seq,
          });
          return payloads('invoiceUpdated', source);
        },
      },
      invoiceReceived: {
        subscribe: (_r, { since }, ctx: SubgraphContext) => {
          const { tenant } = ctx.auth;
          let after: number | null = null;
          if (since !== null && since !== undefined) {
            const ms = parseIsoDateTime(since);
            if (ms === null) throw badUserInput('since must be an ISO 8601 date-time', 'since');
            after = Math.floor(ms / 1000);
          }
          const source = service.bus.subscribe(tenantTopic(tenant), {
            replayLatest: false,
            initial: async () =>
              after === null ? [] : (await service.store.list(tenant, 'INVOICE')).filter((e) => e.record.direction === 'incoming' && (e.createdAt ?? 0) > after),
            filter: (e) => e.family === 'INVOICE' && e.record.direction === 'incoming',
            identity: (e) => e.id,
            version: (e) => e.seq,
          });
          return payloads('invoiceReceived', source);
        },
      },
      receiptUpdated: {
        subscribe: async (_r, { id }, ctx: SubgraphContext) => {
          const { tenant } = ctx.auth;
          if (id !== null && id !== undefined) return payloads('receiptUpdated', await changesOfOne(ctx, id, 'RECEIPT'));
          const source = service.bus.subscribe(tenantTopic(tenant), {
            replayLatest: false,
            initial: async () => (await service.store.list(tenant, 'RECEIPT')).filter((e) => !INVOICING_POLICY.isFinal(e.rawState)),
            filter: (e) => e.family === 'RECEIPT',
            identity: (e) => e.id,
            version: (e) => e.seq,
          });
          return payloads('receiptUpdated', source);
        },
      },
      receiptCredentialsUpdated: {
        subscribe: (_r, { fiscalId }, ctx: SubgraphContext) => {
          const wanted = fiscalId !== null && fiscalId !== undefined ? configFiscalId(fiscalId, 'fiscalId').toUpperCase() : null;
          const source = service.bus.subscribe(credentialsTopic(ctx.auth.tenant), {
            filter: (e) => wanted === null || e.id === wanted,
            identity: (e) => e.id,
            version: (e) => e.seq,
          });
          return payloads('receiptCredentialsUpdated', configurationsOf(source));
        },
      },
    },
    Company: {
      __resolveReference: (ref) => ref,
      lookupCode: (c) => c.lookupCode,
      invoicingConfiguration: async (company, _a, ctx) => {
        // Only a VAT number or a fiscal code names a configuration (an Openapi id does not).
        if (italianCodeShape(company.lookupCode) === null) return null;
        let all = configurationsByRequest.get(ctx);
        if (!all) {
          all = service.configurations(ctx);
          configurationsByRequest.set(ctx, all);
        }
        return (await all).find((c) => asText(c.fiscal_id).toUpperCase() === company.lookupCode.toUpperCase()) ?? null;
      },
    },
    Invoice,
    InvoicingConfiguration,
    Receipt: {
      id: (p) => p.id,
      fiscalId: (p) => str(p.record.fiscal_id),
      status: (p) => {
        const s = str(p.record.status)?.toUpperCase() ?? null;
        return (s !== null && RECEIPT_STATUSES.includes(s) ? s : 'RAW_UNKNOWN') as ReceiptStatus;
      },
      rawStatus: (p) => str(p.record.status),
      type: (p) => {
        const s = str(p.record.type)?.toUpperCase() ?? null;
        return (s !== null && RECEIPT_TYPES.includes(s) ? s : 'RAW_UNKNOWN') as ReceiptType;
      },
      documentNumber: (p) => str(p.record.document_number),
      documentDate: (p) => str(p.record.document_date),
      totalAmount: (p) => numOrNull(p.record.total_amount),
      totalTaxableAmount: (p) => numOrNull(p.record.total_taxable_amount),
      totalVatAmount: (p) => numOrNull(p.record.total_vat_amount),
      items: (p) => objects(p.record.items),
      cashPaymentAmount: (p) => numOrNull(p.record.cash_payment_amount),
      electronicPaymentAmount: (p) => numOrNull(p.record.electronic_payment_amount),
      ticketRestaurantPaymentAmount: (p) => numOrNull(p.record.ticket_restaurant_payment_amount),
      ticketRestaurantQuantity: (p) => (typeof p.record.ticket_restaurant_quantity === 'number' ? Math.trunc(p.record.ticket_restaurant_quantity) : null),
      lotteryCode: (p) => str(p.record.lottery_code),
      goodsUncollectedAmount: (p) => numOrNull(p.record.goods_uncollected_amount),
      servicesUncollectedAmount: (p) => numOrNull(p.record.services_uncollected_amount),
      totalUncollectedAmount: (p) => numOrNull(p.record.total_uncollected_amount),
      invoiceIssuing: (p) => (typeof p.record.invoice_issuing === 'boolean' ? p.record.invoice_issuing : null),
      discount: (p) => numOrNull(p.record.discount),
      totalDiscount: (p) => numOrNull(p.record.total_discount),
      totalGrossDiscount: (p) => numOrNull(p.record.total_gross_discount),
      deductibleAmount: (p) => numOrNull(p.record.deductible_amount),
      linkedReceipt: (p) => str(p.record.linked_receipt),
      transactionId: (p) => str(p.record.transaction_id),
      tags: (p) => (Array.isArray(p.record.tags) ? p.record.tags.filter((x): x is string => typeof x === 'string') : []),
      parentReceiptId: (p) => str(p.record.parent_receipt_id),
      errorCode: (p) => str(p.record.error_code),
      errorMessage: (p) => str(p.record.error_message),
      createdAt: (p) => iso(p.record.created_at ?? p.record.create_timestamp),
      updatedAt: (p) => iso(p.record.update_timestamp ?? p.record.created_at),
      pdf: (p, _a, ctx) => service.files.issue(service.publicUrl(), ctx.auth, INVOICING.receiptPdf, { id: p.id }, `receipt-${p.id}.pdf`, 'application/pdf'),
    },
    CustomSignature: {
      id: (c) => asText(c.id),
      fiscalId: (c) => str(c.fiscal_id),
      type: (c) => str(c.type),
      user: (c) => str(c.username),
      active: (c) => (typeof c.active === 'boolean' ? c.active : null),
      createdAt: (c) => iso(c.created_at),
    },
    ReceiptItem: {
      id: (i) => str(i.id),
      description: (i) => str(i.description),
      quantity: (i) => numOrNull(i.quantity),
      grossPrice: (i) => numOrNull(i.gross_price),
      vatRate: (i) => str(i.vat_rate),
      totalAmount: (i) => numOrNull(i.total_amount),
      returnedQuantity: (i) => numOrNull(i.return),
      unitPrice: (i) => numOrNull(i.unit_price),
      taxableAmount: (i) => numOrNull(i.taxable_amount),
      netTaxableAmount: (i) => numOrNull(i.net_taxable_amount),
      vatAmount: (i) => numOrNull(i.vat_amount),
      discount: (i) => numOrNull(i.gross_discount),
      unitDiscount: (i) => numOrNull(i.unit_discount),
      complimentary: (i) => (typeof i.complimentary === 'boolean' ? i.complimentary : null),
      sku: (i) => str(i.sku),
    },
    InvoiceLine: {
      number: (l) => (typeof l.line_number === 'number' ? l.line_number : null),
      description: (l) => str(l.description),
      quantity: (l) => numOrNull(l.quantity),
      unitPrice: (l) => numOrNull(l.unit_price),
      totalPrice: (l) => numOrNull(l.total_price),
      vatRate: (l) => numOrNull(l.vat_rate),
      nature: (l) => str(l.nature),
    },
    InvoiceParty: {
      name: (p) => str(p.name),
      vatNumber: (p) => str(p.vat_id),
      fiscalCode: (p) => str(p.tax_code),
      street: (p) => str(p.street),
      city: (p) => str(p.city),
      zip: (p) => str(p.zip),
      province: (p) => str(p.province),
      country: (p) => str(p.country_code),
      phone: (p) => str(p.phone),
      email: (p) => str(p.email),
    },
    SdiDetails: {
      id: (d) => str(d.sdi_id),
      fileName: (d) => str(d.sdi_filename),
      status: (d) => {
        const s = str(d.sdi_status);
        return (s === null ? null : SDI_STATUSES.includes(s) ? s : 'RAW_UNKNOWN') as SdiStatus | null;
      },
      rawStatus: (d) => str(d.sdi_status),
      message: (d) => str(d.sdi_message),
      updatedAt: (d) => str(d.sdi_update_date),
      invoiceDate: (d) => str(d.invoice_date),
    },
  };
}
