/**
 * Free tiers on the shared cost ledger, one spec against memory, the embedded store and Redis: each tenant's calls of an
 * endpoint counted per day, month and year (Italian calendar, injectable clock), a call free while
 * every tier has room, replicas sharing the counts, and the cost meter pricing calls by them.
 */
import { expect, it } from 'vitest';
import { freeTierOf } from '../../../contract/prices.ts';
import { CostMeter, mergeSummaries } from '../../../subgraphs/upstream/cost.ts';
import { MemoryCostLedger, type CostLedger } from '../../../subgraphs/upstream/ledger.ts';
import { RedisCostLedger } from '../../../subgraphs/upstream/redis-ledger.ts';
import { SqliteCostLedger } from '../../../subgraphs/upstream/sqlite-stores.ts';
import { describeStores } from '../../support/store-spec.ts';

/** 23:59 in Rome on 31 December 2026 (UTC+1): a day, a month and a year end a minute later. */
let now = Date.UTC(2026, 11, 31, 22, 59, 0);
const clock = () => now;

const DAY = [{ period: 'day' as const, calls: 3 }];
const MONTH_YEAR = [
  { period: 'month' as const, calls: 2 },
  { period: 'year' as const, calls: 3 },
];

describeStores<CostLedger>(
  'free tiers on the cost ledger',
  { memory: () => new MemoryCostLedger({ now: clock }), redis: (redis) => new RedisCostLedger(redis, { now: clock }), sqlite: (db) => new SqliteCostLedger(db, { now: clock }) },
  (stores) => {
    it('a call is free while the day has room; the next day starts again (Italian midnight)', async () => {
      now = Date.UTC(2026, 11, 31, 22, 59, 0);
      const ledger = await stores.make();
      const claims = [];
      for (let i = 0; i < 4; i++) claims.push(await ledger.claimFree('t1', 'cap GET cerca_comuni', DAY));
      expect(claims.map((c) => c.free)).toEqual([true, true, true, false]);
      expect(claims[2].use).toEqual([{ period: 'day', limit: 3, used: 3, remaining: 0 }]);
      expect(claims[3].use).toEqual([{ period: 'day', limit: 3, used: 4, remaining: 0 }]);
      // another tenant and another endpoint count on their own
      expect((await ledger.claimFree('t2', 'cap GET cerca_comuni', DAY)).free).toBe(true);
      expect((await ledger.claimFree('t1', 'cap GET dug', DAY)).use[0].used).toBe(1);
      now += 60_000; // 00:00 in Rome, 1 January 2027
      expect(await ledger.freeUse('t1', 'cap GET cerca_comuni', DAY)).toEqual([{ period: 'day', limit: 3, used: 0, remaining: 3 }]);
      expect((await ledger.claimFree('t1', 'cap GET cerca_comuni', DAY)).free).toBe(true);
    });

    it('a call with several tiers is free only while every one has room (150 a month and 1,500 a year, scaled down)', async () => {
      now = Date.UTC(2026, 10, 30, 12, 0, 0);
      const ledger = await stores.make();
      const free: boolean[] = [];
      free.push((await ledger.claimFree('t', 'oauth POST tokens', MONTH_YEAR)).free, (await ledger.claimFree('t', 'oauth POST tokens', MONTH_YEAR)).free);
      free.push((await ledger.claimFree('t', 'oauth POST tokens', MONTH_YEAR)).free); // month used up
      now = Date.UTC(2026, 11, 2, 12, 0, 0); // next month, same year: 3 used this year
      const dec = await ledger.claimFree('t', 'oauth POST tokens', MONTH_YEAR);
      free.push(dec.free);
      expect(free).toEqual([true, true, false, false]);
      expect(dec.use).toEqual([
        { period: 'month', limit: 2, used: 1, remaining: 1 },
        { period: 'year', limit: 3, used: 4, remaining: 0 },
      ]);
      expect(await ledger.claimFree('t', 'x', [])).toEqual({ free: false, use: [] });
    });

    it('a claim given back (a call not sent) leaves the count as before, in the period it was made, never below zero', async () => {
      now = Date.UTC(2026, 5, 3, 12, 0, 0);
      const ledger = await stores.make();
      await ledger.claimFree('t', 'e', DAY);
      const claim = await ledger.claimFree('t', 'e', DAY);
      await ledger.unclaimFree('t', 'e', DAY, claim.at!);
      expect(await ledger.freeUse('t', 'e', DAY)).toEqual([{ period: 'day', limit: 3, used: 1, remaining: 2 }]);
      // Given back after midnight: taken from the day it was counted in, not the new one.
      const late = await ledger.claimFree('t', 'e', DAY);
      now += 86_400_000;
      await ledger.claimFree('t', 'e', DAY);
      await ledger.unclaimFree('t', 'e', DAY, late.at!);
      expect(await ledger.freeUse('t', 'e', DAY)).toEqual([{ period: 'day', limit: 3, used: 1, remaining: 2 }]);
      now -= 86_400_000;
      expect(await ledger.freeUse('t', 'e', DAY)).toEqual([{ period: 'day', limit: 3, used: 1, remaining: 2 }]);
      await ledger.unclaimFree('t', 'e', DAY, now);
      await ledger.unclaimFree('t', 'e', DAY, now);
      expect(await ledger.freeUse('t', 'e', DAY)).toEqual([{ period: 'day', limit: 3, used: 0, remaining: 3 }]);
    });

    it('replicas share the counts', async () => {
      now = Date.UTC(2026, 5, 1, 12, 0, 0);
      const a = await stores.make();
      const b = await stores.replica(a);
      await Promise.all([a.claimFree('t', 'e', DAY), b.claimFree('t', 'e', DAY), a.claimFree('t', 'e', DAY)]);
      expect((await b.claimFree('t', 'e', DAY)).free).toBe(false);
      expect(await a.freeUse('t', 'e', DAY)).toEqual([{ period: 'day', limit: 3, used: 4, remaining: 0 }]);
    });

    it('the cost meter prices a call at 0 inside the contract tier and says what remains', async () => {
      now = Date.UTC(2026, 5, 2, 12, 0, 0);
      const ledger = await stores.make();
      const meter = () => new CostMeter({ ledger, account: { operationId: 'op', tenant: 'tenant' }, limits: { operation: null, day: null } });
      const m = meter();
      expect(await m.priceAfterFreeTier('cap', 'GET', '/cerca_comuni', 0.001)).toBe(0);
      expect(await m.priceAfterFreeTier('cap', 'GET', '/comuni_base/58091', 0.04)).toBe(0.04); // no free tier
      const report = await m.report();
      expect(report.freeTier).toEqual([{ endpoint: 'cap GET cerca_comuni', period: 'day', limit: 1440, used: 1, remaining: 1439 }]);
      // the gateway's merge keeps the latest reading
      const later = meter();
      await later.priceAfterFreeTier('cap', 'GET', '/cerca_comuni?comune=ro', 0.001);
      expect(mergeSummaries([report, await later.report()]).freeTier).toEqual([{ endpoint: 'cap GET cerca_comuni', period: 'day', limit: 1440, used: 2, remaining: 1438 }]);
      // without a ledger nothing is counted
      expect(await new CostMeter().priceAfterFreeTier('cap', 'GET', '/cerca_comuni', 0.001)).toBe(0.001);
    });
  },
);

it("the contract's free tiers, per endpoint and method", () => {
  expect(freeTierOf('cap', 'GET', '/cerca_comuni')).toEqual({ key: 'cap GET cerca_comuni', tiers: [{ period: 'day', calls: 1440 }] });
  expect(freeTierOf('cap', 'GET', '/dug')?.tiers).toEqual([{ period: 'month', calls: 44640 }]);
  expect(freeTierOf('cap', 'GET', '/province/RM')?.tiers).toEqual([{ period: 'month', calls: 10000 }]);
  expect(freeTierOf('cap', 'GET', '/comuni_advance/58091')).toBeNull();
  expect(freeTierOf('oauth', 'POST', '/tokens')?.tiers).toEqual([
    { period: 'month', calls: 150 },
    { period: 'year', calls: 1500 },
  ]);
  expect(freeTierOf('oauth', 'PATCH', '/tokens/abc')).toEqual({ key: 'oauth PATCH tokens', tiers: [{ period: 'day', calls: 1440 }] });
  expect(freeTierOf('pecmassiva', 'POST', '/send')?.tiers).toEqual([{ period: 'day', calls: 1440 }]);
  expect(freeTierOf('company', 'GET', '/IT-start/1')).toBeNull();
});
