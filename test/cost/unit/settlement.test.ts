/**
 * Settling money at risk (`upstream/settlement.ts`): which unknown calls the wallet history shows
 * charged, by counting its charges in each call's window against the paid calls the layer saw; and
 * the settler on an injected clock (a call is looked at only once the service can no longer charge
 * it), on demand, with its events and an operation's standing.
 */
import { describe, expect, it } from 'vitest';
import {
  chargesOf,
  MemorySettlementStore,
  operationSettlement,
  PAID_TTL_MS,
  reconcile,
  Settler,
  settledTopic,
  type UnknownCall,
  type WalletCharge,
} from '../../../subgraphs/upstream/settlement.ts';
import { unknownCall } from '../../support/settlement.ts';

const T0 = Date.parse('2026-11-28T10:00:00Z');
const LATE = 1_000;

let n = 0;
const unknown = (over: Partial<UnknownCall> = {}): UnknownCall => unknownCall(`c${++n}`, T0, over);
let txn = 0;
const charge = (atMs: number, euro = 0.5, area: WalletCharge['area'] = 'risk'): WalletCharge => ({ id: `txn_${++txn}`, at: atMs, euro, area });
const noPaid = async (): Promise<number> => 0;

describe('reconcile', () => {
  it('a charge in the window is the unknown call’s; none means not charged', async () => {
    const a = unknown();
    const b = unknown({ sentAt: T0 + 60_000, endedAt: T0 + 60_400 });
    const out = await reconcile({ calls: [a, b], charges: [charge(T0 + 700)], paid: noPaid, lateMs: LATE });
    expect(out).toEqual([
      { id: a.id, state: 'charged', charges: [expect.stringMatching(/^txn_/)] },
      { id: b.id, state: 'not_charged' },
    ]);
  });

  it('takes off the charges of paid calls the layer saw in the same window (the retry after a timeout)', async () => {
    const a = unknown();
    // The retry was answered and paid at T0+450; the timed-out call was carried out later (T0+700), or not.
    const paid = async (_area: string, _price: number, from: number, to: number): Promise<number> =>
      Math.floor((T0 + 450) / 1000) >= from && Math.floor((T0 + 450) / 1000) <= to ? 1 : 0;
    expect(await reconcile({ calls: [a], charges: [charge(T0 + 450), charge(T0 + 700)], paid, lateMs: LATE })).toMatchObject([{ id: a.id, state: 'charged' }]);
    expect(await reconcile({ calls: [a], charges: [charge(T0 + 450)], paid, lateMs: LATE })).toMatchObject([{ id: a.id, state: 'not_charged' }]);
  });

  it('matches amount and area: another price or another area’s charge tells nothing of this call', async () => {
    const a = unknown();
    const out = await reconcile({ calls: [a], charges: [charge(T0 + 500, 0.03), charge(T0 + 500, 0.5, 'company')], paid: noPaid, lateMs: LATE });
    expect(out).toMatchObject([{ id: a.id, state: 'not_charged' }]);
    // A description naming no area matches any area.
    expect(await reconcile({ calls: [a], charges: [charge(T0 + 500, 0.5, null)], paid: noPaid, lateMs: LATE })).toMatchObject([{ id: a.id, state: 'charged' }]);
  });

  it('overlapping calls of one price settle as a group: the euro is exact', async () => {
    const a = unknown();
    const b = unknown({ sentAt: T0 + 100, endedAt: T0 + 500 });
    const c = unknown({ sentAt: T0 + 200, endedAt: T0 + 600 });
    const out = await reconcile({ calls: [c, a, b], charges: [charge(T0 + 800), charge(T0 + 900)], paid: noPaid, lateMs: LATE });
    expect(out.filter((d) => d.state === 'charged')).toHaveLength(2);
    expect(out.filter((d) => d.state === 'not_charged')).toHaveLength(1);
  });

  it('widens the window past a paid call charged in one second and answered in the next', async () => {
    const a = unknown();
    const to = Math.floor((T0 + 400 + LATE) / 1000) + 1;
    // The retry was charged in the window's last second and counted as answered in the next one.
    const paid = async (_area: string, _price: number, from: number, upTo: number): Promise<number> => (to + 1 >= from && to + 1 <= upTo ? 1 : 0);
    expect(await reconcile({ calls: [a], charges: [charge(to * 1000 + 900)], paid, lateMs: LATE })).toMatchObject([{ id: a.id, state: 'not_charged' }]);
  });

  it('leaves a group open when no count can be: more charges than calls (someone else spends from the wallet)', async () => {
    const a = unknown();
    expect(await reconcile({ calls: [a], charges: [charge(T0 + 500), charge(T0 + 600)], paid: noPaid, lateMs: LATE })).toMatchObject([]);
  });

  it('does not decide a group near a call of its price still open: that call’s charge is not taken for one of the group’s', async () => {
    // a was not charged; b, sent 3 s after a ended and not ready yet, was charged at T0+3500 (inside
    // a's window widened by up to 4 s, where a count of 1 would agree with the next width).
    const a = unknown();
    const b = unknown({ sentAt: T0 + 3_400, endedAt: T0 + 3_800 });
    const charges = [charge(T0 + 3_500)];
    expect(await reconcile({ calls: [a], charges, paid: noPaid, lateMs: LATE, waiting: [b] })).toMatchObject([]);
    // Counted together once b is ready: one of the two was charged, the euro is exact.
    expect(await reconcile({ calls: [a, b], charges, paid: noPaid, lateMs: LATE })).toMatchObject([
      { id: a.id, state: 'charged' },
      { id: b.id, state: 'not_charged' },
    ]);
    // A call waiting far away, or of another price, holds nothing back.
    const far = unknown({ sentAt: T0 + 60_000, endedAt: T0 + 60_400 });
    const other = unknown({ sentAt: T0 + 3_400, endedAt: T0 + 3_800, price: 15 });
    expect(await reconcile({ calls: [a], charges: [], paid: noPaid, lateMs: LATE, waiting: [far, other] })).toMatchObject([{ id: a.id, state: 'not_charged' }]);
  });

  it('reads charges from the wallet history (negative amounts; the area from the description)', () => {
    expect(
      chargesOf([
        { id: 'txn_1', amount: 100, createdAt: '2026-11-28T10:00:00+00:00', description: 'Wallet recharge' },
        { id: 'txn_2', amount: -0.5, createdAt: '2026-11-28T10:00:01+00:00', description: 'API usage - test.risk.openapi.com' },
        { id: 'txn_3', amount: -15, createdAt: '2026-11-28T10:00:02+00:00', description: 'API usage' },
        { id: 'txn_4', amount: -1, createdAt: 'garbage' },
      ]),
    ).toEqual([
      { id: 'txn_2', at: T0 + 1000, euro: 0.5, area: 'risk' },
      { id: 'txn_3', at: T0 + 2000, euro: 15, area: null },
    ]);
  });
});

