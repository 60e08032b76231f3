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
 * (2000, doubled after each read that brings nothing new, up to `POLL_MAX_BACKOFF_MS`, 10 min),
 * `POLL_MAX_CALLS_PER_MIN` (60 paid reads a minute, one per call: `GET /send/{code}` of every
 * sending and `GET /inbox` of every subscribed inbox, through the kit's `PollBook`), `GIVE_UP_MS` after which receipts still missing are no longer read
 * (48 h), `LEASE_MS` a process holds a sending's queue before renewing it (30000). A code answered
 * 400, 401, 403, 404 or 406 is no longer read.
 *
 * One process runs a sending at a time: it holds the sending's lease in the kit's poll book (Redis
 * with `REDIS_URL`, `SET NX PX`), renewed while it runs and given back when the sending is done or
 * the process stops; another replica takes up (resumes) only a sending whose lease it gets, so it
 * never overwrites a running sending's record nor sends or reads it twice. A process that loses a
 * lease (it stalled past it) drops the sending before its next call.
 */
import { createHash, randomBytes } from 'node:crypto';
import { GraphQLError } from 'graphql';
import type { EventBus } from '../../platform/bus.ts';
import { MemoryBulkStore, type BulkStore, type StoredSending } from './bulk-store.ts';
import { MemoryEventBus } from '../../platform/bus.ts';
import { announceChange } from '../../platform/changes.ts';
import { TokenCipher } from '../runtime/tracking/cipher.ts';
import { keyReused, outcomeUnknownError } from '../runtime/tracking/service.ts';
import { MemoryPollBook, PERMANENT, type PollBook } from '../runtime/tracking/poller.ts';
import type { UpstreamAuth } from '../runtime/context.ts';
import type { SubgraphDeps } from '../runtime/server.ts';
import { CostMeter, round4 } from '../upstream/cost.ts';
import type { CostLedger } from '../upstream/ledger.ts';
import { PASS_THROUGH_TOKENS, type WorkTokens } from '../upstream/work-tokens.ts';
import { priceOf } from '../../contract/prices.ts';
import type { Endpoint } from '../upstream/endpoint.ts';
import { mayHaveBeenCarriedOut, UpstreamError } from '../upstream/errors.ts';
import type { CallContext, Upstream } from '../upstream/upstream.ts';
import { isObj, type Obj } from '../../contract/values.ts';
import { text } from './model.ts';
import { log } from '../../platform/log.ts';
import { settingsOf, type SettingsSource } from '../../platform/settings.ts';

const WRITE_TIMEOUT = 30_000;
const bulk = (method: Endpoint['method'], path: string, extra: Partial<Endpoint> = {}): Endpoint => ({ area: 'pecmassiva', method, path, ...extra });

/**
 * The bulk area's endpoints (one table). Threads and cron-start are in the contract's table but in
 * no public source: their paths are the contract's, their shapes this project's design (see the
 * emulator's `pecmassiva/index.ts` and docs/pec.md).
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
  /** What the sending's upstream calls (sends and receipt reads) cost so far, and its sends' estimate. */
  cost: SendingCost;
}

export interface SendingCost {
  /** Euro spent by its calls so far. */
  euro: number;
  /** Euro of calls without an answer (possibly spent too). */
  atRisk: number;
  /** Euro of its requests (one per batch) as estimated when it was queued. */
  estimate: number;
}

/** Recipients per request (`PECMASSIVA_BATCH_SIZE`, 50): the queue's and the cost estimate's one source. */
export function bulkBatchSize(env?: SettingsSource): number {
  return settingsOf(env).PECMASSIVA_BATCH_SIZE;
}

/** Euro of sending to `recipients` addresses: one `POST /send` per batch. */
export function bulkSendEstimate(recipients: number, batchSize: number): number {
  return round4(priceOf('pecmassiva', 'POST', '/send') * Math.max(1, Math.ceil(recipients / batchSize)));
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
  /** Charges the tenant's day budget and free tiers (rebuilt on the ledger after a restart). */
  meter: CostMeter;
  /** What the sending cost before this process took it up (a restart). */
  costBefore: { euro: number; atRisk: number };
  creds: BulkCredentials;
  request: SendRequest;
  /** Indexes of `recipients` per batch, still to send. */
  batches: number[][];
  /** Codes whose receipts are still being read. */
  codes: Set<string>;
  /** Per code: not read before `at`; `misses` reads in a row that brought nothing (the wait doubles). */
  waits: Map<string, { at: number; misses: number }>;
  startedAt: number;
}

