/**
 * The tracked-work store and the poller's bookkeeping on Redis, shared by every replica of an area
 * (keys under the connection's prefix; give each area its own prefix, e.g. `…:risk:`):
 *
 * - `req:<tenant>:<id>` the entry (JSON, upstream token sealed); `list:<tenant>` (ZSET by last
 *   change) and `unfinished` (SET, for the poller), all three written by one Lua script per
 *   observation; finished entries expire after `finishedTtlMs`, unfinished ones after
 *   `unfinishedTtlMs` without an observation or once their last reservation expired, whichever is
 *   later; `unfinished()` and `list()` drop members whose entry expired;
 * - `res:<key>` a reservation (token and the caller's relay header values sealed, as in `req:` and `idem:`), expiring with its URL (PXAT); `reskeys:<tenant>:<id>`
 *   the keys bound to a request; `rescfg:<tenant>:<config>` the key of a configuration;
 * - `idem:<tenant>:<key>` an idempotency record, claimed with SET NX PX 24 h; `idemres:<reservation>`
 *   the record a reservation settles; `relayed:<tenant>:<id>` relayed delivery nonces (SADD);
 * - poller: `poll:calls` (ZSET of read times: the shared per-minute budget), `poll:state:<k>`,
 *   `poll:lease:<k>` (SET NX PX <period>: one replica reads a late entry, not every one).
 *
 * Changes to one record are compare-and-set (a Lua script), so concurrent replicas never lose an
 * update; the rules themselves (`nextObservation`, `settled`) are the memory store's.
 */
import type { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { defineScript, prefixOf } from '../../../platform/redis.ts';
import type { TokenCipher } from './cipher.ts';
import type { StatePolicy } from './policy.ts';
import type { PollBook, PollState } from './poller.ts';
import {
  FINISHED_RESERVATION_GRACE_S,
  IDEMPOTENCY_TTL_MS,
  nextObservation,
  openRelay,
  sealRelay,
  settled,
  type IdempotencyOutcome,
  type IdempotencyRecord,
  type ObserveOptions,
  type Observation,
  type Reservation,
  type TrackedRequest,
  type TrackedStore,
} from './store.ts';

/** SET KEYS[1] to ARGV[2] when it holds ARGV[1] ('' = absent); ARGV[3]: 'KEEPTTL', a PX in ms, or '0'. */
const CAS = defineScript(`
local cur = redis.call('GET', KEYS[1])
if (cur or '') ~= ARGV[1] then return 0 end
if ARGV[3] == 'KEEPTTL' then redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
elseif tonumber(ARGV[3]) > 0 then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
else redis.call('SET', KEYS[1], ARGV[2]) end
return 1`);

/**
 * Applies one observation in one step: the record's compare-and-set (KEYS[1] holds ARGV[1], '' =
 * absent), its place in `list:<tenant>` (KEYS[2]) and in `unfinished` (KEYS[3]), and, once final,
 * the grace period of its callback reservations (the `res:` keys listed in KEYS[4], and the list
 * itself). A process killed mid-way thus leaves either the old state or the new one, never a
 * pending request missing from the poller's set or a final one left in it.
 *
 * Bounds: a final entry expires after ARGV[4] (the finished TTL); an unfinished one after ARGV[4]
 * (the unfinished TTL) or while one of its reservations lives (the PTTL of KEYS[4]), whichever is
 * later, renewed by every observation. The list expires with the longest-lived entry it may hold
 * (ARGV[12], renewed), and each observation drops up to 100 members older than ARGV[11] whose
 * entry has expired (`list()` drops any other it meets).
 *
 * ARGV: 1 expected, 2 new value, 3 '1' if final, 4 TTL ms, 5 list score, 6 list member,
 * 7 `unfinished` member, 8 grace ms, 9 prefixed `res:`, 10 prefixed `req:<tenant>:`, 11 trim
 * cutoff (ms), 12 list TTL (ms).
 */
const OBSERVE = defineScript(`
local cur = redis.call('GET', KEYS[1])
if (cur or '') ~= ARGV[1] then return 0 end
local ttl = tonumber(ARGV[4])
if ARGV[3] == '1' then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ttl)
  redis.call('SREM', KEYS[3], ARGV[7])
  for _, k in ipairs(redis.call('SMEMBERS', KEYS[4])) do redis.call('PEXPIRE', ARGV[9] .. k, ARGV[8], 'LT') end
  redis.call('PEXPIRE', KEYS[4], ARGV[8], 'LT')
else
  local held = redis.call('PTTL', KEYS[4])
  if held == -1 then redis.call('PEXPIRE', KEYS[4], ttl)
  elseif held > ttl then ttl = held end
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ttl)
  redis.call('SADD', KEYS[3], ARGV[7])
end
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[6])
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[11], 'LIMIT', 0, 100)) do
  if redis.call('EXISTS', ARGV[10] .. m) == 0 then redis.call('ZREM', KEYS[2], m) end
end
local lt = math.max(tonumber(ARGV[12]), ttl)
if redis.call('PTTL', KEYS[2]) < lt then redis.call('PEXPIRE', KEYS[2], lt) end
return 1`);

/** Deletes KEYS[1] when it still holds ARGV[1] (one's own lease). */
const RELEASE = defineScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`);

/** Sets KEYS[1]'s life to ARGV[2] ms when it still holds ARGV[1] (one's own lease); 1 when it did. */
const RENEW = defineScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`);