describe('the settler', () => {
  const setup = (charges: WalletCharge[]) => {
    let now = T0;
    const store = new MemorySettlementStore(() => now);
    const reads: number[] = [];
    const settler = new Settler(
      store,
      {
        account: 'acct',
        chargesSince: async (since) => {
          reads.push(since);
          return charges.filter((c) => c.at >= since);
        },
      },
      { lateMs: LATE, now: () => now },
    );
    return { store, settler, reads, advance: (ms: number) => (now += ms) };
  };

  it('settles a call only once the service can no longer charge it, and reads nothing before', async () => {
    const { store, settler, reads, advance } = setup([charge(T0 + 700)]);
    const a = unknown();
    await store.add(a);
    expect(await settler.settleNow()).toMatchObject({ charged: 0, notCharged: 0, open: 1, openEuro: 0.5 });
    expect(reads).toEqual([]);
    advance(10_000);
    expect(await settler.settleNow()).toEqual({ charged: 1, chargedEuro: 0.5, notCharged: 0, notChargedEuro: 0, open: 0, openEuro: 0 });
    expect(reads).toHaveLength(1);
    expect(await settler.operation('op-1')).toMatchObject({ atRisk: 0.5, charged: 0.5, notCharged: 0, open: 0, settled: true });
  });

  it('settles a ready call only with the open calls of its price near it, once they are ready too', async () => {
    // a (not charged) is ready first; b, near it, was charged at T0+3500 and is not ready yet.
    const { store, settler, advance } = setup([charge(T0 + 3_500)]);
    const a = unknown();
    const b = unknown({ sentAt: T0 + 3_400, endedAt: T0 + 3_800 });
    await store.add(a);
    await store.add(b);
    advance(8_500);
    expect(await settler.settleNow()).toMatchObject({ charged: 0, notCharged: 0, open: 2 });
    advance(4_000);
    expect(await settler.settleNow()).toMatchObject({ charged: 1, chargedEuro: 0.5, notCharged: 1, notChargedEuro: 0.5, open: 0 });
  });

  it('leaves the calls of another account (a caller’s own token) open: its wallet cannot be read', async () => {
    const { store, settler, advance } = setup([charge(T0 + 700)]);
    await store.add(unknown({ account: null }));
    advance(10_000);
    // Never settleable, it is not among the calls a pass looks at: it stays open in its operation.
    expect(await settler.settleNow()).toMatchObject({ charged: 0, notCharged: 0, open: 0 });
    expect(await settler.operation('op-1')).toMatchObject({ atRisk: 0.5, open: 0.5, settled: false });
  });

  it('tells each settlement on the tenant’s topic, and one pass at a time', async () => {
    const { store, settler, advance } = setup([]);
    await store.add(unknown({ operationId: 'op-9', method: 'POST', path: '/IT-report-persona', price: 15 }));
    advance(10_000);
    const events = settler.events.subscribe(settledTopic('t1'), { replayLatest: false });
    const [one, two] = await Promise.all([settler.settleNow(), settler.settleNow()]);
    expect(one).toBe(two);
    expect(one).toMatchObject({ notCharged: 1, notChargedEuro: 15 });
    const got = await events.next();
    expect(got.value).toMatchObject({ operationId: 'op-9', state: 'not_charged', price: 15, basis: 'wallet' });
    await events.return?.();
    settler.stop();
  });

  it('sums an operation’s standing', () => {
    const s = operationSettlement('op', [unknown({ price: 0.5, state: 'charged' }), unknown({ price: 15, state: 'not_charged' }), unknown({ price: 0.03 })]);
    expect(s).toMatchObject({ atRisk: 15.53, charged: 0.5, notCharged: 15, open: 0.03, settled: false });
  });
});

