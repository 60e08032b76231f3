/**
 * The emulator's bulk certified-mail area (`ws.pecmassiva.com`, REFERENCE §8), in the vendor's
 * envelopes (no `error` field; `POST /send` answers 201 with `sent` and `message_id`):
 *
 * - the bearer token (checked by the server) plus the mailbox's own credentials: `x-username` /
 *   `x-password` headers on GET and DELETE, `username` / `password` body fields on `POST /send`;
 *   wrong or missing → 401 "Authorization is not valid or empty";
 * - `POST /send`: one or many recipients, an HTML body, base64 attachments (`data:<mime>;base64,…`);
 *   at most one request per second per account, as the vendor states (a faster one: 429);
 * - receipts arrive over time per recipient on the emulator's scheduler: `ACCETTAZIONE:` after
 *   `acceptAfterMs`, then `CONSEGNA:` after `deliverAfterMs` — or `AVVISO DI MANCATA CONSEGNA:` for a
 *   recipient whose address is not on a certified domain or whose local part starts with `bounce`;
 *   `GET /send/{code}` lists them (with the `POSTA CERTIFICATA:` message itself), `DELETE` drops them;
 * - an inbox of messages (seeded, plus what arrives), search `q` over sender, recipient and subject,
 *   pages of 25 with `total`, `page`, `n_of_pages`; read and delete one by numeric id;
 * - `GET /quota/{mailbox}` (`INBOX`): usage and limit.
 *
 * Control hooks (`POST /_emulator/pecmassiva/<name>`): `account {username, password}` (a mailbox;
 * `bulk@pecmassiva.com` / `emulator-bulk-password` exists from the start), `timing {acceptAfterMs?,
 * deliverAfterMs?, displayNames?}` (≤ 0: only `advance`; `displayNames`: receipts name their recipient as
 * `"Name" <address>`, as some providers' receipts do), `advance {code?}` (every pending receipt now), `receive
 * {username, count}` (messages arrive in the inbox), `reset {}`.
 *
 * Threads and `cron-start` are in the contract's table but in no public source: their shapes are this
 * project's design, from the contract's words ("thread handling"; a thread is a conversation):
 * - `POST /threads {subject, participants[], body, username, password}` starts a conversation and sends
 *   its first message to the participants → 201 `{success, message, data: thread}`;
 * - `PATCH /threads/{id} {body, username, password}` sends the next message of the conversation → 200;
 * - `GET /threads` (x-username/x-password) lists them (`{id, subject, participants, messages, updated}`),
 *   `GET /threads/{id}` gives one with its messages, `DELETE /threads/{id}` deletes it;
 * - `GET /cron-start` runs the provider's dispatch job now: every receipt waiting is produced →
 *   `{success, message, data: {started: true, receipts: n}}`.
 */
import { type AreaModule, type EmuRequest, type EmuResponse } from '../core.ts';
import { isCertifiedDomain } from '../pec-domains.ts';
import { bodyOf, str } from '../pec-shared.ts';
import { Scheduler, type JobId } from '../scheduler.ts';
import { asText, isObj, type Obj } from '../../contract/values.ts';

export const DEFAULT_BULK_USERNAME = 'bulk@pecmassiva.com';
export const DEFAULT_BULK_PASSWORD = 'emulator-bulk-password';
export const INBOX_PAGE = 25;
/** Inbox limit (the spec says MB; the example's values look like KB). */
const QUOTA_LIMIT = 1_048_576;

interface Message {
  id: number;
  sender: string;
  recipient: string;
  date: string;
  object: string;
  body: string;
  size: number;
}

interface Receipt {
  sender: string;
  recipient: string;
  data: string;
  object: string;
  message: string;
}

interface Sending {
  code: string;
  receipts: Receipt[];
  jobs: JobId[];
  pending: Array<() => void>;
}

interface ThreadMessage {
  id: number;
  sender: string;
  recipients: string[];
  date: string;
  body: string;
  message_id: string;
}

interface Thread {
  id: string;
  subject: string;
  participants: string[];
  created: string;
  messages: ThreadMessage[];
}

interface Account {
  password: string;
  threads: Map<string, Thread>;
  inbox: Message[];
  nextId: number;
  sendings: Map<string, Sending>;
  lastSendAt: number;
}

