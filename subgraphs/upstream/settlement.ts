/**
 * Money at risk, settled. A paid call whose outcome is unknown (a timeout, a connection reset after
 * the request was sent, a 502/504 where a proxy lost the service's answer) keeps its price "at
 * risk" in `extensions.cost`. Here each such call is recorded durably (`SettlementStore`: memory,
 * the embedded database or Redis, one interface) with what settling it needs, and settled later
 * from the suite's own free records, charged or not.
 *
 * The record that tells is the account's wallet history (`GET /wallet/transactions`, authorization
 * area, inside its free tier): every charge is a transaction with its amount and time. A charge is
 * not tied to a request, so calls are settled by counting: for the unknown calls of one account,
 * area and price whose windows overlap (from the second the call was sent to the second the service
 * may still have charged it, `lateMs` after the layer gave up), the wallet's charges of that amount
 * in the window, less the calls of that account, area and price the layer saw answered and paid in
 * the same window (counted per second by `countPaid`), is the number of unknown calls that were
 * charged. A paid call charged in one second and answered in the next miscounts at a window's
 * edge: the window is widened a second at a time until two widths agree (else the calls stay open,
 * and are told apart from those the history can still settle). When 0 < charged < unknown, the earliest
 * are taken as charged: the euro is exact, which call of the group paid is not told by the wallet.
 *
 * Only calls made with a token of the account whose credentials the layer holds can be settled this
 * way (its wallet is the one the layer can read); others stay at risk: the suite cannot tell.
 *
 * ```ts
 * const settler = new Settler(upstream, store, { lateMs: 60_000 });
 * settler.start(30_000);                 // in the background
 * await settler.settleNow();             // on demand
 * await settler.operation(operationId);  // what an operation's at-risk calls came to
 * ```
 */
import { randomUUID } from 'node:crypto';
import type { Area } from '../../contract/areas.ts';
import { AREA_HOSTS } from '../../contract/areas.ts';
import { countSettled } from '../../platform/metrics.ts';
import { log } from '../../platform/log.ts';
import { MemoryEventBus } from '../../platform/bus.ts';

export type SettlementState = 'open' | 'charged' | 'not_charged';

/** One paid call whose outcome was unknown when the layer gave up on it. */
export interface UnknownCall {
  id: string;
  /** The client operation that made it (`extensions.cost.operationId`). */
  operationId: string;
  tenant: string;
  /** The account (its tenant) whose wallet the call was charged to, when the layer can read it; else null. */
  account: string | null;
  area: Area;
  method: string;
  /** The path as reported in `extensions.cost.calls` (ids of people hidden). */
  path: string;
  /** Euro at risk. */
  price: number;
  /** When the request was sent (ms). */
  sentAt: number;
  /** When the layer gave up on it (ms). */
  endedAt: number;
  state: SettlementState;
  /** The sent mark of a slow GET's purchase (its cache key), cleared when settled as never charged. */
  pendingKey?: string;
  /** What settled it (`wallet`), when settled. */
  basis?: string;
  /** Settled as charged: the wallet transactions taken for it (never taken for another call). */
  charges?: string[];
  settledAt?: number;
}

/** How a call is settled. */
export interface SettleOutcome {
  state: Exclude<SettlementState, 'open'>;
  basis: string;
  at: number;
  /** Charged: the wallet transactions taken for it, kept (`usedCharges`) with the settled record, atomically. */
  charges?: string[];
}

export interface SettlementStore {
  /** Records an unknown call (open). */
  add(call: UnknownCall): Promise<void>;
  /** Counts one call of `account` answered and paid at `price` in `area` at `at` (ms). */
  countPaid(account: string, area: Area, price: number, at: number): Promise<void>;
  /** Paid calls counted for `account`, `area`, `price` in the seconds `fromSec`..`toSec` (inclusive). */
  paidBetween(account: string, area: Area, price: number, fromSec: number, toSec: number): Promise<number>;
  /**
   * Open calls the settler may still settle, oldest first, at most `limit`. A call of no readable
   * account (`account: null`) is never among them: it stays open (at risk) in its record, read by
   * `byOperation`. With `expireBefore` (ms), calls sent before it leave the open set for good (the
   * settler can no longer count them: `horizonSec`); their records stay open too.
   */
  open(limit: number, expireBefore?: number): Promise<UnknownCall[]>;
  /**
   * Settles an open call: the settled record, or null when it was not open (another replica
   * settled it first). Atomic.
   */
  settle(id: string, outcome: SettleOutcome): Promise<UnknownCall | null>;
  /**
   * The wallet transactions of `account` taken for calls settled as charged (`SettleOutcome.charges`)
   * at or after `since` (ms): a later count leaves them out, a charge never settles two calls.
   */
  usedCharges(account: string, since: number): Promise<Set<string>>;
  /** The unknown calls of an operation, settled or not. */
  byOperation(operationId: string): Promise<UnknownCall[]>;
}

