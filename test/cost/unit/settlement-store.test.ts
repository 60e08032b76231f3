/**
 * The store of paid calls whose outcome is unknown (`upstream/settlement.ts`), one spec for the
 * memory, SQLite and Redis implementations: kept open until settled, settled once (a replica that
 * comes second gets null), found by operation, and the paid-call counters by second.
 */
import { expect, it } from 'vitest';
import { MemorySettlementStore, type SettlementStore, type UnknownCall } from '../../../subgraphs/upstream/settlement.ts';
import { RedisSettlementStore, SqliteSettlementStore } from '../../../subgraphs/upstream/settlement-stores.ts';
import { describeStores } from '../../support/store-spec.ts';
import { unknownCall } from '../../support/settlement.ts';

const call = (id: string, over: Partial<UnknownCall> = {}): UnknownCall => unknownCall(id, 1_000_000, over);

describeStores<SettlementStore>(
  'settlement store',
  {
    memory: () => new MemorySettlementStore(),
    redis: (redis) => new RedisSettlementStore(redis),
    sqlite: (db) => new SqliteSettlementStore(db),
  },
  (stores) => {
    it('keeps unknown calls open, oldest first, until settled', async () => {
      const s = await stores.make();
      await s.add(call('b', { sentAt: 2_000_000 }));
      await s.add(call('a'));
      expect((await s.open(10)).map((c) => c.id)).toEqual(['a', 'b']);
      expect((await s.open(1)).map((c) => c.id)).toEqual(['a']);
      const settled = await s.settle('a', { state: 'charged', basis: 'wallet', at: 5_000_000 });
      expect(settled).toMatchObject({ id: 'a', state: 'charged', basis: 'wallet', settledAt: 5_000_000, price: 0.5 });
      expect((await s.open(10)).map((c) => c.id)).toEqual(['b']);
    });

    it('keeps a call of no readable account out of the open set (open in its record), and takes calls past the horizon out for good', async () => {
      const s = await stores.make();
      const r = await stores.replica(s);
      await s.add(call('own-token', { account: null }));
      await s.add(call('old', { sentAt: 500_000 }));
      await s.add(call('new', { sentAt: 2_000_000 }));
      expect((await s.open(1)).map((c) => c.id)).toEqual(['old']);
      expect((await r.open(10, 1_000_000)).map((c) => c.id)).toEqual(['new']);
      expect((await s.open(10)).map((c) => c.id)).toEqual(['new']);
      expect((await r.byOperation('op-1')).map((c) => [c.id, c.state]).sort()).toEqual([
        ['new', 'open'],
        ['old', 'open'],
        ['own-token', 'open'],
      ]);
    });

    it('keeps the wallet transactions taken for calls settled as charged, per account, with the record', async () => {
      const s = await stores.make();
      const r = await stores.replica(s);
      await s.add(call('u'));
      await s.add(call('v', { account: 'other' }));
      expect(await s.settle('u', { state: 'charged', basis: 'wallet', at: 5_000_000, charges: ['txn_1'] })).toMatchObject({ charges: ['txn_1'] });
      await r.settle('v', { state: 'charged', basis: 'wallet', at: 6_000_000, charges: ['txn_2'] });
      expect([...(await r.usedCharges('acct', 4_000_000))]).toEqual(['txn_1']);
      expect([...(await s.usedCharges('other', 4_000_000))]).toEqual(['txn_2']);
      expect([...(await s.usedCharges('acct', 5_500_000))]).toEqual([]);
    });

    it('settles a call once: a replica coming second gets null, and the first outcome stands', async () => {
      const s = await stores.make();
      const r = await stores.replica(s);
      await s.add(call('x'));
      const [one, two] = await Promise.all([s.settle('x', { state: 'not_charged', basis: 'wallet', at: 1 }), r.settle('x', { state: 'charged', basis: 'wallet', at: 2 })]);
      expect([one, two].filter((v) => v !== null)).toHaveLength(1);
      const winner = (one ?? two)!.state;
      expect((await r.byOperation('op-1')).map((c) => c.state)).toEqual([winner]);
      expect(await s.settle('missing', { state: 'charged', basis: 'wallet', at: 3 })).toBeNull();
    });

    it('finds an operation’s calls, settled or not, on every replica', async () => {
      const s = await stores.make();
      await s.add(call('p', { operationId: 'op-A' }));
      await s.add(call('q', { operationId: 'op-A', price: 15, method: 'POST' }));
      await s.add(call('z', { operationId: 'op-B' }));
      await s.settle('p', { state: 'not_charged', basis: 'wallet', at: 9 });
      const r = await stores.replica(s);
      const calls = (await r.byOperation('op-A')).sort((a, b) => a.id.localeCompare(b.id));
      expect(calls.map((c) => [c.id, c.state, c.price])).toEqual([
        ['p', 'not_charged', 0.5],
        ['q', 'open', 15],
      ]);
      expect(await r.byOperation('op-none')).toEqual([]);
    });

    it('counts paid calls per account, area, price and second', async () => {
      const s = await stores.make();
      const r = await stores.replica(s);
      await s.countPaid('acct', 'risk', 0.5, 10_100);
      await r.countPaid('acct', 'risk', 0.5, 10_900);
      await s.countPaid('acct', 'risk', 0.5, 12_000);
      await s.countPaid('acct', 'risk', 0.03, 10_500);
      await s.countPaid('other', 'risk', 0.5, 10_500);
      await s.countPaid('acct', 'company', 0.5, 10_500);
      expect(await r.paidBetween('acct', 'risk', 0.5, 10, 10)).toBe(2);
      expect(await r.paidBetween('acct', 'risk', 0.5, 10, 12)).toBe(3);
      expect(await r.paidBetween('acct', 'risk', 0.5, 11, 11)).toBe(0);
      expect(await r.paidBetween('acct', 'risk', 0.03, 0, 20)).toBe(1);
    });
  },
);
