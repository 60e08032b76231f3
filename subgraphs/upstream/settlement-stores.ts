/**
 * The unknown calls (`settlement.ts`) on Redis (every replica shares them) and in the embedded
 * database (a restart forgets none).
 *
 * Redis keys, under the connection's prefix: `settle:call:<id>` (the record as JSON, 30 days),
 * `settle:open` (sorted set of the ids the settler may still settle, by send time: never a call
 * of no readable account, and those past the horizon taken out), `settle:op:<operationId>` (set of the
 * operation's ids, 30 days), `settle:used:<account>` (sorted set of the wallet transactions taken
 * for calls settled as charged, by when, 2 h), `settle:paid:<account>|<area>|<micro-euro>|<second>` (counters, 2 h).
 * Settling takes the id out of `settle:open` first (ZREM): only the replica that took it writes.
 *
 * SQLite: the `settlement` namespace of the `kv` table: `call:<id>` tagged `open` while open,
 * `op:<operationId>:<id>`, `paid:<…>` counters; settling is one `UPDATE … WHERE tag = 'open'`.
 */
import type { Redis } from 'ioredis';
import type { Area } from '../../contract/areas.ts';
import { SqliteKv, type SqliteDatabase } from '../../platform/sqlite.ts';
import { PAID_TTL_MS, paidKey, SETTLEMENT_TTL_MS, type SettleOutcome, type SettlementStore, type UnknownCall } from './settlement.ts';

export class RedisSettlementStore implements SettlementStore {
  constructor(private readonly redis: Redis) {}

  async add(call: UnknownCall): Promise<void> {
    const tx = this.redis.multi().set(`settle:call:${call.id}`, JSON.stringify(call), 'PX', SETTLEMENT_TTL_MS);
    // A call of no readable account is never settled: kept for its operation, not in the open set.
    if (call.account !== null) tx.zadd('settle:open', call.sentAt, call.id);
    await tx.sadd(`settle:op:${call.operationId}`, call.id).pexpire(`settle:op:${call.operationId}`, SETTLEMENT_TTL_MS).exec();
  }

  async countPaid(account: string, area: Area, price: number, at: number): Promise<void> {
    const k = `settle:paid:${paidKey(account, area, price, Math.floor(at / 1000))}`;
    await this.redis.multi().incr(k).pexpire(k, PAID_TTL_MS).exec();
  }

  async paidBetween(account: string, area: Area, price: number, fromSec: number, toSec: number): Promise<number> {
    if (toSec < fromSec) return 0;
    const keys: string[] = [];
    for (let s = fromSec; s <= toSec; s++) keys.push(`settle:paid:${paidKey(account, area, price, s)}`);
    const values = await this.redis.mget(...keys);
    return values.reduce((a, v) => a + Number(v ?? 0), 0);
  }

  private async read(ids: string[]): Promise<UnknownCall[]> {
    if (ids.length === 0) return [];
    const values = await this.redis.mget(...ids.map((id) => `settle:call:${id}`));
    return values.flatMap((v) => (v ? [JSON.parse(v) as UnknownCall] : []));
  }

  async open(limit: number, expireBefore?: number): Promise<UnknownCall[]> {
    if (expireBefore !== undefined) await this.redis.zremrangebyscore('settle:open', '-inf', `(${expireBefore}`);
    const ids = await this.redis.zrange('settle:open', 0, Math.max(0, limit - 1));
    const calls = await this.read(ids);
    // An open id whose record expired is dropped.
    const found = new Set(calls.map((c) => c.id));
    const gone = ids.filter((id) => !found.has(id));
    if (gone.length > 0) await this.redis.zrem('settle:open', ...gone);
    return calls;
  }

  async settle(id: string, outcome: SettleOutcome): Promise<UnknownCall | null> {
    if ((await this.redis.zrem('settle:open', id)) !== 1) return null;
    const [call] = await this.read([id]);
    if (!call) return null;
    const settled: UnknownCall = settledOf(call, outcome);
    const tx = this.redis.multi().set(`settle:call:${id}`, JSON.stringify(settled), 'PX', SETTLEMENT_TTL_MS);
    if (call.account !== null && outcome.charges?.length) {
      const k = `settle:used:${call.account}`;
      tx.zadd(k, ...outcome.charges.flatMap((t) => [outcome.at, t])).pexpire(k, PAID_TTL_MS);
    }
    await tx.exec();
    return settled;
  }