const MICRO = 1_000_000;
export const toMicro = (euro: number): number => Math.round(euro * MICRO);
const round4 = (n: number): number => Math.round(n * 10000) / 10000;
/** How long settled records and paid counters are kept. */
export const SETTLEMENT_TTL_MS = 30 * 86_400_000;
export const PAID_TTL_MS = 2 * 3_600_000;
/** How long the settler waits before reading the history again for calls it could not read it for (doubling each time). */
/**
 * How much younger than the paid-call counters a call must be for the settler to count it: a call
 * whose window starts before `now - PAID_TTL_MS + HORIZON_MARGIN_MS` is never reconciled (it stays
 * open, at risk): the paid calls answered near it are no longer counted, their charges would be
 * taken for its own. The margin covers the pass itself and clocks of replicas apart.
 */
export const HORIZON_MARGIN_MS = 10 * 60_000;
/** The first second the settler may still count, at `now`. */
export const horizonSec = (now: number): number => Math.floor((now - PAID_TTL_MS + HORIZON_MARGIN_MS) / 1000);
export const READ_BACKOFF_MS = 5 * 60_000;

export const newUnknownCallId = (): string => randomUUID();

/** The unknown calls in memory (one process; `STORE=memory`). */
export class MemorySettlementStore implements SettlementStore {
  private readonly calls = new Map<string, UnknownCall>();
  /** The ids of the open calls the settler may still settle (see `SettlementStore.open`). */
  private readonly openIds = new Set<string>();
  /** When each call was added (ms): an open record is kept `SETTLEMENT_TTL_MS` from then, as in the other stores. */
  private readonly addedAt = new Map<string, number>();
  private readonly paid = new Map<string, number>();
  /** `<account>|<transaction id>` → when it was taken for a charged call, and kept until (ms). */
  private readonly used = new Map<string, { at: number; until: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  async add(call: UnknownCall): Promise<void> {
    this.sweep();
    this.calls.set(call.id, { ...call });
    this.addedAt.set(call.id, this.now());
    if (call.account !== null && call.state === 'open') this.openIds.add(call.id);
  }

  async countPaid(account: string, area: Area, price: number, at: number): Promise<void> {
    const k = paidKey(account, area, price, Math.floor(at / 1000));
    this.paid.set(k, (this.paid.get(k) ?? 0) + 1);
  }

  async paidBetween(account: string, area: Area, price: number, fromSec: number, toSec: number): Promise<number> {
    let n = 0;
    for (let s = fromSec; s <= toSec; s++) n += this.paid.get(paidKey(account, area, price, s)) ?? 0;
    return n;
  }

  async open(limit: number, expireBefore?: number): Promise<UnknownCall[]> {
    const out: UnknownCall[] = [];
    for (const id of this.openIds) {
      const c = this.calls.get(id);
      if (!c || c.state !== 'open' || (expireBefore !== undefined && c.sentAt < expireBefore)) this.openIds.delete(id);
      else out.push(c);
    }
    return out
      .sort((a, b) => a.sentAt - b.sentAt)
      .slice(0, limit)
      .map((c) => ({ ...c }));
  }

  async settle(id: string, outcome: SettleOutcome): Promise<UnknownCall | null> {
    const c = this.calls.get(id);
    if (!c || c.state !== 'open' || !this.openIds.delete(id)) return null;
    Object.assign(c, { state: outcome.state, basis: outcome.basis, settledAt: outcome.at }, outcome.charges?.length ? { charges: [...outcome.charges] } : {});
    if (c.account !== null) for (const t of outcome.charges ?? []) this.used.set(`${c.account}|${t}`, { at: outcome.at, until: this.now() + PAID_TTL_MS });
    return { ...c };
  }

  async usedCharges(account: string, since: number): Promise<Set<string>> {
    const out = new Set<string>();
    for (const [k, { at }] of this.used) if (at >= since && k.startsWith(`${account}|`)) out.add(k.slice(account.length + 1));
    return out;
  }

  async byOperation(operationId: string): Promise<UnknownCall[]> {
    return [...this.calls.values()].filter((c) => c.operationId === operationId).map((c) => ({ ...c }));
  }

  /** Drops records (settled or not) and paid counters past their time. */
  private sweep(): void {
    const now = this.now();
    for (const [id, c] of this.calls)
      if ((c.state === 'open' ? (this.addedAt.get(id) ?? now) : (c.settledAt ?? 0)) + SETTLEMENT_TTL_MS < now) {
        this.calls.delete(id);
        this.openIds.delete(id);
        this.addedAt.delete(id);
      }
    for (const [k, { until }] of this.used) if (until < now) this.used.delete(k);
    const oldest = Math.floor((now - PAID_TTL_MS) / 1000);
    for (const k of this.paid.keys()) if (Number(k.slice(k.lastIndexOf('|') + 1)) < oldest) this.paid.delete(k);
  }
}

export const paidKey = (account: string, area: Area, price: number, sec: number): string => `${account}|${area}|${toMicro(price)}|${sec}`;

/** One charge of the wallet, as its history tells it. */
export interface WalletCharge {
  /** The transaction's id. */
  id: string;
  /** When (ms; the history has seconds). */
  at: number;
  /** Euro charged (positive). */
  euro: number;
  /** The area named by the transaction's description, when it names one. */
  area: Area | null;
}

/** The charges of a wallet history page (`{id, amount, createdAt, description}`; charges are negative). */
export function chargesOf(transactions: unknown): WalletCharge[] {
  if (!Array.isArray(transactions)) return [];
  const out: WalletCharge[] = [];
  for (const t of transactions) {
    if (typeof t !== 'object' || t === null) continue;
    const { id, amount, createdAt, description } = t as { id?: unknown; amount?: unknown; createdAt?: unknown; description?: unknown };
    if (typeof amount !== 'number' || amount >= 0 || typeof createdAt !== 'string') continue;
    const at = Date.parse(createdAt);
    if (!Number.isFinite(at)) continue;
    out.push({
      id: typeof id === 'string' || typeof id === 'number' ? String(id) : `${createdAt}|${out.length}`,
      at,
      euro: -amount,
      area: areaOfDescription(typeof description === 'string' ? description : ''),
    });
  }
  return out;
}

function areaOfDescription(description: string): Area | null {
  const d = description.toLowerCase();
  for (const [area, host] of Object.entries(AREA_HOSTS) as Array<[Area, string]>) if (d.includes(host)) return area;
  return null;
}

/** What a pass of the settler decided for one call. */
export interface Decision {
  id: string;
  state: Exclude<SettlementState, 'open'>;
  /** Charged: the wallet transaction taken for it. */
  charges?: string[];
}

export interface ReconcileInput {
  /** Open calls of one account, ready (their windows are closed). */
  calls: UnknownCall[];
  charges: WalletCharge[];
  /** Paid calls the layer counted for the account (see `SettlementStore.paidBetween`). */
  paid: (area: Area, price: number, fromSec: number, toSec: number) => Promise<number>;
  /** How long after the layer gave up the service may still charge (ms). */
  lateMs: number;
  /**
   * Open calls of the same account whose windows are not over yet. A group of `calls` near one of
   * them (of its area and price) is not counted now: that call's charge may fall inside the group's
   * widened window, and would be taken for one of the group's. The group waits, and is counted with it.
   */
  waiting?: UnknownCall[];
  /**
   * The first second whose paid-call counters are still kept (`PAID_TTL_MS`): a group whose widened
   * window starts before it is not counted (its answered calls' charges would be taken for its own),
   * and stays open.
   */
  notBeforeSec?: number;
}

/** Seconds a group's window is widened at most, on each side, to find a count that holds. */
export const MAX_WIDEN_S = 4;

/** The seconds during which the service may have charged `call`. */
export const windowOf = (call: UnknownCall, lateMs: number): [number, number] => [Math.floor(call.sentAt / 1000) - 1, Math.floor((call.endedAt + lateMs) / 1000) + 1];

/**
 * Decides which of `calls` were charged (see the module's comment): per area and price, per group
 * of calls whose windows overlap. A group whose count is not the same on the window widened by 2 s,
 * or falls outside 0..its size, is left open. A group near a call still `waiting` is not decided.
 */
export async function reconcile(input: ReconcileInput): Promise<Decision[]> {
  const waiting = new Set((input.waiting ?? []).map((c) => c.id));
  const groups = new Map<string, UnknownCall[]>();
  for (const c of [...input.calls, ...(input.waiting ?? [])]) {
    const k = `${c.area}|${toMicro(c.price)}`;
    const g = groups.get(k);
    if (g) g.push(c);
    else groups.set(k, [c]);
  }
  const out: Decision[] = [];
  for (const group of groups.values()) {
    group.sort((a, b) => a.sentAt - b.sentAt);
    // Clusters of overlapping windows.
    let cluster: UnknownCall[] = [];
    let end = -Infinity;
    const clusters: UnknownCall[][] = [];
    for (const c of group) {
      const [from, to] = windowOf(c, input.lateMs);
      // Windows closer than their widenings join: a widened window never reaches another group's calls.
      if (cluster.length > 0 && from > end + 2 * MAX_WIDEN_S) {
        clusters.push(cluster);
        cluster = [];
      }
      cluster.push(c);
      end = Math.max(end, to);
    }
    if (cluster.length > 0) clusters.push(cluster);
    for (const cl of clusters) {
      if (cl.some((c) => waiting.has(c.id))) continue;
      const from = Math.min(...cl.map((c) => windowOf(c, input.lateMs)[0]));
      if (input.notBeforeSec !== undefined && from - MAX_WIDEN_S < input.notBeforeSec) {
        log.info(`[settlement] left open: ${cl.length} call(s) from ${from} s, older than the paid-call counters kept`);
        continue;
      }
      const to = Math.max(...cl.map((c) => windowOf(c, input.lateMs)[1]));
      const { area, price } = cl[0];
      const matching = (f: number, t: number): WalletCharge[] =>
        input.charges.filter(
          (ch) => toMicro(ch.euro) === toMicro(price) && (ch.area === null || ch.area === area) && Math.floor(ch.at / 1000) >= f && Math.floor(ch.at / 1000) <= t,
        );
      const charged = async (f: number, t: number): Promise<number> => matching(f, t).length - (await input.paid(area, price, f, t));
      // A paid call charged in one second and answered in the next, at a window's edge, miscounts
      // it: the first widening whose count the next widening confirms is taken.
      const counts: number[] = [];
      for (let k = 0; k <= MAX_WIDEN_S; k++) counts.push(await charged(from - k, to + k));
      const k = counts.findIndex((n, i) => i < MAX_WIDEN_S && n === counts[i + 1] && n >= 0 && n <= cl.length);
      if (k < 0) {
        log.info(`[settlement] left open: ${cl.length} call(s) of ${area} at €${price} in ${from}..${to} s, counted ${counts.join(', ')} on wider windows`);
        continue;
      }
      const c = counts[k];
      // Which transactions were the group's the wallet does not tell: the latest c of the window are
      // taken (a paid call answered is charged before its answer, an unknown one may be charged late).
      const window = matching(from - k, to + k).sort((x, y) => x.at - y.at);
      const taken = c > 0 ? window.slice(-c) : [];
      cl.forEach((call, i) => out.push(i < c ? { id: call.id, state: 'charged', charges: [taken[i].id] } : { id: call.id, state: 'not_charged' }));
    }
  }
  return out;
}

/** Where the settler reads the account's wallet history. */
export interface WalletHistory {
  /** The account (its tenant) this history is of. */
  account: string;
  /** Charges at or after `since` (ms), any order. */
  chargesSince(since: number): Promise<WalletCharge[]>;
}

/** What one settlement pass did. */
export interface SettlementRun {
  /** Calls settled as charged, and their euro. */
  charged: number;
  chargedEuro: number;
  /** Calls settled as not charged, and their euro. */
  notCharged: number;
  notChargedEuro: number;
  /** Calls still open (not ready yet, or not told by any record). */
  open: number;
  openEuro: number;
}

/** What an operation's unknown calls came to. */
export interface OperationSettlement {
  operationId: string;
  /** Euro at risk when the operation ended. */
  atRisk: number;
  /** Of it, euro settled as charged. */
  charged: number;
  /** Of it, euro settled as not charged. */
  notCharged: number;
  /** Of it, euro still unsettled. */
  open: number;
  /** True when nothing is left open. */
  settled: boolean;
  calls: UnknownCall[];
}

export function operationSettlement(operationId: string, calls: UnknownCall[]): OperationSettlement {
  const sum = (s: SettlementState): number => round4(calls.filter((c) => c.state === s).reduce((a, c) => a + c.price, 0));
  const open = sum('open');
  return {
    operationId,
    atRisk: round4(calls.reduce((a, c) => a + c.price, 0)),
    charged: sum('charged'),
    notCharged: sum('not_charged'),
    open,
    settled: calls.every((c) => c.state !== 'open'),
    calls: [...calls].sort((a, b) => a.sentAt - b.sentAt),
  };
}

/** The topic of a tenant's settled calls on `Settler.events`. */
export const settledTopic = (tenant: string): string => `settled:${tenant}`;

export interface SettlerOptions {
  /** How long after the layer gave up the service may still charge a call (ms). @default 60000 */
  lateMs?: number;
  /** Clock (ms). @default Date.now */
  now?: () => number;
  /** Open calls looked at per pass. @default 1000 */
  batch?: number;
  /** Told of every call settled (a pass waits for it). */
  onSettled?: (call: UnknownCall) => void | Promise<void>;
}

export class Settler {
  private readonly lateMs: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<SettlementRun> | null = null;
  private readonly listeners = new Set<(call: UnknownCall) => void | Promise<void>>();
  /**
   * Ready calls this process has reconciled already and left open, with when to look at them again:
   * never (their windows are past, the history cannot tell more of them), or, when the history could
   * not be read, after a back-off that doubles each time. A pass with none due reads nothing, and
   * the history is read back only as far as the calls due need.
   */
  private readonly tried = new Map<string, { at: number; fails: number }>();
  /** Calls settled by this process, by tenant (`settledTopic`): the account area's subscription. */
  readonly events = new MemoryEventBus<UnknownCall>({ maxLatest: 1000 });