describe('the settler, again', () => {
  it('reads the history again only when a call not yet reconciled is ready', async () => {
    let now = T0;
    const store = new MemorySettlementStore(() => now);
    let reads = 0;
    // Two charges for one call: undecidable, stays open.
    const settler = new Settler(
      store,
      {
        account: 'acct',
        chargesSince: async () => {
          reads++;
          return [charge(T0 + 500), charge(T0 + 600)];
        },
      },
      { lateMs: LATE, now: () => now },
    );
    await store.add(unknown());
    now += 10_000;
    expect(await settler.settleNow()).toMatchObject({ open: 1 });
    expect(await settler.settleNow()).toMatchObject({ open: 1 });
    expect(reads).toBe(1);
    await store.add(unknown({ sentAt: now, endedAt: now + 400 }));
    now += 10_000;
    await settler.settleNow();
    expect(reads).toBe(2);
  });
});

describe('the settler, reading the history', () => {
  it('reads back only as far as the calls not yet tried need, and backs off when the history cannot be read', async () => {
    let now = T0;
    const store = new MemorySettlementStore(() => now);
    const reads: number[] = [];
    let fail = false;
    const settler = new Settler(
      store,
      {
        account: 'acct',
        chargesSince: async (since) => {
          reads.push(since);
          if (fail) throw new Error('the wallet history holds more than 5000 transactions');
          // Two charges for the first call: undecidable, it stays open (tried).
          return [charge(T0 + 500), charge(T0 + 600)];
        },
      },
      { lateMs: LATE, now: () => now },
    );
    await store.add(unknown());
    now += 10_000;
    await settler.settleNow();
    const b = unknown({ sentAt: now + 60_000, endedAt: now + 60_400 });
    await store.add(b);
    now += 80_000;
    await settler.settleNow();
    expect(reads).toHaveLength(2);
    // The second read starts at b's window, not at the first call's (tried already, left open).
    expect(reads[1]).toBeGreaterThan(T0 + 60_000);
    fail = true;
    await store.add(unknown({ sentAt: now, endedAt: now + 400 }));
    now += 10_000;
    await expect(settler.settleNow()).rejects.toThrow(/more than/);
    await expect(settler.settleNow()).resolves.toMatchObject({ open: 2 });
    now += 60_000;
    await settler.settleNow();
    expect(reads).toHaveLength(3);
  });
});

