/** The invoicing subgraph's `Query` fields: configurations, invoices and receipts (reads, free). */
import { offsetCursor } from '../../runtime/cursor.ts';
import { badUserInput } from '../../runtime/errors.ts';
import { isCalendarDay, requiredText } from '../../runtime/validate.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import type { QueryResolvers } from '../__generated__/resolvers-types.ts';
import type { InvoiceParent } from '../mappers.ts';
import type { InvoicingService } from '../service.ts';
import { anyConfigFiscalId, configFiscalId, invoiceId, offsetOf } from './shared.ts';

export function queryResolvers(service: InvoicingService): QueryResolvers {
  return {
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
  };
}