  constructor(
    readonly store: SettlementStore,
    private readonly wallet: WalletHistory | null,
    private readonly opts: SettlerOptions = {},
  ) {
    this.lateMs = opts.lateMs ?? 60_000;
    this.now = opts.now ?? Date.now;
    if (opts.onSettled) this.listeners.add(opts.onSettled);
  }

  /** Calls `fn` with every call settled from now on (a pass waits for it); returns the way to stop. */
  onSettled(fn: (call: UnknownCall) => void | Promise<void>): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Whether the service can no longer charge `call` (its window is over). */
  private ready(call: UnknownCall, now: number): boolean {
    return now >= (windowOf(call, this.lateMs)[1] + MAX_WIDEN_S + 2) * 1000;
  }

  /** One pass: settles every ready call the wallet tells; one pass at a time (a call meanwhile joins it). */
  settleNow(): Promise<SettlementRun> {
    this.running ??= this.pass().finally(() => (this.running = null));
    return this.running;
  }

  private async pass(): Promise<SettlementRun> {
    // One instant: a call is either ready or waiting, never neither.
    const now = this.now();
    // Calls past the horizon leave the open set: the settler never counts them (they stay open, at risk).
    const open = await this.store.open(this.opts.batch ?? 1000, horizonSec(now) * 1000);
    const wallet = this.wallet;
    const mine = wallet ? open.filter((c) => c.account === wallet.account) : [];
    // Past the horizon, a call is never counted (nor read for): it stays open, and holds back
    // the calls near it, as a waiting one does.
    const notBeforeSec = horizonSec(now);
    const expired = (c: UnknownCall): boolean => windowOf(c, this.lateMs)[0] - MAX_WIDEN_S < notBeforeSec;
    const ready = mine.filter((c) => this.ready(c, now) && !expired(c));
    const waiting = mine.filter((c) => !this.ready(c, now) || expired(c));
    const settled: UnknownCall[] = [];
    const due = ready.filter((c) => (this.tried.get(c.id)?.at ?? -Infinity) <= now);
    if (wallet && due.length > 0) {
      // Read back only as far as the calls due, and the calls whose windows chain to theirs (they
      // are counted together), need: a call tried already and left open, apart from them, is not
      // worth its pages again, nor counted.
      let fromSec = Math.min(...due.map((c) => windowOf(c, this.lateMs)[0]));
      for (let grew = true; grew;) {
        grew = false;
        for (const c of ready) {
          const [f, t] = windowOf(c, this.lateMs);
          if (f < fromSec && t + 2 * MAX_WIDEN_S >= fromSec) {
            fromSec = f;
            grew = true;
          }
        }
      }
      const sinceSec = fromSec - MAX_WIDEN_S - 1;
      const covered = ready.filter((c) => windowOf(c, this.lateMs)[0] >= fromSec);
      if (this.tried.size > 100_000) this.tried.clear();
      let charges: WalletCharge[];
      try {
        charges = await wallet.chargesSince(sinceSec * 1000);
      } catch (err) {
        // Not read (too long a history, the service down): the calls due wait, longer each time,
        // instead of being read for again on every pass.
        for (const c of due) {
          const fails = (this.tried.get(c.id)?.fails ?? 0) + 1;
          this.tried.set(c.id, { at: now + READ_BACKOFF_MS * 2 ** Math.min(fails - 1, 10), fails });
        }
        throw err;
      }
      // A transaction already taken for a call settled as charged (by any pass, any replica) is never counted again.
      const used = await this.store.usedCharges(wallet.account, now - PAID_TTL_MS);
      const decisions = await reconcile({
        calls: covered,
        charges: charges.filter((ch) => !used.has(ch.id)),
        paid: (area, price, from, to) => this.store.paidBetween(wallet.account, area, price, from, to),
        lateMs: this.lateMs,
        waiting,
        notBeforeSec,
      });
      for (const c of covered) this.tried.set(c.id, { at: Infinity, fails: 0 });
      for (const d of decisions) {
        const s = await this.store.settle(d.id, { state: d.state, basis: 'wallet', at: this.now(), ...(d.charges ? { charges: d.charges } : {}) });
        if (!s) continue;
        settled.push(s);
        countSettled(s.state === 'charged' ? 'charged' : 'not_charged', s.price);
        await this.events.publish(settledTopic(s.tenant), s);
        for (const fn of this.listeners) {
          try {
            await fn(s);
          } catch (err) {
            log.warn(`[settlement] listener failed: ${(err as Error).message}`);
          }
        }
      }
    }
    const done = new Set(settled.map((s) => s.id));
    const left = open.filter((c) => !done.has(c.id));
    const of = (state: SettlementState): UnknownCall[] => settled.filter((s) => s.state === state);
    const euro = (l: UnknownCall[]): number => round4(l.reduce((a, c) => a + c.price, 0));
    return {
      charged: of('charged').length,
      chargedEuro: euro(of('charged')),
      notCharged: of('not_charged').length,
      notChargedEuro: euro(of('not_charged')),
      open: left.length,
      openEuro: euro(left),
    };
  }

  /** What the unknown calls of `operationId` came to (settled or not). */
  async operation(operationId: string): Promise<OperationSettlement> {
    return operationSettlement(operationId, await this.store.byOperation(operationId));
  }

  /** Runs a pass every `everyMs` in the background (unref'd); `stop` ends it. */
  start(everyMs: number): void {
    if (this.timer || everyMs <= 0) return;
    this.timer = setInterval(() => {
      this.settleNow().catch((err: unknown) => log.warn(`[settlement] pass failed: ${(err as Error).message}`));
    }, everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    void this.events.close();
  }
}
