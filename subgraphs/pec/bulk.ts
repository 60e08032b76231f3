/**
 * Bulk certified mail (`ws.pecmassiva.com`): sendings queued by the layer and sent at the vendor's
 * pace (one request per second per account: a queue per tenant and mailbox, never a failure), their
 * receipts read per recipient over time (acceptance, delivery, non-delivery) and pushed on the bus
 * (`sendingUpdated`, latest state first, per tenant), and the mailbox's inbox and quota.
 *
 * The mailbox credentials (`x-username` / `x-password`) come with each operation. They are sent to
 * the service and nowhere else: never logged, never part of a response, an event or a cache key.
 * While a sending is queued or its receipts are read, the store (`bulk-store.ts`: memory, or Redis
 * with `REDIS_URL`, so a restart resumes the queue) keeps the password and the upstream token sealed
 * under `LAYER_SECRET`, per sending; each batch is claimed once there, so nothing is sent twice.
 *
 * Settings (`PECMASSIVA_*` of the env): `BATCH_SIZE` recipients per request (50), `SEND_INTERVAL_MS`
 * between two requests of one mailbox (1050), `POLL_MS` between two receipt reads of a sending
 * (2000), `POLL_MAX_CALLS_PER_MIN` (60, shared by every sending of the process), `GIVE_UP_MS` after
 * which receipts still missing are no longer read (48 h).
 */
import { randomBytes } from 'node:crypto';
import { GraphQLError } from 'graphql';
import type { EventBus } from '../runtime/bus.ts';
import { MemoryBulkStore, type BulkStore, type StoredSending } from './bulk-store.ts';
import { MemoryEventBus } from '../runtime/bus.ts';
import { TokenCipher } from '../runtime/tracking/cipher.ts';
import type { UpstreamAuth } from '../runtime/context.ts';
import type { SubgraphDeps } from '../runtime/server.ts';
import { CostMeter } from '../upstream/cost.ts';
import type { Endpoint } from '../upstream/endpoint.ts';
import { mayHaveBeenCarriedOut, UpstreamError } from '../upstream/errors.ts';
import type { CallContext, Upstream } from '../upstream/upstream.ts';
import { isObj, text, type Obj } from './model.ts';

const WRITE_TIMEOUT = 30_000;
const bulk = (method: Endpoint['method'], path: string, extra: Partial<Endpoint> = {}): Endpoint => ({ area: 'pecmassiva', method, path, ...extra });

/**
 * The bulk area's endpoints (one table). Threads and cron-start are in the contract's table but in
 * no public source: their paths are the contract's, their shapes this project's design (see the
 * emulator's `pecmassiva/index.ts` and the README).
 */
export const BULK = {
  /** 201 `{success, sent, message, message_id}`: no `data`, so the whole body is read. */
  send: bulk('POST', '/send', { decode: 'raw', timeoutMs: WRITE_TIMEOUT }),
  receipts: bulk('GET', '/send/{code}'),
  deleteSending: bulk('DELETE', '/send/{code}', { decode: 'raw' }),
  /** `{data, total, page, n_of_pages}`: the whole body is read. */
  inbox: bulk('GET', '/inbox', { decode: 'raw' }),
  message: bulk('GET', '/inbox/{id}'),
  deleteMessage: bulk('DELETE', '/inbox/{id}', { decode: 'raw' }),
  quota: bulk('GET', '/quota/{mailbox}'),
  threadStart: bulk('POST', '/threads', { timeoutMs: WRITE_TIMEOUT }),
  threadReply: bulk('PATCH', '/threads/{id}', { timeoutMs: WRITE_TIMEOUT }),
  threads: bulk('GET', '/threads'),
  thread: bulk('GET', '/threads/{id}'),
  threadDelete: bulk('DELETE', '/threads/{id}', { decode: 'raw' }),
  cronStart: bulk('GET', '/cron-start'),
} as const;

export interface BulkCredentials {
  username: string;
  password: string;
}

export type RecipientState = 'QUEUED' | 'SENT' | 'ACCEPTED' | 'DELIVERED' | 'FAILED' | 'UNKNOWN';

