/**
 * One spec for the PEC bulk sendings' store (`subgraphs/pec/bulk-store.ts`), run against memory,
 * the embedded store and Redis (`test/support/store-spec.ts`): sendings seen by every replica and
 * listed while unfinished, an idempotency key bound once, a batch claimed once however many
 * replicas race for it, a cancel mark every replica sees, and the lives of keys and sendings.
 */
import { expect, it } from 'vitest';
import { MemoryBulkStore, RedisBulkStore, SqliteBulkStore, type BulkStore, type StoredSending } from '../../../subgraphs/pec/bulk-store.ts';
import type { Sending } from '../../../subgraphs/pec/bulk.ts';
import { describeStores } from '../../support/store-spec.ts';

let now = Date.now();
const clock = () => now;

const sending = (id: string, done = false): StoredSending => ({
  sending: { id, done } as unknown as Sending,
  username: 'box',
  batches: [[0, 1]],
  codes: [],
  startedAt: 0,
});

describeStores<BulkStore>(
  'bulk sendings',
  { memory: () => new MemoryBulkStore({ now: clock }), redis: (redis) => new RedisBulkStore(redis), sqlite: (db) => new SqliteBulkStore(db, { now: clock }) },
  (stores) => {
    it('keeps a sending for every replica, listed while it is not done', async () => {
      const a = await stores.make();
      const b = await stores.replica(a);
      await a.save(sending('s1'));
      await a.save(sending('s2'));
      expect((await b.load('s1'))?.batches).toEqual([[0, 1]]);
      expect((await b.unfinished()).map((s) => s.sending.id).sort()).toEqual(['s1', 's2']);
      await b.save(sending('s1', true));
      expect((await a.unfinished()).map((s) => s.sending.id)).toEqual(['s2']);
      expect((await a.load('s1'))?.sending.done).toBe(true);
      expect(await a.load('nope')).toBeNull();
    });

    it('binds an idempotency key once per tenant across replicas; a released key may be bound again', async () => {
      const a = await stores.make();
      const b = await stores.replica(a);
      const first = await Promise.all([a.claimKey('T', 'k', 's1'), b.claimKey('T', 'k', 's2'), a.claimKey('T', 'k', 's3')]);
      expect(first.filter((x) => x === null)).toHaveLength(1);
      const winner = ['s1', 's2', 's3'][first.indexOf(null)];
      expect(first.filter((x) => x !== null)).toEqual([winner, winner]);
      expect(await b.claimKey('U', 'k', 's9')).toBeNull();
      await b.setKey('T', 'k', 'outcome');
      expect(await a.claimKey('T', 'k', 's4')).toBe('outcome');
      await a.releaseKey('T', 'k');
      expect(await b.claimKey('T', 'k', 's5')).toBeNull();
    });

    it('claims a batch once however many replicas race for it; a given-back claim may be taken again', async () => {
      const a = await stores.make();
      const b = await stores.replica(a);
      const claims = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).claimBatch('s1', 0)));
      expect(claims.filter(Boolean)).toHaveLength(1);
      expect(await a.claimBatch('s1', 250)).toBe(true);
      await b.releaseBatch?.('s1', 0);
      expect(await a.claimBatch('s1', 0)).toBe(true);
    });

    it('marks a sending cancelled for every replica', async () => {
      const a = await stores.make();
      const b = await stores.replica(a);
      expect(await b.isCancelled('s1')).toBe(false);
      await a.cancel('s1');
      expect(await b.isCancelled('s1')).toBe(true);
    });

    it('forgets a key after a day and a sending after a week', async () => {
      if (stores.kind === 'redis') return; // Redis: EX on real time (a day, a week), not moved by a test clock
      const a = await stores.make();
      await a.save(sending('s1'));
      expect(await a.claimKey('T', 'k', 's1')).toBeNull();
      now += 24 * 3600 * 1000 + 1;
      expect(await a.claimKey('T', 'k', 's2')).toBeNull();
      expect(await a.load('s1')).not.toBeNull();
      now += 6 * 24 * 3600 * 1000;
      expect(await a.load('s1')).toBeNull();
      expect(await a.unfinished()).toEqual([]);
    });
  },
);