/** A receipt's recipient as the service writes it (`"a@x" `, `<a@x>`, `"Mario" <a@x>`) → `a@x`. */
/** The bare address of a sender or recipient as receipts write it (`"Name" <a@b.it>`, `"a@b.it" `). */
export const bare = (v: unknown): string => {
  const t = text(v) ?? '';
  const angle = /<([^<>]*)>\s*$/.exec(t);
  return (angle ? angle[1] : t).replace(/["<>]/g, '').trim().toLowerCase();
};

export class BulkService {
  readonly bus: EventBus<Sending>;
  readonly batchSize: number;
  /** How often a subscribed inbox is read (`PECMASSIVA_INBOX_POLL_MS`). @default 30000 */
  readonly inboxPollMs: number;
  /** How long a sending's lease lasts before its holder renews it (`PECMASSIVA_LEASE_MS`). @default 30000 */
  readonly leaseMs: number;
  private readonly sendIntervalMs: number;
  private readonly pollMs: number;
  private readonly pollPerMin: number;
  private readonly giveUpMs: number;
  private readonly maxBackoffMs: number;
  private readonly now: () => number;
  /** The per-minute budget of receipt reads (the kit's; one unit per upstream call). */
  private readonly book: PollBook;
  private readonly store: BulkStore;
  private readonly cipher: TokenCipher;
  private readonly jobs = new Map<string, Job>();
  /**
   * When this process last took or renewed each held sending's lease, on the real monotonic clock
   * (`performance.now()`): the lease lapses in real time (Redis `PX`), whatever the injected `now`.
   */
  private readonly leases = new Map<string, number>();
  private resumer: NodeJS.Timeout | null = null;
  private renewer: NodeJS.Timeout | null = null;
  /** This process's lease figures (operations, tests): sendings it lost to another process, and took up from one. */
  readonly leaseStats = { lost: 0, takenUp: 0 };
  private renewing: Promise<void> | null = null;
  private resuming: Promise<string[]> | null = null;
  /** One queue per tenant and mailbox: the sending ids in order. */
  private readonly queues = new Map<string, string[]>();
  private readonly lastSend = new Map<string, number>();
  private upstream: Upstream | null = null;
  private ledger: CostLedger | null = null;
  /** Which token a job (and an inbox subscription) calls with: the layer's own kept as a marker, resolved per call (`SubgraphDeps.tokens`). */
  tokens: WorkTokens = PASS_THROUGH_TOKENS;
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;

  constructor(source: SettingsSource, stores: { store?: BulkStore; bus?: EventBus<Sending>; cipher?: TokenCipher; now?: () => number; book?: PollBook } = {}) {
    this.now = stores.now ?? Date.now;
    this.book = stores.book ?? new MemoryPollBook({ now: this.now });
    this.bus = stores.bus ?? new MemoryEventBus<Sending>();
    this.store = stores.store ?? new MemoryBulkStore();
    const env = settingsOf(source);
    this.cipher = stores.cipher ?? new TokenCipher(env.LAYER_SECRET ?? 'pecmassiva-memory-only', 'openapi-supergraph pecmassiva secrets v1');
    this.batchSize = bulkBatchSize(env);
    this.inboxPollMs = env.PECMASSIVA_INBOX_POLL_MS;
    this.leaseMs = env.PECMASSIVA_LEASE_MS;
    this.sendIntervalMs = env.PECMASSIVA_SEND_INTERVAL_MS;
    this.pollMs = env.PECMASSIVA_POLL_MS;
    this.pollPerMin = env.PECMASSIVA_POLL_MAX_CALLS_PER_MIN;
    this.giveUpMs = env.PECMASSIVA_GIVE_UP_MS;
    this.maxBackoffMs = Math.max(this.pollMs, env.PECMASSIVA_POLL_MAX_BACKOFF_MS);
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
    // Once done, nothing more is sent or read: the sealed credentials and the message go.
    const live = !job.sending.done;
    const stored: StoredSending = {
      sending: job.sending,
      username: job.creds.username,
      ...(live ? { sealedToken: this.cipher.seal(job.auth.token), sealedPassword: this.cipher.seal(job.creds.password), request: job.request } : {}),
      batches: job.batches,
      codes: [...job.codes],
      waits: Object.fromEntries(job.waits),
      startedAt: job.startedAt,
    };
    await this.store.save(stored);
  }

  private leaseKey(id: string): string {
    return `sending:${id}`;
  }

  /** Takes a sending's lease: true when this process may run it (nobody else holds it). */
  private async takeLease(id: string): Promise<boolean> {
    if (!(await this.book.lease(this.leaseKey(id), this.leaseMs))) return false;
    this.leases.set(id, performance.now());
    return true;
  }

  /**
   * Renews every lease this process holds (every `leaseMs / 3`, work due or not: a sending waiting
   * minutes for its receipts keeps its lease); a lease found lost drops its sending here.
   */
  renewLeases(): Promise<void> {
    if (this.renewing) return this.renewing;
    this.renewing = (async () => {
      for (const id of [...this.leases.keys()]) {
        const job = this.jobs.get(id);
        if (job) await this.holds(job, true);
      }
    })().finally(() => {
      this.renewing = null;
    });
    return this.renewing;
  }

  /**
   * Whether this process still holds a running sending's lease, renewed (now, or once a third of it
   * has passed on the real clock); a lease lost (this process stalled past it, another took the
   * sending up) drops the sending here, before any further call.
   */
  private async holds(job: Job, renewNow = false): Promise<boolean> {
    const id = job.sending.id;
    const at = this.leases.get(id);
    if (!renewNow && at !== undefined && performance.now() - at < this.leaseMs / 3) return true;
    const kept = at !== undefined && (this.book.renew ? await this.book.renew(this.leaseKey(id), this.leaseMs) : true);
    if (kept) {
      this.leases.set(id, performance.now());
      return true;
    }
    this.leaseStats.lost++;
    log.warn({ area: 'pecmassiva', id }, 'sending: lease lost, left to the process that holds it');
    this.leases.delete(id);
    this.jobs.delete(id);
    const q = this.queueKey(job.sending.tenant, job.creds.username);
    const rest = (this.queues.get(q) ?? []).filter((x) => x !== id);
    if (rest.length > 0) this.queues.set(q, rest);
    else this.queues.delete(q);
    return false;
  }

  private async dropLease(id: string): Promise<void> {
    if (!this.leases.delete(id)) return;
    await this.book.release(this.leaseKey(id)).catch(() => undefined);
  }

  /**
   * Takes up the sendings left unfinished whose lease this process gets (a restart, or a replica
   * that stopped): their queues and receipts go on. A sending another process runs is left to it.
   * Runs on start and every `leaseMs`; the ids taken up.
   */
  takeUp(): Promise<string[]> {
    if (this.resuming) return this.resuming;
    this.resuming = this.resumeOnce().finally(() => {
      this.resuming = null;
    });
    return this.resuming;
  }

  private async resumeOnce(): Promise<string[]> {
    const taken: string[] = [];
    for (const listed of await this.store.unfinished()) {
      const id = listed.sending.id;
      if (this.jobs.has(id)) continue;
      if (!(await this.takeLease(id))) continue;
      // Read again under the lease: the holder that just let go may have saved it since the list.
      const st = await this.store.load(id);
      if (!st || st.sending.done) {
        await this.dropLease(id);
        continue;
      }
      const token = st.sealedToken === undefined ? undefined : this.cipher.open(st.sealedToken);
      const password = st.sealedPassword === undefined ? undefined : this.cipher.open(st.sealedPassword);
      const job: Job = {
        sending: st.sending,
        auth: { token: token ?? '', tenant: st.sending.tenant },
        meter: this.meterFor(st.sending),
        costBefore: { euro: st.sending.cost?.euro ?? 0, atRisk: st.sending.cost?.atRisk ?? 0 },
        creds: { username: st.username, password: password ?? '' },
        request: st.request ?? { sender: st.sending.sender, recipients: st.sending.recipients.map((r) => r.address), subject: st.sending.subject, html: '', attachments: [] },
        batches: st.batches,
        codes: new Set(st.codes),
        // The holder's backoff goes on: a takeover does not read every code again at once.
        waits: new Map(Object.entries(st.waits ?? {})),
        startedAt: st.startedAt,
      };
      this.jobs.set(st.sending.id, job);
      if (token === undefined || password === undefined) {
        // Sealed under another secret: nothing more can be sent or read for it.
        for (const r of job.sending.recipients)
          if (r.state === 'QUEUED')
            Object.assign(r, { state: 'FAILED', reason: 'the layer can no longer open the credentials (LAYER_SECRET changed)', failedAt: new Date(this.now()).toISOString() });
        job.batches = [];
        job.codes.clear();
        await this.changed(job);
        continue;
      }
      const q = this.queueKey(job.sending.tenant, st.username);
      if (job.batches.length > 0) this.queues.set(q, [...(this.queues.get(q) ?? []), st.sending.id]);
      taken.push(st.sending.id);
    }
    this.leaseStats.takenUp += taken.length;
    return taken;
  }

  /**
   * Runs a paid bulk call (a thread started or answered) under the caller's idempotency key (a day
   * per tenant, in the bulk store): the same key and order again answers `replay(id)` without a
   * second paid call; another order under it, `IDEMPOTENCY_KEY_REUSED`; one in flight or without an
   * answer, `OUTCOME_UNKNOWN`. `run` returns the created thing's id with its result.
   */
  async keyed<T>(tenant: string, key: string | null, order: unknown, run: () => Promise<{ id: string; value: T }>, replay: (id: string) => Promise<T>): Promise<T> {
    if (key === null) return (await run()).value;
    const print = createHash('sha256').update(JSON.stringify(order)).digest('base64url');
    const slot = `order:${key}`;
    const held = await this.store.claimKey(tenant, slot, `pending:${print}`);
    if (held !== null) {
      const [state, hp, id] = held.split(':');
      if (hp !== print) throw keyReused(key);
      if (state === 'done' && id) return replay(id);
      throw new GraphQLError(
        `the order under idempotencyKey "${key}" is ${state === 'pending' ? 'still in flight' : 'without an answer: it may have been carried out (and charged)'}; retry later with the same key`,
        {
          extensions: { code: 'OUTCOME_UNKNOWN', outcome: state === 'pending' ? 'pending' : 'unknown', idempotencyKey: key },
        },
      );
    }
    try {
      const out = await run();
      await this.store.setKey(tenant, slot, `done:${print}:${out.id}`);
      return out.value;
    } catch (err) {
      if (!mayHaveBeenCarriedOut(err)) {
        await this.store.releaseKey(tenant, slot);
        throw err;
      }
      await this.store.setKey(tenant, slot, `unknown:${print}`);
      throw outcomeUnknownError(err, key, err instanceof UpstreamError ? err.atRisk : 0);
    }
  }

  /** The service's codes (message_id) of a sending's requests. */
  async codesOf(tenant: string, id: string): Promise<string[]> {
    const s = await this.get(tenant, id);
    return s ? [...new Set(s.recipients.map((r) => r.code).filter((c): c is string => c !== null))] : [];
  }

  /**
   * Cancels what is still queued of a sending (free: nothing is called): no further batch is sent by
   * whichever process holds its queue (the mark is in the store); its queued recipients become
   * FAILED ("cancelled before sending"). A batch already handed to the service is not called back.
   * False when the sending is not the tenant's or has nothing queued.
   */
  async cancel(tenant: string, id: string): Promise<boolean> {
    const s = await this.get(tenant, id);
    if (!s || !s.recipients.some((r) => r.state === 'QUEUED')) return false;
    await this.store.cancel(id);
    const job = this.jobs.get(id);
    if (job) await this.dropQueued(job);
    return true;
  }

  private async dropQueued(job: Job): Promise<void> {
    job.batches = [];
    const at = new Date(this.now()).toISOString();
    for (const r of job.sending.recipients) if (r.state === 'QUEUED') Object.assign(r, { state: 'FAILED', failedAt: at, reason: 'cancelled before sending' });
    await this.changed(job);
  }

  /** Stops reading a sending's receipts (its messages were deleted upstream); the credentials go. */
  async forget(tenant: string, id: string): Promise<void> {
    const job = this.jobs.get(id);
    if (!job || job.sending.tenant !== tenant) return;
    job.codes.clear();
    if (job.batches.length === 0) await this.changed(job);
  }

  /** A resumed sending's meter: the tenant's day budget and free tiers on the shared ledger, when given. */
  private meterFor(s: Sending): CostMeter {
    if (!this.ledger || !this.upstream) return new CostMeter();
    return CostMeter.detached(this.ledger, s.tenant, `pecmassiva:${s.id}:resumed:${randomBytes(4).toString('hex')}`, this.upstream.config.maxEuroPerDay);
  }

  /**
   * Takes one unit of the per-minute read budget (`PECMASSIVA_POLL_MAX_CALLS_PER_MIN`, the kit's
   * `PollBook`, shared with the receipt reads and, on Redis, by every replica) for a background read
   * of the bulk service (a subscribed inbox); false when none is left in this minute.
   */
  spendRead(): Promise<boolean> {
    return this.book.spend(this.now(), this.pollPerMin);
  }

  /** Euro of a sending to `recipients` addresses with this queue's batch size. */
  estimate(recipients: number): number {
    return bulkSendEstimate(recipients, this.batchSize);
  }

  start(deps: SubgraphDeps): () => Promise<void> {
    this.upstream = deps.upstream;
    this.ledger = deps.ledger ?? null;
    this.tokens = deps.tokens ?? PASS_THROUGH_TOKENS;
    const resumeLogged = (): Promise<unknown> => this.takeUp().catch((err: unknown) => log.error({ area: 'pecmassiva', err }, 'unfinished sendings not resumed'));
    const resumed = resumeLogged();
    this.timer = setInterval(() => void resumed.then(() => this.tick()), 100);
    this.timer.unref();
    // Sendings whose holder stopped without giving them back are taken up once their lease lapses.
    this.resumer = setInterval(() => void resumeLogged(), this.leaseMs);
    this.resumer.unref();
    this.renewer = setInterval(() => void this.renewLeases().catch((err: unknown) => log.error({ area: 'pecmassiva', err }, 'leases not renewed')), this.leaseMs / 3);
    this.renewer.unref();
    return async () => {
      if (this.timer) clearInterval(this.timer);
      if (this.resumer) clearInterval(this.resumer);
      if (this.renewer) clearInterval(this.renewer);
      this.timer = null;
      this.resumer = null;
      this.renewer = null;
      await this.resuming;
      await this.ticking;
      await this.renewing;
      // Given back, so another process takes them up at once.
      for (const id of [...this.leases.keys()]) await this.dropLease(id);
      this.jobs.clear();
      this.queues.clear();
      this.upstream = null;
    };
  }

  /**
   * Stops running sendings here WITHOUT giving their leases back, as a crash would: another process
   * takes them up once the leases lapse (`leaseMs`). For a process that must not hand over at once
   * (and tests of a takeover); the stop `start` returns gives them back instead.
   */
  async halt(): Promise<void> {
    for (const t of [this.timer, this.resumer, this.renewer]) if (t) clearInterval(t);
    this.timer = this.resumer = this.renewer = null;
    await this.resuming;
    await this.ticking;
    await this.renewing;
    this.leases.clear();
    this.jobs.clear();
    this.queues.clear();
    this.upstream = null;
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
        throw new GraphQLError(`idempotencyKey "${key}" is being used by a sending still being queued; retry in a moment`, {
          extensions: { code: 'OUTCOME_UNKNOWN', idempotencyKey: key },
        });
      }
    }
    const sending: Sending = {
      id,
      tenant: auth.tenant,
      sender: request.sender,
      subject: request.subject,
      createdAt: new Date(this.now()).toISOString(),
      recipients: request.recipients.map((address) => ({ address, state: 'QUEUED', code: null, acceptedAt: null, deliveredAt: null, failedAt: null, reason: null })),
      seq: 1,
      done: false,
      cost: { euro: 0, atRisk: 0, estimate: this.estimate(request.recipients.length) },
    };
    const batches: number[][] = [];
    for (let i = 0; i < request.recipients.length; i += this.batchSize) batches.push(request.recipients.slice(i, i + this.batchSize).map((_, k) => i + k));
    const job: Job = {
      sending,
      auth: { ...auth, token: this.tokens.keep(auth.token) },
      meter,
      costBefore: { euro: 0, atRisk: 0 },
      creds,
      request,
      batches,
      codes: new Set(),
      waits: new Map(),
      startedAt: this.now(),
    };
    // A new id: its lease is free (held from the start, so no other process takes it up).
    await this.takeLease(id);
    this.jobs.set(id, job);
    await this.persist(job);
    const q = this.queueKey(auth.tenant, creds.username);
    this.queues.set(q, [...(this.queues.get(q) ?? []), id]);
    await this.announce(sending);
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
    const now = this.now();
    const sends: Array<Promise<void>> = [];
    for (const [q, ids] of this.queues) {
      if (now - (this.lastSend.get(q) ?? 0) < this.sendIntervalMs) continue;
      const job = ids.map((id) => this.jobs.get(id)).find((j) => j && j.batches.length > 0);
      if (!job) {
        this.queues.delete(q);
        continue;
      }
      if (!(await this.holds(job))) continue;
      this.lastSend.set(q, now);
      sends.push(this.sendBatch(upstream, job));
    }
    await Promise.allSettled(sends);
    // Receipts: every due code of every sending, the longest waiting first, one budget unit per read.
    const due: Array<{ job: Job; code: string; at: number }> = [];
    for (const job of this.jobs.values()) {
      for (const code of job.codes) {
        const at = job.waits.get(code)?.at ?? 0;
        if (this.now() >= at) due.push({ job, code, at });
      }
    }
    due.sort((a, b) => a.at - b.at);
    const touched = new Set<Job>();
    const read = new Set<Job>();
    for (const { job, code } of due) {
      if (!this.jobs.has(job.sending.id) || !(await this.holds(job))) continue;
      if (!(await this.book.spend(this.now(), this.pollPerMin))) break;
      read.add(job);
      if (await this.readReceipts(upstream, job, code)) touched.add(job);
    }
    for (const job of this.jobs.values()) {
      if (job.codes.size > 0 && this.now() - job.startedAt > this.giveUpMs) {
        job.codes.clear();
        touched.add(job);
      }
    }
    for (const job of touched) await this.changed(job);
    // A read that changed nothing still moved its code's wait: stored, so a takeover keeps it.
    for (const job of read) if (!touched.has(job) && this.jobs.has(job.sending.id)) await this.persist(job);
  }

  private ctxOf(upstream: Upstream, job: Job): CallContext & { upstream: Upstream } {
    return { auth: { ...job.auth, token: this.tokens.use(job.auth.token) }, meter: job.meter, upstream };
  }

  /** Sends the job's next batch; a refusal for the pace (429) or the layer's own limiter puts it back. */
  private async sendBatch(upstream: Upstream, job: Job): Promise<void> {
    const batch = job.batches[0];
    const r = job.request;
    // Cancelled (here or by another process): nothing more is sent.
    if (await this.store.isCancelled(job.sending.id)) {
      await this.dropQueued(job);
      return;
    }
    // Claimed once, whatever restarts or runs twice: a batch is never sent twice.
    if (!(await this.store.claimBatch(job.sending.id, batch[0]))) {
      job.batches.shift();
      for (const i of batch) {
        const rec = job.sending.recipients[i];
        if (rec.state === 'QUEUED') Object.assign(rec, { state: 'UNKNOWN', reason: 'taken by an earlier process that stopped before the answer: it may have been sent' });
      }
      await this.changed(job);
      return;
    }
    const body = {
      sender: r.sender,
      recipient: batch.map((i) => r.recipients[i]),
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
        await this.store.releaseBatch?.(job.sending.id, batch[0]);
        return;
      }
      job.batches.shift();
      // Sent without an answer: it may have gone out. Never sent again (no message twice).
      const state: RecipientState = err instanceof UpstreamError && mayHaveBeenCarriedOut(err) ? 'UNKNOWN' : 'FAILED';
      const reason = err instanceof UpstreamError ? `${err.graphqlCode}: ${err.message}` : String(err);
      for (const i of batch) Object.assign(job.sending.recipients[i], { state, reason, failedAt: state === 'FAILED' ? new Date(this.now()).toISOString() : null });
      await this.changed(job);
      return;
    }
    job.batches.shift();
    const code = isObj(answer) ? text(answer.message_id) : null;
    for (const i of batch) Object.assign(job.sending.recipients[i], { state: 'SENT', code });
    if (code) {
      job.codes.add(code);
      job.waits.set(code, { at: this.now() + this.pollMs, misses: 0 });
    }
    await this.changed(job);
  }

  /**
   * Reads one code's receipts (one paid call) and moves its recipients; true when the sending
   * changed. A read that brings nothing new doubles that code's wait (up to `POLL_MAX_BACKOFF_MS`),
   * as does a failed one; a code answered 400, 401, 403, 404 or 406 is no longer read.
   */
  private async readReceipts(upstream: Upstream, job: Job, code: string): Promise<boolean> {
    const headers = { 'x-username': job.creds.username, 'x-password': job.creds.password };
    const misses = job.waits.get(code)?.misses ?? 0;
    let data: unknown;
    try {
      data = await upstream.call<unknown>(this.ctxOf(upstream, job), BULK.receipts, { params: { code }, headers });
    } catch (err) {
      if (err instanceof UpstreamError && err.kind === 'http' && PERMANENT.has(err.status)) {
        // Reading again cannot help (unknown code, refused credentials): this code is no longer read.
        const reason = `receipts no longer read: the service answered ${err.status}`;
        for (const r of job.sending.recipients) if (r.code === code && (r.state === 'SENT' || r.state === 'ACCEPTED')) r.reason = reason;
        job.codes.delete(code);
        job.waits.delete(code);
        log.warn({ area: 'pecmassiva', id: job.sending.id, reason }, 'sending stopped');
        return true;
      }
      log.warn({ area: 'pecmassiva', id: job.sending.id, err }, 'receipts of sending not read');
      job.waits.set(code, this.backoff(misses + 1));
      return false;
    }
    let moved = false;
    for (const receipt of Array.isArray(data) ? data : []) {
      if (!isObj(receipt)) continue;
      moved = this.applyReceipt(job.sending, code, receipt) || moved;
    }
    job.waits.set(code, this.backoff(moved ? 0 : misses + 1));
    const open = job.sending.recipients.some((x) => x.code === code && (x.state === 'SENT' || x.state === 'ACCEPTED'));
    if (!open) {
      job.codes.delete(code);
      job.waits.delete(code);
      return true;
    }
    return moved;
  }

  /** When a code is read next after `misses` reads in a row that brought nothing. */
  private backoff(misses: number): { at: number; misses: number } {
    return { at: this.now() + Math.min(this.maxBackoffMs, this.pollMs * 2 ** Math.min(misses, 30)), misses };
  }

  private applyReceipt(s: Sending, code: string, receipt: Obj): boolean {
    const subject = text(receipt.object) ?? '';
    const who = bare(receipt.recipient);
    const at = (() => {
      const d = Date.parse(text(receipt.data) ?? '');
      return Number.isNaN(d) ? new Date(this.now()).toISOString() : new Date(d).toISOString();
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

  /** Publishes a sending's state to its subscribers; this process's response cache forgets the tenant's answers. */
  private async announce(s: Sending): Promise<void> {
    const topic = this.topic(s.tenant, s.id);
    announceChange({ kind: 'topic', topic });
    await this.bus.publish(topic, structuredClone(s));
  }

  private async changed(job: Job): Promise<void> {
    const s = job.sending;
    s.seq++;
    const spent = job.meter.summary();
    s.cost = {
      euro: round4(job.costBefore.euro + spent.euro),
      atRisk: round4(job.costBefore.atRisk + spent.atRisk),
      estimate: s.cost?.estimate ?? this.estimate(s.recipients.length),
    };
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
    if (s.done) await this.dropLease(s.id);
    await this.announce(s);
  }
}

/** Per-recipient counts of a sending. */
export function countsOf(s: Sending): Record<'total' | 'queued' | 'sent' | 'accepted' | 'delivered' | 'failed' | 'unknown', number> {
  const c = { total: s.recipients.length, queued: 0, sent: 0, accepted: 0, delivered: 0, failed: 0, unknown: 0 };
  for (const r of s.recipients) c[r.state.toLowerCase() as 'queued']++;
  return c;
}

/** The error of an operation whose mailbox credentials the service refused. */
export const badCredentials = (): GraphQLError => new GraphQLError('the bulk mailbox refused these credentials', { extensions: { code: 'UNAUTHENTICATED', field: 'credentials' } });
