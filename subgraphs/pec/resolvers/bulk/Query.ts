/** Bulk certified mail's `Query` fields: a sending's progress, the inbox (cursor pages over the service's pages of 25), threads, receipts, quota. */
import { badUserInput } from '../../../runtime/errors.ts';
import { UpstreamError } from '../../../upstream/errors.ts';
import type { BulkInboxMessage, BulkThread, QueryResolvers } from '../../__generated__/resolvers-types.ts';
import { BULK, type BulkService } from '../../bulk.ts';
import { isObj, objects } from '../../../../contract/values.ts';
import { credentials, cursorOf, headersOf, message, offsetOf, PAGE, receipt, refusedCredentials, sendingCode, thread, threadId } from './shared.ts';

export function queryResolvers(bulk: BulkService): QueryResolvers {
  return {
    bulkSending: (_root, { id }, ctx) => bulk.get(ctx.auth.tenant, id),
    bulkInbox: async (_root, { credentials: c, search, first, after }, ctx) => {
      const creds = credentials(c);
      if (!Number.isInteger(first) || first < 1 || first > 100) throw badUserInput('first must be 1 to 100', 'first');
      const q = search?.trim() ?? '';
      if (q.length > 200) throw badUserInput('search: at most 200 characters', 'search');
      const offset = offsetOf(after);
      const nodes: BulkInboxMessage[] = [];
      let total: number;
      // The service's pages of 25 that cover [offset, offset + first).
      for (let page = Math.floor(offset / PAGE) + 1; ; page++) {
        let body: unknown;
        try {
          body = await ctx.upstream.call<unknown>(ctx, BULK.inbox, { query: { ...(q ? { q } : {}), page }, headers: headersOf(creds) });
        } catch (err) {
          throw refusedCredentials(err);
        }
        const b = isObj(body) ? body : {};
        total = typeof b.total === 'number' ? b.total : 0;
        const items = Array.isArray(b.data) ? b.data : [];
        items.forEach((m, i) => {
          const at = (page - 1) * PAGE + i;
          if (at >= offset && nodes.length < first) nodes.push(message(m)!);
        });
        const pages = typeof b.n_of_pages === 'number' ? b.n_of_pages : page;
        if (nodes.length >= first || page >= pages || items.length === 0) break;
      }
      const end = offset + nodes.length;
      return { nodes, total, endCursor: nodes.length > 0 ? cursorOf(end) : (after ?? null), hasNextPage: end < total };
    },
    bulkInboxMessage: async (_root, { credentials: c, id }, ctx) => {
      const creds = credentials(c);
      if (!/^\d{1,12}$/.test(id)) throw badUserInput('id must be a number', 'id');
      try {
        const data = await ctx.upstream.call<unknown>(ctx, BULK.message, { params: { id }, headers: headersOf(creds) });
        const m = message(data);
        return m ? { ...m, id } : null;
      } catch (err) {
        if (err instanceof UpstreamError && err.status === 404) return null;
        throw refusedCredentials(err);
      }
    },
    bulkThreads: async (_root, { credentials: c }, ctx) => {
      const creds = credentials(c);
      try {
        const data = await ctx.upstream.call<unknown>(ctx, BULK.threads, { headers: headersOf(creds) });
        return (Array.isArray(data) ? data : []).map(thread).filter((x): x is BulkThread => x !== null);
      } catch (err) {
        if (err instanceof UpstreamError && err.status === 404) return [];
        throw refusedCredentials(err);
      }
    },
    bulkThread: async (_root, { credentials: c, id }, ctx) => {
      const creds = credentials(c);
      try {
        return thread(await ctx.upstream.call<unknown>(ctx, BULK.thread, { params: { id: threadId(id) }, headers: headersOf(creds) }));
      } catch (err) {
        if (err instanceof UpstreamError && err.status === 404) return null;
        throw refusedCredentials(err);
      }
    },
    bulkSendingReceipts: async (_root, { credentials: c, code: raw }, ctx) => {
      const creds = credentials(c);
      const code = sendingCode(raw);
      try {
        const data = await ctx.upstream.call<unknown>(ctx, BULK.receipts, { params: { code }, headers: headersOf(creds) });
        return objects(data).map(receipt);
      } catch (err) {
        if (err instanceof UpstreamError && err.status === 404) return null;
        throw refusedCredentials(err);
      }
    },
    bulkQuota: async (_root, { credentials: c, mailbox }, ctx) => {
      const creds = credentials(c);
      const box = mailbox.trim().toUpperCase();
      if (!/^[A-Z0-9._-]{1,64}$/.test(box)) throw badUserInput('mailbox must be a folder name such as INBOX', 'mailbox');
      let data: unknown;
      try {
        data = await ctx.upstream.call<unknown>(ctx, BULK.quota, { params: { mailbox: box }, headers: headersOf(creds) });
      } catch (err) {
        throw refusedCredentials(err);
      }
      const d = isObj(data) ? data : {};
      const usage = typeof d.usage === 'number' ? d.usage : null;
      const limit = typeof d.limit === 'number' ? d.limit : null;
      return { mailbox: box, usage, limit, usedPercent: usage !== null && limit ? Math.round((usage / limit) * 10000) / 100 : null };
    },
  };
}