describe('the settler, past the paid-call counters', () => {
  it('never counts a call older than the counters kept: it stays open, and the history is not read for it', async () => {
    let now = T0;
    const store = new MemorySettlementStore(() => now);
    let reads = 0;
    const settler = new Settler(
      store,
      {
        account: 'acct',
        chargesSince: async () => {
          reads++;
          // The charge of a paid call answered at T0+500, whose counter has expired.
          return [charge(T0 + 500)];
        },
      },
      { lateMs: LATE, now: () => now },
    );
    await store.add(unknown());
    now += PAID_TTL_MS;
    // Past the horizon it leaves the open set (no pass looks at it again); its record stays open.
    expect(await settler.settleNow()).toMatchObject({ charged: 0, notCharged: 0 });
    expect(reads).toBe(0);
    expect(await settler.operation('op-1')).toMatchObject({ open: 0.5, settled: false });
  });

  it('reconcile leaves open a group whose widened window starts before the counters kept', async () => {
    const a = unknown();
    const notBeforeSec = Math.floor(T0 / 1000);
    expect(await reconcile({ calls: [a], charges: [charge(T0 + 500)], paid: noPaid, lateMs: LATE, notBeforeSec })).toMatchObject([]);
    expect(await reconcile({ calls: [a], charges: [charge(T0 + 500)], paid: noPaid, lateMs: LATE, notBeforeSec: notBeforeSec - 10 })).toMatchObject([
      { id: a.id, state: 'charged' },
    ]);
  });
});

describe('the settler, with many calls it cannot settle', () => {
  it('a batch of calls made with callers’ own tokens does not hold back the calls it can settle', async () => {
    let now = T0;
    const store = new MemorySettlementStore(() => now);
    const settler = new Settler(store, { account: 'acct', chargesSince: async () => [] }, { lateMs: LATE, now: () => now, batch: 3 });
    for (let i = 0; i < 3; i++) await store.add(unknown({ account: null, operationId: 'op-theirs' }));
    await store.add(unknown({ sentAt: T0 + 100, endedAt: T0 + 500, operationId: 'op-mine' }));
    now += 10_000;
    expect(await settler.settleNow()).toMatchObject({ notCharged: 1 });
    expect(await settler.operation('op-theirs')).toMatchObject({ open: 1.5, settled: false });
  });
});

describe('the settler, across passes and replicas', () => {
  it('never takes one wallet charge for two calls: a charge taken for a call settled as charged is left out of later counts', async () => {
    let now = T0;
    const store = new MemorySettlementStore(() => now);
    const only = charge(T0 + 700);
    const wallet = { account: 'acct', chargesSince: async () => [only] };
    const one = new Settler(store, wallet, { lateMs: LATE, now: () => now });
    await store.add(unknown());
    now += 10_000;
    expect(await one.settleNow()).toMatchObject({ charged: 1 });
    expect((await store.byOperation('op-1'))[0]).toMatchObject({ state: 'charged', charges: [only.id] });
    // Another replica (its clock behind) keeps a call whose widened window reaches that charge.
    const other = new Settler(store, wallet, { lateMs: LATE, now: () => now });
    await store.add(unknown({ operationId: 'op-2', sentAt: T0 + 2_500, endedAt: T0 + 2_600 }));
    expect(await other.settleNow()).toMatchObject({ charged: 0, notCharged: 1 });
    expect(await other.operation('op-2')).toMatchObject({ charged: 0, notCharged: 0.5 });
  });
});
