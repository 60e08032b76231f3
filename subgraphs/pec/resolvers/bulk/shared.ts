/**
 * What the bulk certified mail resolvers share: input checks (credentials, a sending, ids), the
 * service's shapes read into GraphQL ones (threads, messages, receipts), inbox cursors.
 */
import { cursorOffset, offsetCursor } from '../../../runtime/cursor.ts';
import { GraphQLError } from 'graphql';
import { badUserInput } from '../../../runtime/errors.ts';
import { email, requiredText } from '../../../runtime/validate.ts';
import { UpstreamError } from '../../../upstream/errors.ts';
import type { CallContext, Upstream } from '../../../upstream/upstream.ts';
import type { BulkCredentialsInput, BulkInboxMessage, BulkReceipt, BulkReceiptKind, BulkThread, BulkSendInput } from '../../__generated__/resolvers-types.ts';
import { bare, BULK, type BulkCredentials, type SendRequest } from '../../bulk.ts';
import { asText, isObj, objects, type Obj } from '../../../../contract/values.ts';

export const PAGE = 25;

export function credentials(c: BulkCredentialsInput): BulkCredentials {
  const username = email(c.username, 'credentials.username').toLowerCase();
  if (typeof c.password !== 'string' || c.password.length === 0 || c.password.length > 200)
    throw badUserInput('credentials.password must be 1 to 200 characters', 'credentials.password');
  return { username, password: c.password };
}

export const headersOf = (c: BulkCredentials): Record<string, string> => ({ 'x-username': c.username, 'x-password': c.password });

export function sendRequest(input: BulkSendInput, maxBytes: number): SendRequest {
  const sender = email(input.sender, 'input.sender').toLowerCase();
  if (input.recipients.length === 0 || input.recipients.length > 5000) throw badUserInput('input.recipients: 1 to 5000 addresses', 'input.recipients');
  const recipients = input.recipients.map((r, i) => email(r, `input.recipients[${i}]`).toLowerCase());
  // One message per address: a second one would be paid for and could not be told apart in the receipts.
  const first = new Map<string, number>();
  recipients.forEach((r, i) => {
    const seen = first.get(r);
    if (seen !== undefined) throw badUserInput(`input.recipients[${i}] repeats input.recipients[${seen}] (${r})`, `input.recipients[${i}]`);
    first.set(r, i);
  });
  const subject = requiredText(input.subject, 'input.subject', 500);
  const html = typeof input.html === 'string' ? input.html : '';
  if (html.trim() === '' || html.length > 1_000_000) throw badUserInput('input.html: 1 character to 1 MB', 'input.html');
  const attachments = (input.attachments ?? []).map((a, i) => {
    const field = `input.attachments[${i}]`;
    const name = requiredText(a.name, `${field}.name`, 200);
    if (!/^[\w.+-]+\/[\w.+-]+$/.test(a.contentType)) throw badUserInput(`${field}.contentType must be a media type`, `${field}.contentType`);
    const b64 = a.content.replace(/^data:[^,]*;base64,/i, '').replace(/\s+/g, '');
    if (b64 === '' || b64.length % 4 === 1 || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) throw badUserInput(`${field}.content must be base64`, `${field}.content`);
    if (Math.floor((b64.length * 3) / 4) > maxBytes) throw badUserInput(`${field}.content is larger than ${Math.floor(maxBytes / 1024)} KiB`, `${field}.content`);
    return { name, file: `data:${a.contentType};base64,${b64}` };
  });
  return { sender, recipients, subject, html, attachments };
}

/** A thread as the service gives it (`messages` a list, or a count in lists). */
export function thread(t: unknown): BulkThread | null {
  if (!isObj(t) || (typeof t.id !== 'string' && typeof t.id !== 'number')) return null;
  const msgs = objects(t.messages);
  return {
    id: String(t.id),
    subject: raw(t.subject),
    participants: Array.isArray(t.participants) ? t.participants.map(String) : [],
    messageCount: typeof t.messages === 'number' ? t.messages : msgs.length,
    messages: msgs.map((m) => ({
      id: asText(m.id),
      sender: raw(m.sender),
      recipients: Array.isArray(m.recipients) ? m.recipients.map(String) : [],
      date: raw(m.date),
      body: raw(m.body),
      messageId: raw(m.message_id),
    })),
    updated: raw(t.updated) ?? raw(msgs.at(-1)?.date) ?? raw(t.created),
  };
}

export const threadId = (id: string): string => {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw badUserInput('id must be a thread id', 'id');
  return id;
};

export const refusedCredentials = (err: unknown): unknown =>
  err instanceof UpstreamError && err.status === 401
    ? new GraphQLError('the bulk mailbox refused these credentials', { extensions: { code: 'UNAUTHENTICATED', field: 'credentials' } })
    : err;

export const cursorOf = (offset: number): string => offsetCursor('inbox', offset);
export const offsetOf = (after: string | null | undefined): number => cursorOffset('inbox', after, 'after must be an endCursor of bulkInbox');

/** A text exactly as the service wrote it (the receipts' quoted, space-padded addresses included). */
export const raw = (v: unknown): string | null => asText(v, null);

/** What an e-mail of a sending is, from its subject's prefix. */
export function receiptKind(subject: string): BulkReceiptKind {
  if (/^ACCETTAZIONE:/i.test(subject)) return 'ACCEPTANCE';
  if (/^(AVVISO DI )?MANCATA CONSEGNA:/i.test(subject)) return 'NON_DELIVERY';
  if (/^CONSEGNA:/i.test(subject)) return 'DELIVERY';
  if (/^POSTA CERTIFICATA:/i.test(subject)) return 'MESSAGE';
  return 'OTHER';
}

/** One item of `GET /send/{code}` (`{sender, recipient, data, object, message}`). */
export function receipt(r: Obj): BulkReceipt {
  const subject = raw(r.object);
  const date = raw(r.data);
  const t = date === null ? Number.NaN : Date.parse(date);
  const address = bare(r.recipient);
  return {
    kind: receiptKind(subject ?? ''),
    sender: raw(r.sender),
    recipient: raw(r.recipient),
    recipientAddress: /^[^\s@]+@[^\s@]+$/.test(address) ? address : null,
    date,
    dateTime: Number.isNaN(t) ? null : new Date(t).toISOString(),
    subject,
    body: raw(r.message),
  };
}

/** A sending code as the service gives it (`message_id`, e.g. `2020082610003492`). */
export function sendingCode(value: string): string {
  const v = (value ?? '').trim();
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(v)) throw badUserInput('code must be 1 to 64 letters, digits, ., _ or - (the code POST /send answered)', 'code');
  return v;
}

export const message = (m: unknown): BulkInboxMessage | null =>
  isObj(m) ? { id: asText(m.id), sender: raw(m.sender), recipient: raw(m.recipient), date: raw(m.date), subject: raw(m.object), body: raw(m.body) } : null;

/** A thread as it stands (GET /threads/{id}), for an order replayed under its idempotency key. */
export const readThread = async (ctx: CallContext & { upstream: Upstream }, creds: BulkCredentials, id: string): Promise<BulkThread> => {
  const t = thread(await ctx.upstream.call<unknown>(ctx, BULK.thread, { params: { id }, headers: headersOf(creds) }));
  if (!t) throw new UpstreamError('decode', 'the answer carries no thread', 'pecmassiva', 'threads', 200);
  return t;
};