/** Takes one read from the budget: ARGV now, window start, max, member. */
const SPEND = defineScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
redis.call('PEXPIRE', KEYS[1], 120000)
return 1`);

interface Slot<F extends string> {
  entry: TrackedRequest<F>;
  token: string;
}

export interface RedisTrackedStoreOptions {
  /** Seals the upstream tokens kept (from `LAYER_SECRET`: every replica must share it). */
  cipher: TokenCipher;
  /** How long a finished entry is kept. @default 30 days */
  finishedTtlMs?: number;
  /**
   * How long an unfinished entry is kept without being observed again (a callback, a read, a
   * poll renews it), and at least as long as one of its callback reservations lives. The default
   * is the poller's defaults' longest wait: its max age (7 days) plus its slow period (1 day), so
   * an entry the poller still reads is renewed before it expires. @default 8 days
   */
  unfinishedTtlMs?: number;
  now?: () => number;
}

const low = (id: string): string => id.toLowerCase();

export class RedisTrackedStore<F extends string = string> implements TrackedStore<F> {
  private readonly cipher: TokenCipher;
  private readonly finishedTtlMs: number;
  private readonly unfinishedTtlMs: number;
  private readonly now: () => number;

  constructor(
    private readonly redis: Redis,
    private readonly policy: StatePolicy,
    opts: RedisTrackedStoreOptions,
  ) {
    this.cipher = opts.cipher;
    this.finishedTtlMs = opts.finishedTtlMs ?? 30 * 24 * 3600 * 1000;
    this.unfinishedTtlMs = opts.unfinishedTtlMs ?? 8 * 24 * 3600 * 1000;
    this.now = opts.now ?? Date.now;
  }

  private cas(key: string, expected: string | null, value: string, px: 'KEEPTTL' | number): Promise<boolean> {
    return CAS.run(this.redis, [key], [expected ?? '', value, String(px)]).then((r) => r === 1);
  }

  async reserve(r: Reservation<F>): Promise<void> {
    const at = r.expiresAt * 1000;
    const stored: Reservation<F> = { ...r, id: r.config ? null : r.id, config: r.config ?? null, token: this.cipher.seal(r.token), relay: sealRelay(this.cipher, r.relay) };
    const m = this.redis.multi().set(`res:${r.key}`, JSON.stringify(stored), 'PXAT', at);
    if (r.config) m.set(`rescfg:${r.tenant}:${r.config}`, r.key, 'PXAT', at);
    if (!r.config && r.id !== null) this.keepKey(m, r.tenant, r.id, r.key, at);
    await m.exec();
  }

  /** Lists `key` among the request's reservations; the list (and the entry) live as long as it. */
  private keepKey(m: ReturnType<Redis['multi']>, tenant: string, id: string, key: string, at: number): void {
    const keys = `reskeys:${tenant}:${low(id)}`;
    m.sadd(keys, key)
      .pexpireat(keys, at, 'NX')
      .pexpireat(keys, at, 'GT')
      .pexpireat(`req:${tenant}:${low(id)}`, at, 'GT');
  }

  private async rawReservation(key: string): Promise<{ raw: string; r: Reservation<F> } | undefined> {
    const raw = await this.redis.get(`res:${key}`);
    if (raw === null) return undefined;
    const r = JSON.parse(raw) as Reservation<F>;
    if (r.expiresAt * 1000 <= this.now()) return undefined;
    return { raw, r };
  }

  async reservation(key: string): Promise<Reservation<F> | undefined> {
    const got = await this.rawReservation(key);
    return got ? { ...got.r, token: this.cipher.open(got.r.token) ?? '', relay: openRelay(this.cipher, got.r.relay) } : undefined;
  }

  async configReservation(tenant: string, config: string): Promise<Reservation<F> | undefined> {
    const key = await this.redis.get(`rescfg:${tenant}:${config}`);
    return key === null ? undefined : this.reservation(key);
  }

  async bindKey(key: string, id: string): Promise<void> {
    await this.bindIdempotency(key, id);
    for (let attempt = 0; attempt < 10; attempt++) {
      const got = await this.rawReservation(key);
      if (!got || got.r.id !== null || got.r.config) return;
      const r = got.r;
      if (this.policy.isFinal((await this.get(r.tenant, id))?.rawState)) {
        // Finished already: nothing more will be delivered to this key.
        await this.redis.del(`res:${key}`);
        return;
      }
      if (await this.cas(`res:${key}`, got.raw, JSON.stringify({ ...r, id }), 'KEEPTTL')) {
        const m = this.redis.multi();
        this.keepKey(m, r.tenant, id, key, r.expiresAt * 1000);
        await m.exec();
        return;
      }
    }
  }

  async dropReservation(key: string): Promise<void> {
    const raw = await this.redis.get(`res:${key}`);
    await this.redis.del(`res:${key}`);
    if (raw === null) return;
    const r = JSON.parse(raw) as Reservation<F>;
    if (r.id !== null) await this.redis.srem(`reskeys:${r.tenant}:${low(r.id)}`, key);
  }

  private async slot(tenant: string, id: string): Promise<{ raw: string; slot: Slot<F> } | undefined> {
    const raw = await this.redis.get(`req:${tenant}:${low(id)}`);
    return raw === null ? undefined : { raw, slot: JSON.parse(raw) as Slot<F> };
  }

  async get(tenant: string, id: string): Promise<TrackedRequest<F> | undefined> {
    const got = await this.slot(tenant, id);
    return got ? this.opened(got.slot.entry) : undefined;
  }

  /** An entry as handed out: its relay headers opened (kept sealed). */
  private opened(entry: TrackedRequest<F>): TrackedRequest<F> {
    return entry.relay ? { ...entry, relay: openRelay(this.cipher, entry.relay) } : entry;
  }

  async observe(tenant: string, family: F, record: Record<string, unknown>, opts: ObserveOptions = {}): Promise<Observation<F>> {
    const id = low(String(record.id));
    const prefix = prefixOf(this.redis);
    for (;;) {
      const cur = await this.slot(tenant, id);
      const now = this.now();
      const sealed = { ...opts, relay: opts.relay ? sealRelay(this.cipher, opts.relay) : opts.relay };
      const obs = nextObservation(this.policy, cur?.slot.entry, tenant, family, record, sealed, now);
      const token = opts.token ? this.cipher.seal(opts.token) : (cur?.slot.token ?? '');
      const final = this.policy.isFinal(obs.entry.rawState);
      const done = await OBSERVE.run(
        this.redis,
        [`req:${tenant}:${id}`, `list:${tenant}`, 'unfinished', `reskeys:${tenant}:${id}`],
        [
          cur?.raw ?? '',
          JSON.stringify({ entry: obs.entry, token }),
          final ? '1' : '0',
          final ? this.finishedTtlMs : this.unfinishedTtlMs,
          obs.entry.changedAt,
          id,
          `${tenant}\u0000${id}`,
          FINISHED_RESERVATION_GRACE_S * 1000,
          `${prefix}res:`,
          `${prefix}req:${tenant}:`,
          now - this.finishedTtlMs,
          Math.max(this.finishedTtlMs, this.unfinishedTtlMs),
        ],
      );
      if (done === 1) return { entry: this.opened(obs.entry), changed: obs.changed };
    }
  }

  async list(tenant: string, family?: F): Promise<TrackedRequest<F>[]> {
    const ids = await this.redis.zrange(`list:${tenant}`, 0, -1);
    const { found, missing } = await this.entries(ids.map((id) => `req:${tenant}:${id}`));
    if (missing.length > 0) await this.redis.zrem(`list:${tenant}`, ...missing.map((i) => ids[i]));
    return found.filter((e) => !family || e.family === family).sort((a, b) => a.changedAt - b.changedAt);
  }

  async unfinished(): Promise<TrackedRequest<F>[]> {
    const members = await this.redis.smembers('unfinished');
    const { found, missing } = await this.entries(members.map((m) => `req:${m.replace('\u0000', ':')}`));
    // Entries expired (or removed) while unfinished: the poller has nothing left to read.
    if (missing.length > 0) await this.redis.srem('unfinished', ...missing.map((i) => members[i]));
    return found.filter((e) => !this.policy.isFinal(e.rawState));
  }

  /** The entries under `keys`, and the indexes of the keys that hold none. */
  private async entries(keys: string[]): Promise<{ found: TrackedRequest<F>[]; missing: number[] }> {
    const found: TrackedRequest<F>[] = [];
    const missing: number[] = [];
    for (let i = 0; i < keys.length; i += 500) {
      const raws = await this.redis.mget(...keys.slice(i, i + 500));
      raws.forEach((raw, j) => {
        if (raw === null) missing.push(i + j);
        else found.push(this.opened((JSON.parse(raw) as Slot<F>).entry));
      });
    }
    return { found, missing };
  }

  async markChecked(tenant: string, id: string, at: number): Promise<void> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const cur = await this.slot(tenant, id);
      if (!cur) return;
      const next: Slot<F> = { ...cur.slot, entry: { ...cur.slot.entry, checkedAt: at } };
      if (await this.cas(`req:${tenant}:${low(id)}`, cur.raw, JSON.stringify(next), 'KEEPTTL')) return;
    }
  }

  async tokenOf(tenant: string, id: string): Promise<string | undefined> {
    const t = (await this.slot(tenant, id))?.slot.token;
    return t ? this.cipher.open(t) : undefined;
  }

  async markRelayed(tenant: string, id: string, nonce: string): Promise<boolean> {
    if (!(await this.get(tenant, id))) return false;
    const key = `relayed:${tenant}:${low(id)}`;
    const res = await this.redis.multi().sadd(key, nonce).pexpire(key, this.finishedTtlMs).exec();
    const added = res?.[0];
    if (!added || added[0]) throw added?.[0] ?? new Error('markRelayed: the transaction was aborted');
    return added[1] === 1;
  }

  async claimIdempotencyKey(record: IdempotencyRecord<F>): Promise<IdempotencyRecord<F> | undefined> {
    const key = `idem:${record.tenant}:${record.key}`;
    const ok = await this.redis.set(key, JSON.stringify({ ...record, relay: sealRelay(this.cipher, record.relay) }), 'PX', IDEMPOTENCY_TTL_MS, 'NX');
    if (ok === 'OK') {
      if (record.reservation !== null) await this.redis.set(`idemres:${record.reservation}`, JSON.stringify([record.tenant, record.key]), 'PX', IDEMPOTENCY_TTL_MS);
      return undefined;
    }
    const held = await this.idempotencyRecord(record.tenant, record.key);
    // Expired between the two commands: claim again.
    return held ?? this.claimIdempotencyKey(record);
  }

  async idempotencyRecord(tenant: string, key: string): Promise<IdempotencyRecord<F> | undefined> {
    const raw = await this.redis.get(`idem:${tenant}:${key}`);
    if (raw === null) return undefined;
    const r = JSON.parse(raw) as IdempotencyRecord<F>;
    return { ...r, relay: openRelay(this.cipher, r.relay) };
  }

  async settleIdempotencyKey(tenant: string, key: string, outcome: IdempotencyOutcome): Promise<void> {
    const k = `idem:${tenant}:${key}`;
    for (let attempt = 0; attempt < 10; attempt++) {
      const raw = await this.redis.get(k);
      if (raw === null) return;
      const next = settled(JSON.parse(raw) as IdempotencyRecord<F>, outcome);
      if (!next || (await this.cas(k, raw, JSON.stringify(next), 'KEEPTTL'))) return;
    }
  }

  async releaseIdempotencyKey(tenant: string, key: string): Promise<void> {
    const r = await this.idempotencyRecord(tenant, key);
    if (!r) return;
    await this.redis.del(`idem:${tenant}:${key}`);
    if (r.reservation !== null) {
      const of = await this.redis.get(`idemres:${r.reservation}`);
      if (of === JSON.stringify([tenant, key])) await this.redis.del(`idemres:${r.reservation}`);
    }
  }

  /** A reservation bound to a request settles the idempotency record that carried it. */
  private async bindIdempotency(reservation: string, id: string): Promise<void> {
    const of = await this.redis.get(`idemres:${reservation}`);
    if (of === null) return;
    const [tenant, key] = JSON.parse(of) as [string, string];
    const r = await this.idempotencyRecord(tenant, key);
    if (!r || r.reservation !== reservation || r.state === 'created') return;
    await this.settleIdempotencyKey(tenant, key, { state: 'created', id });
  }
}

/** The poller's bookkeeping on Redis: one budget, one state per entry and one lease per read for every replica. */
export class RedisPollBook implements PollBook {
  constructor(private readonly redis: Redis) {}

  async budgetLeft(now: number, max: number): Promise<number> {
    await this.redis.zremrangebyscore('poll:calls', '-inf', now - 60_000);
    return Math.max(0, max - (await this.redis.zcard('poll:calls')));
  }

  async spend(now: number, max: number): Promise<boolean> {
    return (await SPEND.run(this.redis, ['poll:calls'], [now, now - 60_000, max, `${now}:${randomBytes(6).toString('hex')}`])) === 1;
  }

  async state(key: string): Promise<PollState | undefined> {
    const raw = await this.redis.get(`poll:state:${key}`);
    return raw === null ? undefined : (JSON.parse(raw) as PollState);
  }

  async setState(key: string, st: PollState, ttlMs: number): Promise<void> {
    await this.redis.set(`poll:state:${key}`, JSON.stringify(st), 'PX', Math.max(1000, Math.ceil(ttlMs)));
  }

  async clearState(key: string): Promise<void> {
    await this.redis.del(`poll:state:${key}`);
  }

  /** States expire on their own. */
  async retain(): Promise<void> {}

  /** Lease values this book holds, by key (a release frees only its own lease). */
  private readonly held = new Map<string, string>();

  async lease(key: string, ms: number): Promise<boolean> {
    const mine = randomBytes(8).toString('hex');
    const ok = (await this.redis.set(`poll:lease:${key}`, mine, 'PX', Math.max(1, Math.ceil(ms)), 'NX')) === 'OK';
    if (ok) this.held.set(key, mine);
    return ok;
  }

  async release(key: string): Promise<void> {
    const mine = this.held.get(key);
    if (mine === undefined) return;
    this.held.delete(key);
    await RELEASE.run(this.redis, [`poll:lease:${key}`], [mine]);
  }

  async renew(key: string, ms: number): Promise<boolean> {
    const mine = this.held.get(key);
    if (mine === undefined) return false;
    const ok = (await RENEW.run(this.redis, [`poll:lease:${key}`], [mine, Math.max(1, Math.ceil(ms))])) === 1;
    if (!ok) this.held.delete(key);
    return ok;
  }
}