export interface RecipientStatus {
  address: string;
  state: RecipientState;
  /** The service's sending code (message_id) of the request that carried it. */
  code: string | null;
  acceptedAt: string | null;
  deliveredAt: string | null;
  failedAt: string | null;
  reason: string | null;
}

/** A sending as the layer tracks it (what `BulkSending` shows); never holds credentials. */
export interface Sending {
  id: string;
  tenant: string;
  sender: string;
  subject: string;
  createdAt: string;
  recipients: RecipientStatus[];
  /** Grows with every change (subscribers skip stale events). */
  seq: number;
  done: boolean;
}

export interface SendRequest {
  sender: string;
  recipients: string[];
  subject: string;
  html: string;
  attachments: Array<{ name: string; file: string }>;
}

interface Job {
  sending: Sending;
  auth: UpstreamAuth;
  /** Charges the tenant's day budget and free tiers (a plain meter after a restart: the ledger is not at hand). */
  meter: CostMeter;
  creds: BulkCredentials;
  request: SendRequest;
  /** Indexes of `recipients` per batch, still to send. */
  batches: number[][];
  /** Codes whose receipts are still being read. */
  codes: Set<string>;
  nextPollAt: number;
  startedAt: number;
}

const envNum = (env: NodeJS.ProcessEnv, name: string, dflt: number): number => {
  const v = Number(env[name]);
  return env[name] !== undefined && env[name] !== '' && Number.isFinite(v) && v > 0 ? v : dflt;
};

