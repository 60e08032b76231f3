/**
 * Every store the layer keeps in the embedded database settles its writes only once they are on
 * disk (`durableStore`, `platform/sqlite.ts`): checked on what each factory builds, so a store added
 * without it fails here (nothing else would notice: the rows are written either way).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isDurableStore } from '../../../platform/sqlite.ts';
import { upstreamStores } from '../../../subgraphs/upstream/stores.ts';
import { loadUpstreamConfig } from '../../../subgraphs/upstream/config.ts';
import { trackingStores } from '../../../subgraphs/runtime/tracking/stores.ts';
import { bulkStores } from '../../../subgraphs/pec/bulk-store.ts';
import { RISK_POLICY } from '../../../subgraphs/risk/policy.ts';

const dir = mkdtempSync(join(tmpdir(), 'durable-stores-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sqliteFile = join(dir, 'layer.db');

describe('the embedded stores wait for the disk', () => {
  it('upstream: pending datasets, the cost ledger, settlements', async () => {
    const stores = await upstreamStores(loadUpstreamConfig({ OPENAPI_ENV: 'sandbox' }), undefined, Date.now, { sqliteFile });
    try {
      expect(stores.kind).toBe('sqlite');
      expect({ pending: isDurableStore(stores.pending), ledger: isDurableStore(stores.ledger), settlements: isDurableStore(stores.settlements) }).toEqual({
        pending: true,
        ledger: true,
        settlements: true,
      });
      // The ones kept in memory on purpose are not.
      expect(isDurableStore(stores.cache)).toBe(false);
    } finally {
      await stores.close();
    }
  });

  it('tracked work: status store, replay guard, download grants, poll book', async () => {
    const stores = trackingStores({ sqliteFile, secret: 'x'.repeat(32), area: 'risk', policy: RISK_POLICY });
    try {
      expect(stores.kind).toBe('sqlite');
      expect([stores.store, stores.replay, stores.fileGrants, stores.pollBook].map(isDurableStore)).toEqual([true, true, true, true]);
    } finally {
      await stores.close();
    }
  });

  it('PEC bulk sendings: their store and poll book', async () => {
    const stores = bulkStores({ sqliteFile, secret: 'x'.repeat(32) });
    try {
      expect([stores.store, stores.book].map(isDurableStore)).toEqual([true, true]);
    } finally {
      await stores.close();
    }
  });
});
