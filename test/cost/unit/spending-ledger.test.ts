/**
 * A tenant's spending per day and upstream area, one spec run against every cost ledger (memory,
 * SQLite, Redis): the same reservations and releases that hold the day budget move it, days of the
 * current month add up to the month (kept past the two days of the day budget's own counter), and
 * tenants and months are apart.
 */
import { expect, it } from 'vitest';
import { MemoryCostLedger, type CostLedger } from '../../../subgraphs/upstream/ledger.ts';
import { RedisCostLedger } from '../../../subgraphs/upstream/redis-ledger.ts';
import { SqliteCostLedger } from '../../../subgraphs/upstream/sqlite-stores.ts';
import { spendingValue } from '../../../subgraphs/account/spending.ts';
import { describeStores } from '../../support/store-spec.ts';

/** 2 November 2026, 10:00 in Rome. */
let now = Date.UTC(2026, 10, 2, 9, 0, 0);
const clock = () => now;
const DAY = 86_400_000;
const none = { operation: null, day: null };

describeStores<CostLedger>(
  'cost ledger: spending per tenant, day and area',
  { memory: () => new MemoryCostLedger({ now: clock }), redis: (redis) => new RedisCostLedger(redis, { now: clock }), sqlite: (db) => new SqliteCostLedger(db, { now: clock }) },
  (stores) => {
    it('counts each area from reservations and releases, adds the days of the month, keeps tenants and months apart', async () => {
      now = Date.UTC(2026, 10, 2, 9, 0, 0);
      const ledger = await stores.make();
      const a = (op: string) => ({ operationId: op, tenant: 'ta' });
      await ledger.reserve(a('1'), 0.1, none, 'GET IT-start', 'company');
      await ledger.reserve(a('1'), 3, none, 'GET IT-creditscore-top', 'risk');
      await ledger.reserve(a('2'), 0.05, none, 'GET IT-start', 'company');
      // A call certainly not charged gives its area back.
      await ledger.release(a('1'), 3, 'risk');
      await ledger.reserve(a('3'), 1.5, none, 'GET IT-creditscore-advanced', 'risk');
      await ledger.reserve({ operationId: 'b', tenant: 'tb' }, 9, none, 'GET IT-full', 'company');

      // 26 days later, same month: the day budget's counter of the 2nd is long gone, its areas are not.
      now += 26 * DAY;
      await ledger.reserve(a('4'), 0.2, none, 'GET cerca_comuni', 'cap');
      await ledger.reserve(a('4'), 0.01, none, 'GET x');
      const s = await (await stores.replica(ledger)).spending('ta');
      expect(s).toMatchObject({ today: '2026-11-28', month: '2026-11', dayCommitted: 0.21 });
      expect(s.rows).toEqual([
        { day: '2026-11-02', area: 'company', euro: 0.15 },
        { day: '2026-11-02', area: 'risk', euro: 1.5 },
        { day: '2026-11-28', area: 'cap', euro: 0.2 },
        { day: '2026-11-28', area: 'other', euro: 0.01 },
      ]);
      const v = spendingValue('ta', s, { operation: 5, day: 1 });
      expect(v.today).toEqual({
        period: '2026-11-28',
        total: 0.21,
        byArea: [
          { area: 'cap', euro: 0.2 },
          { area: 'other', euro: 0.01 },
        ],
      });
      expect(v.month.total).toBe(1.86);
      expect(v.month.byArea.map((x) => x.area)).toEqual(['risk', 'cap', 'company', 'other']);
      expect(v.days.map((d) => [d.period, d.total])).toEqual([
        ['2026-11-02', 1.65],
        ['2026-11-28', 0.21],
      ]);
      expect(v.budgets).toEqual({ operation: 5, day: 1, dayCommitted: 0.21, dayRemaining: 0.79 });
      expect((await ledger.spending('tb')).rows).toEqual([{ day: '2026-11-02', area: 'company', euro: 9 }]);

      // The next month starts empty.
      now = Date.UTC(2026, 11, 1, 9, 0, 0);
      expect(await ledger.spending('ta')).toEqual({ today: '2026-12-01', month: '2026-12', dayCommitted: 0, rows: [] });
    });
  },
);