/** A receipt's recipient as the service writes it (`"a@x" `, `<a@x>`) → `a@x`. */
const bare = (v: unknown): string => (text(v) ?? '').replace(/["<>]/g, '').trim().toLowerCase();

export class BulkService {
  readonly bus: EventBus<Sending>;
  readonly batchSize: number;
  /** How often a subscribed inbox is read (`PECMASSIVA_INBOX_POLL_MS`). @default 30000 */
  readonly inboxPollMs: number;
  private readonly sendIntervalMs: number;
  private readonly pollMs: number;
  private readonly pollPerMin: number;
  private readonly giveUpMs: number;
  private readonly store: BulkStore;
  private readonly cipher: TokenCipher;
  private readonly jobs = new Map<string, Job>();
  /** One queue per tenant and mailbox: the sending ids in order. */
  private readonly queues = new Map<string, string[]>();
  private readonly lastSend = new Map<string, number>();
  private upstream: Upstream | null = null;
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private pollWindow = { start: 0, calls: 0 };

  constructor(env: NodeJS.ProcessEnv, stores: { store?: BulkStore; bus?: EventBus<Sending>; cipher?: TokenCipher } = {}) {
    this.bus = stores.bus ?? new MemoryEventBus<Sending>();
    this.store = stores.store ?? new MemoryBulkStore();
    this.cipher = stores.cipher ?? new TokenCipher(env.LAYER_SECRET ?? 'pecmassiva-memory-only', 'openapi-supergraph pecmassiva secrets v1');
    this.batchSize = Math.floor(envNum(env, 'PECMASSIVA_BATCH_SIZE', 50));
    this.inboxPollMs = envNum(env, 'PECMASSIVA_INBOX_POLL_MS', 30_000);
    this.sendIntervalMs = envNum(env, 'PECMASSIVA_SEND_INTERVAL_MS', 1050);
    this.pollMs = envNum(env, 'PECMASSIVA_POLL_MS', 2000);
    this.pollPerMin = envNum(env, 'PECMASSIVA_POLL_MAX_CALLS_PER_MIN', 60);
    this.giveUpMs = envNum(env, 'PECMASSIVA_GIVE_UP_MS', 48 * 3600 * 1000);
  }

  topic(tenant: string, id: string): string {
    return `pecmassiva:${tenant}:${id}`;
  }

  /** A sending of the tenant: this process's, else the stored one (another replica's, or before a restart). */
  async get(tenant: string, id: string): Promise<Sending | null> {
    const mine = this.jobs.get(id)?.sending ?? (await this.store.load(id))?.sending ?? null;
    return mine && mine.tenant === tenant ? mine : null;
  }

  private async persist(job: Job): Promise<void> {
    const stored: StoredSending = {
      sending: job.sending,
      username: job.creds.username,
      sealedToken: this.cipher.seal(job.auth.token),
      sealedPassword: this.cipher.seal(job.creds.password),
      request: job.request,
      batches: job.batches,
      codes: [...job.codes],
      startedAt: job.startedAt,
    };
    await this.store.save(stored);
  }

  /** Takes up the sendings left unfinished (a restart): their queues and receipts go on. */
  private async resume(): Promise<void> {
    for (const st of await this.store.unfinished()) {
      if (this.jobs.has(st.sending.id)) continue;
      const token = this.cipher.open(st.sealedToken);
      const password = this.cipher.open(st.sealedPassword);
      const job: Job = {
        sending: st.sending,
        auth: { token: token ?? '', tenant: st.sending.tenant },
        meter: new CostMeter(),
        creds: { username: st.username, password: password ?? '' },
        request: st.request,
        batches: st.batches,
        codes: new Set(st.codes),
        nextPollAt: 0,
        startedAt: st.startedAt,
      };
      this.jobs.set(st.sending.id, job);
      if (token === undefined || password === undefined) {
        // Sealed under another secret: nothing more can be sent or read for it.
        for (const r of job.sending.recipients) if (r.state === 'QUEUED') Object.assign(r, { state: 'FAILED', reason: 'the layer can no longer open the credentials (LAYER_SECRET changed)', failedAt: new Date().toISOString() });
        job.batches = [];
        job.codes.clear();
        await this.changed(job);
        continue;
      }
      const q = this.queueKey(job.sending.tenant, st.username);
      if (job.batches.length > 0) this.queues.set(q, [...(this.queues.get(q) ?? []), st.sending.id]);
    }
  }

  /** The service's codes (message_id) of a sending's requests. */
  async codesOf(tenant: string, id: string): Promise<string[]> {
    const s = await this.get(tenant, id);
    return s ? [...new Set(s.recipients.map((r) => r.code).filter((c): c is string => c !== null))] : [];
  }

  /** Stops reading a sending's receipts (its messages were deleted upstream); the credentials go. */
  async forget(tenant: string, id: string): Promise<void> {
    const job = this.jobs.get(id);
    if (!job || job.sending.tenant !== tenant) return;
    job.codes.clear();
    if (job.batches.length === 0) await this.changed(job);
  }

  start(deps: SubgraphDeps): () => Promise<void> {
    this.upstream = deps.upstream;
    const resumed = this.resume().catch((err: unknown) => console.error(`[pecmassiva] unfinished sendings not resumed: ${(err as Error).message}`));
    this.timer = setInterval(() => void resumed.then(() => this.tick()), 100);
    this.timer.unref();
    return async () => {
      if (this.timer) clearInterval(this.timer);
      this.timer = null;
      await this.ticking;
      this.upstream = null;
    };
  }

  /**
   * Queues a sending (nothing is sent here: the queue sends at the service's pace). The same
   * idempotency key of a tenant returns the same sending and never queues twice.
   */
  async queue(auth: UpstreamAuth, creds: BulkCredentials, request: SendRequest, key: string | null, meter: CostMeter = new CostMeter()): Promise<Sending> {
    const id = randomBytes(12).toString('hex');
    if (key !== null) {
      const held = await this.store.claimKey(auth.tenant, key, id);
      if (held !== null) {
        const known = await this.get(auth.tenant, held);
        if (known) return known;
        throw new GraphQLError(`idempotencyKey "${key}" is being used by a sending still being queued; retry in a moment`, { extensions: { code: 'OUTCOME_UNKNOWN', idempotencyKey: key } });
      }
    }
    const sending: Sending = {
      id,
      tenant: auth.tenant,
      sender: request.sender,
      subject: request.subject,
      createdAt: new Date().toISOString(),
      recipients: request.recipients.map((address) => ({ address, state: 'QUEUED', code: null, acceptedAt: null, deliveredAt: null, failedAt: null, reason: null })),
      seq: 1,
      done: false,
    };
    const batches: number[][] = [];
    for (let i = 0; i < request.recipients.length; i += this.batchSize) batches.push(request.recipients.slice(i, i + this.batchSize).map((_, k) => i + k));
    const job: Job = { sending, auth, meter, creds, request, batches, codes: new Set(), nextPollAt: 0, startedAt: Date.now() };
    this.jobs.set(id, job);
    await this.persist(job);
    const q = this.queueKey(auth.tenant, creds.username);
    this.queues.set(q, [...(this.queues.get(q) ?? []), id]);
    await this.bus.publish(this.topic(auth.tenant, id), structuredClone(sending));
    void this.tick();
    return sending;
  }

  private queueKey(tenant: string, username: string): string {
    return `${tenant}\u0000${username.toLowerCase()}`;
  }

  /** One round: each mailbox's queue sends its next batch when its interval allows; receipts are read. */
  tick(): Promise<void> {
    if (this.ticking) return this.ticking;
    this.ticking = this.round().finally(() => {
      this.ticking = null;
    });
    return this.ticking;
  }

  private async round(): Promise<void> {
    const upstream = this.upstream;
    if (!upstream) return;
    const now = Date.now();
    const sends: Array<Promise<void>> = [];
    for (const [q, ids] of this.queues) {
      if (now - (this.lastSend.get(q) ?? 0) < this.sendIntervalMs) continue;
      const job = ids.map((id) => this.jobs.get(id)).find((j) => j && j.batches.length > 0);
      if (!job) {
        this.queues.delete(q);
        continue;
      }
      this.lastSend.set(q, now);
      sends.push(this.sendBatch(upstream, job));
    }
    await Promise.allSettled(sends);
    for (const job of [...this.jobs.values()]) {
      if (job.codes.size === 0 || Date.now() < job.nextPollAt) continue;
      if (!this.pollAllowed()) break;
      job.nextPollAt = Date.now() + this.pollMs;
      await this.readReceipts(upstream, job).catch((err: unknown) => console.warn(`[pecmassiva] receipts of sending ${job.sending.id} not read: ${(err as Error).message}`));
    }
  }

  private pollAllowed(): boolean {
    const now = Date.now();
    if (now - this.pollWindow.start >= 60_000) this.pollWindow = { start: now, calls: 0 };
    if (this.pollWindow.calls >= this.pollPerMin) return false;
    this.pollWindow.calls++;
    return true;
  }

  private ctxOf(upstream: Upstream, job: Job): CallContext & { upstream: Upstream } {
    return { auth: job.auth, meter: job.meter, upstream };
  }

  /** Sends the job's next batch; a refusal for the pace (429) or the layer's own limiter puts it back. */
  private async sendBatch(upstream: Upstream, job: Job): Promise<void> {
    const batch = job.batches[0]!;
    const r = job.request;
    // Claimed once, whatever restarts or runs twice: a batch is never sent twice.
    if (!(await this.store.claimBatch(job.sending.id, batch[0]!))) {
      job.batches.shift();
      for (const i of batch) {
        const rec = job.sending.recipients[i]!;
        if (rec.state === 'QUEUED') Object.assign(rec, { state: 'UNKNOWN', reason: 'taken by an earlier process that stopped before the answer: it may have been sent' });
      }
      await this.changed(job);
      return;
    }
    const body = {
      sender: r.sender,
      recipient: batch.map((i) => r.recipients[i]!),
      subject: r.subject,
      body: r.html,
      attachments: r.attachments,
      username: job.creds.username,
      password: job.creds.password,
    };
    let answer: unknown;
    try {
      answer = await upstream.call<unknown>(this.ctxOf(upstream, job), BULK.send, { body });
    } catch (err) {
      if (err instanceof UpstreamError && (err.status === 429 || err.graphqlCode === 'RATE_LIMITED') && !mayHaveBeenCarriedOut(err)) {
        // Not sent: the next round tries again, under a new claim.
        await this.store.releaseBatch?.(job.sending.id, batch[0]!);
        return;
      }
      job.batches.shift();
      // Sent without an answer: it may have gone out. Never sent again (no message twice).
      const state: RecipientState = err instanceof UpstreamError && mayHaveBeenCarriedOut(err) ? 'UNKNOWN' : 'FAILED';
      const reason = err instanceof UpstreamError ? `${err.graphqlCode}: ${err.message}` : String(err);
      for (const i of batch) Object.assign(job.sending.recipients[i]!, { state, reason, failedAt: state === 'FAILED' ? new Date().toISOString() : null });
      await this.changed(job);
      return;
    }
    job.batches.shift();
    const code = isObj(answer) ? text(answer.message_id) : null;
    for (const i of batch) Object.assign(job.sending.recipients[i]!, { state: 'SENT', code });
    if (code) job.codes.add(code);
    job.nextPollAt = Date.now() + this.pollMs;
    await this.changed(job);
  }

  /** Reads one code's receipts and moves its recipients (acceptance, delivery, non-delivery). */
  private async readReceipts(upstream: Upstream, job: Job): Promise<void> {
    const headers = { 'x-username': job.creds.username, 'x-password': job.creds.password };
    let changed = false;
    for (const code of [...job.codes]) {
      let data: unknown;
      try {
        data = await upstream.call<unknown>(this.ctxOf(upstream, job), BULK.receipts, { params: { code }, headers });
      } catch (err) {
        if (err instanceof UpstreamError && err.status === 404) continue; // no receipts yet ("Result empty")
        throw err;
      }
      for (const receipt of Array.isArray(data) ? data : []) {
        if (!isObj(receipt)) continue;
        changed = this.applyReceipt(job.sending, code, receipt) || changed;
      }
      const open = job.sending.recipients.some((x) => x.code === code && (x.state === 'SENT' || x.state === 'ACCEPTED'));
      if (!open) job.codes.delete(code);
    }
    if (Date.now() - job.startedAt > this.giveUpMs) job.codes.clear();
    if (changed || job.codes.size === 0) await this.changed(job);
  }

  private applyReceipt(s: Sending, code: string, receipt: Obj): boolean {
    const subject = text(receipt.object) ?? '';
    const who = bare(receipt.recipient);
    const at = (() => {
      const d = Date.parse(text(receipt.data) ?? '');
      return Number.isNaN(d) ? new Date().toISOString() : new Date(d).toISOString();
    })();
    const r = s.recipients.find((x) => x.code === code && x.address.toLowerCase() === who);
    if (!r) return false;
    if (/^ACCETTAZIONE:/i.test(subject) && r.state === 'SENT') {
      Object.assign(r, { state: 'ACCEPTED', acceptedAt: at });
      return true;
    }
    if (/^(AVVISO DI )?MANCATA CONSEGNA:/i.test(subject) && r.state !== 'FAILED' && r.state !== 'DELIVERED') {
      Object.assign(r, { state: 'FAILED', failedAt: at, reason: 'not delivered (avviso di mancata consegna)' });
      return true;
    }
    if (/^CONSEGNA:/i.test(subject) && r.state !== 'DELIVERED' && r.state !== 'FAILED') {
      Object.assign(r, { state: 'DELIVERED', deliveredAt: at, acceptedAt: r.acceptedAt ?? at });
      return true;
    }
    return false;
  }

  private async changed(job: Job): Promise<void> {
    const s = job.sending;
    s.seq++;
    s.done = job.batches.length === 0 && job.codes.size === 0;
    if (s.done) {
      // Nothing left to read: the credentials go.
      this.jobs.delete(s.id);
      const q = this.queueKey(s.tenant, job.creds.username);
      const rest = (this.queues.get(q) ?? []).filter((id) => id !== s.id);
      if (rest.length > 0) this.queues.set(q, rest);
      else this.queues.delete(q);
    }
    await this.persist(job);
    await this.bus.publish(this.topic(s.tenant, s.id), structuredClone(s));
  }
}

/** Per-recipient counts of a sending. */
export function countsOf(s: Sending): Record<'total' | 'queued' | 'sent' | 'accepted' | 'delivered' | 'failed' | 'unknown', number> {
  const c = { total: s.recipients.length, queued: 0, sent: 0, accepted: 0, delivered: 0, failed: 0, unknown: 0 };
  for (const r of s.recipients) c[r.state.toLowerCase() as 'queued']++;
  return c;
}

/** The error of an operation whose mailbox credentials the service refused. */
export const badCredentials = (): GraphQLError =>
  new GraphQLError('the bulk mailbox refused these credentials', { extensions: { code: 'UNAUTHENTICATED', field: 'credentials' } });