const EMAIL = /^[^\s@"<>]+@[a-z0-9-]+(\.[a-z0-9-]+)+$/i;

const vendorFail = (status: number, message: string): EmuResponse => ({ status, json: { success: false, message } });
const unauthorized = (): EmuResponse => vendorFail(401, 'Authorization is not valid or empty');

/** RFC 2822 date as the vendor writes it (UTC here). */
const rfc2822 = (ms: number): string => new Date(ms).toUTCString().replace('GMT', '+0000');

export interface PecMassivaOptions {
  /** @default a new one */
  scheduler?: Scheduler;
  /** Acceptance receipt delay. @default 500 */
  acceptAfterMs?: number;
  /** Delivery (or non-delivery) receipt delay after acceptance. @default 1500 */
  deliverAfterMs?: number;
  /** Minimum milliseconds between two sends of one account (real time: the wire). @default 1000 */
  sendIntervalMs?: number;
}

export function createPecMassivaModule(opts: PecMassivaOptions = {}): AreaModule {
  const scheduler = opts.scheduler ?? new Scheduler();
  let acceptAfterMs = opts.acceptAfterMs ?? 500;
  let deliverAfterMs = opts.deliverAfterMs ?? 1500;
  const sendIntervalMs = opts.sendIntervalMs ?? 1000;
  let displayNames = false;
  /** A receipt's recipient: the address, or with a display name (`"Mario" <mario@x>`). */
  const receiptTo = (r: string): string => (displayNames ? `"${r.split('@')[0]}" <${r}>` : r);
  const accounts = new Map<string, Account>();
  let codeSeq = 0;

  const seed = (username: string, password: string): Account => {
    const acc: Account = { password, threads: new Map(), inbox: [], nextId: 1, sendings: new Map(), lastSendAt: 0 };
    accounts.set(username, acc);
    const base = Date.UTC(2026, 0, 5, 9, 0, 0);
    for (let i = 0; i < 60; i++) {
      const kind = i % 3 === 0 ? 'ACCETTAZIONE' : i % 3 === 1 ? 'CONSEGNA' : 'POSTA CERTIFICATA';
      const subject = i % 5 === 0 ? `Fattura ${1000 + i}` : `Comunicazione ${i}`;
      addMessage(acc, {
        sender: kind === 'POSTA CERTIFICATA' ? `cliente${i}@legalmail.it` : 'posta-certificata@pecmassiva.com',
        recipient: username,
        date: rfc2822(base + i * 3_600_000),
        object: `${kind}: ${subject}`,
        body: `Messaggio ${i}`,
      });
    }
    return acc;
  };
  const addMessage = (acc: Account, m: Omit<Message, 'id' | 'size'>): void => {
    acc.inbox.push({ ...m, id: acc.nextId++, size: 2 + m.body.length / 100 });
  };
  seed(DEFAULT_BULK_USERNAME, DEFAULT_BULK_PASSWORD);

  /** The account the headers (GET/DELETE) name with the right password, or null. */
  const byHeaders = (req: EmuRequest): Account | null => {
    const u = req.headers['x-username'];
    const p = req.headers['x-password'];
    const acc = typeof u === 'string' ? accounts.get(u.toLowerCase()) : undefined;
    return acc && typeof p === 'string' && p === acc.password ? acc : null;
  };

  const now = (): number => scheduler.now();

  const send = (req: EmuRequest): EmuResponse => {
    const body = bodyOf(req);
    const username = str(body.username)?.toLowerCase();
    const acc = username ? accounts.get(username) : undefined;
    if (!acc || body.password !== acc.password) return unauthorized();
    const recipients = (Array.isArray(body.recipient) ? body.recipient : [body.recipient]).map((r) => (typeof r === 'string' ? r.trim() : ''));
    const subject = str(body.subject);
    const html = typeof body.body === 'string' ? body.body : undefined;
    const sender = str(body.sender);
    if (!sender || !EMAIL.test(sender) || recipients.length === 0 || recipients.some((r) => !EMAIL.test(r)) || !subject || html === undefined)
      return vendorFail(400, 'Post parameter is not valid');
    const attachments = body.attachments === undefined ? [] : body.attachments;
    if (!Array.isArray(attachments) || attachments.some((a) => !isObj(a) || !str(a.name) || typeof a.file !== 'string' || !/^data:[^;,]+;base64,[A-Za-z0-9+/=\s]+$/.test(a.file))) {
      return vendorFail(400, 'Post parameter is not valid');
    }
    const wall = Date.now();
    if (wall - acc.lastSendAt < sendIntervalMs) return vendorFail(429, 'Too many requests: at most 1 request per second');
    acc.lastSendAt = wall;
    const stamp = new Date(now()).toISOString().replace(/\D/g, '').slice(0, 14);
    const code = `${stamp}${String(++codeSeq).padStart(2, '0')}`;
    const s: Sending = { code, receipts: [], jobs: [], pending: [] };
    acc.sendings.set(code, s);
    const title = `${subject} ${code}`;
    for (const r of recipients) {
      s.receipts.push({ sender: `"Per conto di: ${sender}" `, recipient: `"${r}" `, data: rfc2822(now()), object: `POSTA CERTIFICATA: ${title}`, message: html });
      const failed = !isCertifiedDomain(r) || /^bounce/i.test(r);
      const accept = (): void => {
        s.receipts.push({ sender: 'posta-certificata@pecmassiva.com', recipient: receiptTo(r), data: rfc2822(now()), object: `ACCETTAZIONE: ${title}`, message: '' });
        const deliver = (): void => {
          s.receipts.push({
            sender: 'posta-certificata@pecmassiva.com',
            recipient: receiptTo(r),
            data: rfc2822(now()),
            object: `${failed ? 'AVVISO DI MANCATA CONSEGNA' : 'CONSEGNA'}: ${title}`,
            message: '',
          });
          const to = accounts.get(r.toLowerCase());
          if (to && !failed) addMessage(to, { sender, recipient: r, date: rfc2822(now()), object: `POSTA CERTIFICATA: ${subject}`, body: html });
        };
        later(s, deliverAfterMs, deliver);
      };
      later(s, acceptAfterMs, accept);
    }
    return { status: 201, json: { success: true, sent: recipients.length, message: '', message_id: code } };
  };

  /** Runs `step` after `ms` on the scheduler, or keeps it for `advance` when delays are off. */
  const later = (s: Sending, ms: number, step: () => void): void => {
    if (ms > 0) {
      const id = scheduler.after(
        ms,
        () => {
          s.jobs = s.jobs.filter((j) => j !== id);
          step();
        },
        `pecmassiva ${s.code}`,
      );
      s.jobs.push(id);
    } else s.pending.push(step);
  };

  const advance = (code?: string): string[] => {
    const done: string[] = [];
    for (const acc of accounts.values()) {
      for (const s of acc.sendings.values()) {
        if (code !== undefined && s.code !== code) continue;
        let moved = false;
        // Acceptances queue their deliveries: run until nothing is left.
        for (let guard = 0; guard < 10 && (s.pending.length > 0 || s.jobs.length > 0); guard++) {
          for (const j of s.jobs.splice(0)) scheduler.cancel(j);
          const steps = s.pending.splice(0);
          for (const step of steps) step();
          moved ||= steps.length > 0;
        }
        if (moved) done.push(s.code);
      }
    }
    return done;
  };

  const inbox = (req: EmuRequest): EmuResponse => {
    const acc = byHeaders(req);
    if (!acc) return unauthorized();
    const q = (req.query.get('q') ?? '').trim().toLowerCase();
    const found = q === '' ? acc.inbox : acc.inbox.filter((m) => `${m.sender} ${m.recipient} ${m.object}`.toLowerCase().includes(q));
    const pages = Math.max(1, Math.ceil(found.length / INBOX_PAGE));
    const pageText = req.query.get('page') ?? '1';
    const page = /^\d+$/.test(pageText) && Number(pageText) >= 1 ? Number(pageText) : 1;
    const items = found.slice((page - 1) * INBOX_PAGE, page * INBOX_PAGE).map((m) => ({ sender: m.sender, recipient: m.recipient, date: m.date, object: m.object, id: m.id }));
    return { status: 200, json: { data: items, success: true, message: '', total: found.length, page, n_of_pages: pages } };
  };

  /** The account a body's `username` / `password` name, or null. */
  const byBody = (req: EmuRequest): Account | null => {
    const b = bodyOf(req);
    const u = str(b.username)?.toLowerCase();
    const acc = u ? accounts.get(u) : undefined;
    return acc && b.password === acc.password ? acc : null;
  };
  let threadSeq = 0;
  const threadView = (t: Thread): Obj => ({
    id: t.id,
    subject: t.subject,
    participants: [...t.participants],
    created: t.created,
    messages: t.messages.map((m) => ({ ...m, recipients: [...m.recipients] })),
  });
  const addThreadMessage = (acc: Account, t: Thread, sender: string, body: string): void => {
    const stamp = new Date(now()).toISOString().replace(/\D/g, '').slice(0, 14);
    const messageId = `${stamp}${String(++codeSeq).padStart(2, '0')}`;
    t.messages.push({ id: t.messages.length + 1, sender, recipients: [...t.participants], date: rfc2822(now()), body, message_id: messageId });
    void acc;
  };

  return {
    area: 'pecmassiva',
    scheduler,
    routes: [
      {
        method: 'POST',
        pattern: '/threads',
        handler: (req) => {
          const acc = byBody(req);
          if (!acc) return unauthorized();
          const b = bodyOf(req);
          const subject = str(b.subject);
          const participants = Array.isArray(b.participants) ? b.participants.map((p) => (typeof p === 'string' ? p.trim().toLowerCase() : '')) : [];
          const html = typeof b.body === 'string' && b.body.trim() !== '' ? b.body : undefined;
          if (!subject || participants.length === 0 || participants.some((p) => !EMAIL.test(p)) || html === undefined) return vendorFail(400, 'Post parameter is not valid');
          const t: Thread = { id: `${Date.now().toString(36)}${(++threadSeq).toString(36)}`, subject, participants, created: rfc2822(now()), messages: [] };
          addThreadMessage(acc, t, str(b.username)!.toLowerCase(), html);
          acc.threads.set(t.id, t);
          return { status: 201, json: { success: true, message: '', data: threadView(t) } };
        },
      },
      {
        method: 'PATCH',
        pattern: '/threads/:id',
        handler: (req, p) => {
          const acc = byBody(req);
          if (!acc) return unauthorized();
          const t = acc.threads.get(p.id ?? '');
          if (!t) return vendorFail(404, 'Thread not found');
          const html = typeof bodyOf(req).body === 'string' ? String(bodyOf(req).body) : '';
          if (html.trim() === '') return vendorFail(400, 'Post parameter is not valid');
          addThreadMessage(acc, t, str(bodyOf(req).username)!.toLowerCase(), html);
          return { status: 200, json: { success: true, message: '', data: threadView(t) } };
        },
      },
      {
        method: 'GET',
        pattern: '/threads',
        handler: (req) => {
          const acc = byHeaders(req);
          if (!acc) return unauthorized();
          const list = [...acc.threads.values()].map((t) => ({
            id: t.id,
            subject: t.subject,
            participants: [...t.participants],
            messages: t.messages.length,
            updated: t.messages.at(-1)?.date ?? t.created,
          }));
          return { status: 200, json: { data: list, success: true, message: '' } };
        },
      },
      {
        method: 'GET',
        pattern: '/threads/:id',
        handler: (req, p) => {
          const acc = byHeaders(req);
          if (!acc) return unauthorized();
          const t = acc.threads.get(p.id ?? '');
          return t ? { status: 200, json: { data: threadView(t), success: true, message: '' } } : vendorFail(404, 'Thread not found');
        },
      },
      {
        method: 'DELETE',
        pattern: '/threads/:id',
        handler: (req, p) => {
          const acc = byHeaders(req);
          if (!acc) return unauthorized();
          return acc.threads.delete(p.id ?? '') ? { status: 200, json: { success: true, message: 'Thread deleted' } } : vendorFail(404, 'Thread not found');
        },
      },
      {
        method: 'GET',
        pattern: '/cron-start',
        handler: () => {
          let receipts = 0;
          for (const acc of accounts.values()) for (const s of acc.sendings.values()) receipts += s.pending.length + s.jobs.length;
          advance();
          return { status: 200, json: { success: true, message: '', data: { started: true, receipts } } };
        },
      },
      { method: 'POST', pattern: '/send', handler: send },
      {
        method: 'GET',
        pattern: '/send/:code',
        handler: (req, p) => {
          const acc = byHeaders(req);
          if (!acc) return unauthorized();
          const s = acc.sendings.get(p.code ?? '');
          if (!s) return vendorFail(404, 'Result empty');
          return { status: 200, json: { data: s.receipts.map((r) => ({ ...r })), success: true, message: '' } };
        },
      },
      {
        method: 'DELETE',
        pattern: '/send/:code',
        handler: (req, p) => {
          const acc = byHeaders(req);
          if (!acc) return unauthorized();
          const s = acc.sendings.get(p.code ?? '');
          if (!s) return vendorFail(404, 'Email not found');
          for (const j of s.jobs) scheduler.cancel(j);
          acc.sendings.delete(s.code);
          return { status: 200, json: { success: true, message: 'Operation succefull' } };
        },
      },
      { method: 'GET', pattern: '/inbox', handler: inbox },
      {
        method: 'GET',
        pattern: '/inbox/:id',
        handler: (req, p) => {
          const acc = byHeaders(req);
          if (!acc) return unauthorized();
          const m = acc.inbox.find((x) => String(x.id) === p.id);
          if (!m) return vendorFail(404, 'Message not found');
          return { status: 200, json: { data: { sender: m.sender, recipient: m.recipient, date: m.date, object: m.object, body: m.body }, success: true, message: '' } };
        },
      },
      {
        method: 'DELETE',
        pattern: '/inbox/:id',
        handler: (req, p) => {
          const acc = byHeaders(req);
          if (!acc) return unauthorized();
          const i = acc.inbox.findIndex((x) => String(x.id) === p.id);
          if (i < 0) return vendorFail(404, 'Message not found');
          acc.inbox.splice(i, 1);
          return { status: 200, json: { success: true, message: 'Message deleted' } };
        },
      },
      {
        method: 'GET',
        pattern: '/quota/:mailbox',
        handler: (req, p) => {
          const acc = byHeaders(req);
          if (!acc) return unauthorized();
          if ((p.mailbox ?? '').toUpperCase() !== 'INBOX') return vendorFail(400, 'An error occured: the requested mailbox might be unavailable');
          const usage = Math.round(acc.inbox.reduce((sum, m) => sum + m.size, 0) * 1024);
          return { status: 200, json: { data: { usage, limit: QUOTA_LIMIT }, success: true, message: '' } };
        },
      },
    ],
    control: {
      account: (body) => {
        const b: Obj = isObj(body) ? body : {};
        const u = str(b.username)?.toLowerCase();
        const p = typeof b.password === 'string' ? b.password : undefined;
        if (!u || !p) throw new Error('account: username and password required');
        seed(u, p);
        return { username: u };
      },
      timing: (body) => {
        const b: Obj = isObj(body) ? body : {};
        if (b.acceptAfterMs !== undefined) acceptAfterMs = Number(b.acceptAfterMs);
        if (b.deliverAfterMs !== undefined) deliverAfterMs = Number(b.deliverAfterMs);
        if (b.displayNames !== undefined) displayNames = b.displayNames === true;
        return { acceptAfterMs, deliverAfterMs, displayNames };
      },
      advance: (body) => ({ advanced: advance(isObj(body) && typeof body.code === 'string' ? body.code : undefined) }),
      receive: (body) => {
        const b: Obj = isObj(body) ? body : {};
        const acc = accounts.get(str(b.username)?.toLowerCase() ?? '');
        if (!acc) throw new Error('receive: unknown username');
        const n = Number(b.count ?? 1);
        for (let i = 0; i < n; i++)
          addMessage(acc, {
            sender: 'mittente@legalmail.it',
            recipient: String(b.username),
            date: rfc2822(now()),
            object: `POSTA CERTIFICATA: ${asText(b.subject, 'Nuovo messaggio')} ${i}`,
            body: 'Nuovo messaggio',
          });
        return { inbox: acc.inbox.length };
      },
      reset: () => {
        for (const acc of accounts.values()) for (const s of acc.sendings.values()) for (const j of s.jobs) scheduler.cancel(j);
        accounts.clear();
        seed(DEFAULT_BULK_USERNAME, DEFAULT_BULK_PASSWORD);
        return { reset: true };
      },
    },
    close: () => {
      for (const acc of accounts.values()) for (const s of acc.sendings.values()) for (const j of s.jobs) scheduler.cancel(j);
    },
  };
}