  async usedCharges(account: string, since: number): Promise<Set<string>> {
    const k = `settle:used:${account}`;
    await this.redis.zremrangebyscore(k, '-inf', `(${since}`);
    return new Set(await this.redis.zrange(k, 0, -1));
  }

  async byOperation(operationId: string): Promise<UnknownCall[]> {
    return this.read(await this.redis.smembers(`settle:op:${operationId}`));
  }
}

export class SqliteSettlementStore implements SettlementStore {
  private readonly kv: SqliteKv;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly now: () => number = Date.now,
  ) {
    this.kv = new SqliteKv(db, 'settlement', now);
  }

  async add(call: UnknownCall): Promise<void> {
    this.db.tx(() => {
      // A call of no readable account is never settled: kept for its operation, not tagged open.
      this.kv.set(`call:${call.id}`, JSON.stringify(call), { exp: this.now() + SETTLEMENT_TTL_MS, tag: call.account !== null ? 'open' : null });
      this.kv.set(`op:${call.operationId}:${call.id}`, call.id, { exp: this.now() + SETTLEMENT_TTL_MS });
    });
  }

  async countPaid(account: string, area: Area, price: number, at: number): Promise<void> {
    this.db.run(
      "INSERT INTO kv (ns, k, v, exp, tag) VALUES ('settlement', ?, '1', ?, NULL) ON CONFLICT (ns, k) DO UPDATE SET v = CAST(CAST(v AS INTEGER) + 1 AS TEXT)",
      `paid:${paidKey(account, area, price, Math.floor(at / 1000))}`,
      this.now() + PAID_TTL_MS,
    );
  }

  async paidBetween(account: string, area: Area, price: number, fromSec: number, toSec: number): Promise<number> {
    let n = 0;
    for (let s = fromSec; s <= toSec; s++) n += Number(this.kv.get(`paid:${paidKey(account, area, price, s)}`) ?? 0);
    return n;
  }

  async open(limit: number, expireBefore?: number): Promise<UnknownCall[]> {
    const calls = this.kv.tagged('open').map((r) => JSON.parse(r.v) as UnknownCall);
    const expired = expireBefore === undefined ? [] : calls.filter((c) => c.sentAt < expireBefore);
    for (const c of expired) this.db.run("UPDATE kv SET tag = NULL WHERE ns = 'settlement' AND k = ? AND tag = 'open'", `call:${c.id}`);
    const gone = new Set(expired.map((c) => c.id));
    return calls
      .filter((c) => !gone.has(c.id))
      .sort((a, b) => a.sentAt - b.sentAt)
      .slice(0, limit);
  }

  async settle(id: string, outcome: SettleOutcome): Promise<UnknownCall | null> {
    return this.db.tx(() => {
      const row = this.kv.row(`call:${id}`);
      if (!row || row.tag !== 'open') return null;
      const settled: UnknownCall = settledOf(JSON.parse(row.v) as UnknownCall, outcome);
      const changed = this.db.run("UPDATE kv SET v = ?, tag = NULL WHERE ns = 'settlement' AND k = ? AND tag = 'open'", JSON.stringify(settled), `call:${id}`);
      if (changed !== 1) return null;
      if (settled.account !== null) for (const t of outcome.charges ?? []) this.kv.set(`used:${settled.account}|${t}`, String(outcome.at), { exp: this.now() + PAID_TTL_MS });
      return settled;
    });
  }

  async usedCharges(account: string, since: number): Promise<Set<string>> {
    const prefix = `used:${account}|`;
    return new Set(
      this.kv
        .scan(prefix)
        .filter((r) => Number(r.v) >= since)
        .map((r) => r.k.slice(prefix.length)),
    );
  }

  async byOperation(operationId: string): Promise<UnknownCall[]> {
    return this.kv.scan(`op:${operationId}:`).flatMap((r) => {
      const v = this.kv.get(`call:${r.v}`);
      return v ? [JSON.parse(v) as UnknownCall] : [];
    });
  }
}

const settledOf = (call: UnknownCall, outcome: SettleOutcome): UnknownCall => ({
  ...call,
  state: outcome.state,
  basis: outcome.basis,
  settledAt: outcome.at,
  ...(outcome.charges?.length ? { charges: [...outcome.charges] } : {}),
});
