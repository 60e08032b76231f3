/**
 * The precheck guard's knowledge (token scopes, the wallet reading, the subscriptions and the
 * requests taken from them), one spec for the memory and the Redis store: replicas on Redis see one
 * another's readings and spending, and never take more of a subscription than it has left.
 */
import { expect, it } from 'vitest';
import { MemoryGuardStore, RedisGuardStore, type ActiveSubscription, type GuardStore } from '../../../subgraphs/upstream/guard-store.ts';
import { describeStores } from '../../support/store-spec.ts';

let now = 1_000_000;
const clock = (): number => now;
const ACCOUNT = 'account-tenant';

describeStores<GuardStore>(
  'precheck guard store',
  { memory: () => new MemoryGuardStore({ now: clock }), redis: (redis) => new RedisGuardStore(redis, ACCOUNT, { now: clock }) },
  (stores) => {
    it("a token's scopes are shared, trusted until their expiry, forgotten on demand; the token itself is never a key", async () => {
      const a = await stores.make();
      const b = await stores.replica(a);
      expect(await a.scopes('tok-secret-value')).toBeUndefined();
      await a.setScopes('tok-secret-value', ['GET:test.cap.openapi.it/cap'], 60_000);
      await a.setScopes('not-the-account', null, 60_000);
      expect(await b.scopes('tok-secret-value')).toEqual(['GET:test.cap.openapi.it/cap']);
      expect(await b.scopes('not-the-account')).toBeNull();
      const raw = stores.connection(a);
      if (raw) expect((await raw.keys('*')).join(' ')).not.toContain('tok-secret-value');
      now += 60_001;
      expect(await b.scopes('tok-secret-value')).toBeUndefined();
      await b.setScopes('tok-secret-value', [], 60_000);
      await a.forgetScopes('tok-secret-value');
      expect(await b.scopes('tok-secret-value')).toBeUndefined();
    });

    it("the wallet reading is shared and every replica's spending comes off it; nothing is spent without a reading", async () => {
      const a = await stores.make();
      const b = await stores.replica(a);
      await a.spend(1);
      expect(await b.credit()).toBeUndefined();
      await a.setCredit(0.1, 60_000);
      await a.spend(0.04);
      await b.spend(0.001);
      expect(await a.credit()).toBeCloseTo(0.059, 9);
      expect(await b.credit()).toBeCloseTo(0.059, 9);
      // Given back (the call was refused or not charged): on every replica.
      await b.spend(-0.04);
      expect(await a.credit()).toBeCloseTo(0.099, 9);
      now += 60_001;
      expect(await a.credit()).toBeUndefined();
    });

    it('a subscription gives out at most the requests it had left, across replicas; a new reading starts a new count', async () => {
      const a = await stores.make();
      const b = await stores.replica(a);
      const sub: ActiveSubscription = { id: 'sub-1', scope: 'GET:test.cap.openapi.it/cap', left: 3, pricePerRequest: 0.01 };
      const until = await a.setSubscriptions([sub], 60_000);
      expect((await b.subscriptions())?.list).toEqual([sub]);
      const taken = await Promise.all([a, b, a, b, a].map((s) => s.useSubscription(until, sub)));
      expect(taken.filter(Boolean)).toHaveLength(3);
      // A request given back (its call was not charged) can be taken again, by any replica, once.
      await a.returnSubscription(until, sub);
      expect(await b.useSubscription(until, sub)).toBe(true);
      expect(await a.useSubscription(until, sub)).toBe(false);
      now += 1;
      const next = await b.setSubscriptions([{ ...sub, left: 1 }], 60_000);
      expect(await a.useSubscription(next, { ...sub, left: 1 })).toBe(true);
      expect(await b.useSubscription(next, { ...sub, left: 1 })).toBe(false);
      now += 60_001;
      expect(await a.subscriptions()).toBeUndefined();
    });
  },
);
