/** Bulk certified mail's `Mutation` fields: sending (queued, within the budgets), cancelling, deleting, threads, the inbox. */
import { GraphQLError } from 'graphql';
import { badUserInput } from '../../../runtime/errors.ts';
import { idempotencyKey } from '../../../runtime/tracking/args.ts';
import { email, requiredText } from '../../../runtime/validate.ts';
import { UpstreamError } from '../../../upstream/errors.ts';
import type { MutationResolvers } from '../../__generated__/resolvers-types.ts';
import { BULK, type BulkService } from '../../bulk.ts';
import { isObj } from '../../../../contract/values.ts';
import { credentials, headersOf, readThread, refusedCredentials, sendRequest, thread, threadId } from './shared.ts';

export function mutationResolvers(bulk: BulkService, maxBytes: number): MutationResolvers {
  return {
    sendCertifiedMail: (_root, { input, credentials: c, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const creds = credentials(c);
      const request = sendRequest(input, maxBytes);
      // The sending's requests, all of them, must fit the operation's and the day's budgets before anything is queued.
      return (async () => {
        await ctx.meter.fits(bulk.estimate(request.recipients.length), 'pecmassiva POST /send');
        return bulk.queue(ctx.auth, creds, request, idem, ctx.meter.background());
      })();
    },
    cancelBulkSending: async (_root, { id }, ctx) => {
      if (!(await bulk.get(ctx.auth.tenant, id))) throw new GraphQLError(`no sending ${id} of this account`, { extensions: { code: 'NOT_FOUND' } });
      await bulk.cancel(ctx.auth.tenant, id);
      const s = await bulk.get(ctx.auth.tenant, id);
      if (!s) throw new GraphQLError(`no sending ${id} of this account`, { extensions: { code: 'NOT_FOUND' } });
      return s;
    },
    deleteBulkSending: async (_root, { credentials: c, id }, ctx) => {
      const creds = credentials(c);
      // What is still queued is not sent (a deleted sending sends nothing more).
      const cancelled = await bulk.cancel(ctx.auth.tenant, id);
      const codes = await bulk.codesOf(ctx.auth.tenant, id);
      if (codes.length === 0) {
        if (cancelled) return true;
        throw new GraphQLError(`no sent sending ${id} of this account`, { extensions: { code: 'NOT_FOUND' } });
      }
      let deleted = true;
      for (const code of codes) {
        try {
          await ctx.upstream.call<unknown>(ctx, BULK.deleteSending, { params: { code }, headers: headersOf(creds) });
        } catch (err) {
          if (err instanceof UpstreamError && err.status === 404) deleted = false;
          else throw refusedCredentials(err);
        }
      }
      await bulk.forget(ctx.auth.tenant, id);
      return deleted;
    },
    startBulkThread: async (_root, { credentials: c, input, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const creds = credentials(c);
      const subject = requiredText(input.subject, 'input.subject', 500);
      if (input.participants.length === 0 || input.participants.length > 100) throw badUserInput('input.participants: 1 to 100 addresses', 'input.participants');
      const participants = input.participants.map((p, i) => email(p, `input.participants[${i}]`).toLowerCase());
      if (input.html.trim() === '' || input.html.length > 1_000_000) throw badUserInput('input.html: 1 character to 1 MB', 'input.html');
      try {
        return await bulk.keyed(
          ctx.auth.tenant,
          idem,
          { op: 'thread', username: creds.username, subject, participants, html: input.html },
          async () => {
            const data = await ctx.upstream.call<unknown>(ctx, BULK.threadStart, {
              body: { subject, participants, body: input.html, username: creds.username, password: creds.password },
            });
            const t = thread(data);
            if (!t) throw new UpstreamError('decode', 'the answer carries no thread', 'pecmassiva', 'threads', 201);
            return { id: t.id, value: t };
          },
          (id) => readThread(ctx, creds, id),
        );
      } catch (err) {
        throw refusedCredentials(err);
      }
    },
    replyBulkThread: async (_root, { credentials: c, id, html, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const creds = credentials(c);
      const tid = threadId(id);
      if (html.trim() === '' || html.length > 1_000_000) throw badUserInput('html: 1 character to 1 MB', 'html');
      try {
        return await bulk.keyed(
          ctx.auth.tenant,
          idem,
          { op: 'reply', username: creds.username, thread: tid, html },
          async () => {
            const t = thread(
              await ctx.upstream.call<unknown>(ctx, BULK.threadReply, { params: { id: tid }, body: { body: html, username: creds.username, password: creds.password } }),
            );
            if (!t) throw new UpstreamError('decode', 'the answer carries no thread', 'pecmassiva', 'threads', 200);
            return { id: t.id, value: t };
          },
          (tidDone) => readThread(ctx, creds, tidDone),
        );
      } catch (err) {
        throw refusedCredentials(err);
      }
    },
    deleteBulkThread: async (_root, { credentials: c, id }, ctx) => {
      const creds = credentials(c);
      try {
        await ctx.upstream.call<unknown>(ctx, BULK.threadDelete, { params: { id: threadId(id) }, headers: headersOf(creds) });
        return true;
      } catch (err) {
        if (err instanceof UpstreamError && err.status === 404) return false;
        throw refusedCredentials(err);
      }
    },
    startBulkDispatch: async (_root, _args, ctx) => {
      const data = await ctx.upstream.call<unknown>(ctx, BULK.cronStart);
      return isObj(data) && typeof data.receipts === 'number' ? data.receipts : 0;
    },
    deleteBulkInboxMessage: async (_root, { credentials: c, id }, ctx) => {
      const creds = credentials(c);
      if (!/^\d{1,12}$/.test(id)) throw badUserInput('id must be a number', 'id');
      try {
        await ctx.upstream.call<unknown>(ctx, BULK.deleteMessage, { params: { id }, headers: headersOf(creds) });
        return true;
      } catch (err) {
        if (err instanceof UpstreamError && err.status === 404) return false;
        throw refusedCredentials(err);
      }
    },
  };
}
