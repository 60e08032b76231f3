/**
 * A bulk sending survives a restart of the layer, on Redis and on the embedded store, and is never
 * sent twice: a queue of 1,000 recipients (4 requests of 250) is started by one bulk service, which
 * stops after its first request; a new one on the same Redis (same secret, same prefix) or the same
 * database file (a connection of its own) resumes the queue from the store and finishes it. The emulator sees each batch exactly once. A batch claimed by the stopped service
 * whose answer never came is not sent again: its recipients are UNKNOWN.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../../platform/sqlite.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../../emulator/server.ts';
import { DEFAULT_BULK_PASSWORD, DEFAULT_BULK_USERNAME } from '../../../emulator/pecmassiva/index.ts';
import { connectRedis, closeRedis } from '../../../platform/redis.ts';
import { BulkService, type Sending } from '../../../subgraphs/pec/bulk.ts';
import { bulkStores, SqliteBulkStore, type BulkStores } from '../../../subgraphs/pec/bulk-store.ts';
import { UpstreamClient } from '../../../subgraphs/upstream/client.ts';
import { loadUpstreamConfig } from '../../../subgraphs/upstream/config.ts';
import { MemoryCostLedger, type CostLedger } from '../../../subgraphs/upstream/ledger.ts';
import { freeTierOf } from '../../../contract/prices.ts';
import { sendingUntil } from '../../support/pec.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `test:pec-restart:${randomBytes(4).toString('hex')}:`;
const ENV = { LAYER_SECRET: 'pec-restart-test-secret-0123456789', PECMASSIVA_BATCH_SIZE: '250', PECMASSIVA_POLL_MS: '60000' };

let emu: RunningEmulator;
let upstream: UpstreamClient;
let token: string;
const open: Array<{ stop: () => Promise<void>; stores: BulkStores }> = [];

const DATA_DIR = mkdtempSync(join(tmpdir(), 'pec-restart-'));
const DB_FILE = join(DATA_DIR, 'layer.db');
type Place = 'redis' | 'sqlite';

/** A bulk service on Redis, or on the embedded store's file (each call a new process's stores: `bulkStores` on a connection of its own). */
function service(ledger?: CostLedger, env: NodeJS.ProcessEnv = {}, place: Place = 'redis'): { bulk: BulkService; stores: BulkStores; stop: () => Promise<void> } {
  const stores = place === 'redis' ? bulkStores({ redisUrl: REDIS_URL, secret: ENV.LAYER_SECRET, prefix: PREFIX }) : sqliteStores();
  const bulk = new BulkService({ ...ENV, ...env }, stores);
  const stopBulk = bulk.start({ upstream, publicUrl: () => '', ledger });
  const entry = { stores, stop: async () => void (await stopBulk()) };
  open.push(entry);
  return { bulk, stores, stop: entry.stop };
}

function sqliteStores(): BulkStores {
  const db = openDatabase(DB_FILE);
  const shared = bulkStores({ sqliteFile: DB_FILE, secret: ENV.LAYER_SECRET });
  return { ...shared, store: new SqliteBulkStore(db), close: async () => (db.release(), shared.close()) };
}

/** What the store keeps of a sending, as text. */
async function rawSending(place: Place, id: string): Promise<string> {
  if (place === 'sqlite') {
    const db = openDatabase(DB_FILE);
    try {
      return String(db.get("SELECT v FROM kv WHERE ns = 'pecmassiva' AND k = ?", `s:${id}`)?.v);
    } finally {
      db.release();
    }
  }
  const redis = connectRedis(REDIS_URL, { prefix: PREFIX, name: 'pec-restart-probe' });
  try {
    return String(await redis.get(`pecmassiva:s:${id}`));
  } finally {
    await closeRedis(redis);
  }
}

beforeAll(async () => {
  emu = await startEmulator();
  token = emu.tokens.create({ credit: 100 }).token;
  upstream = new UpstreamClient(loadUpstreamConfig({ OPENAPI_ENV: 'emulator' }, emu.url));
});

afterAll(async () => {
  for (const o of open) {
    await o.stop().catch(() => undefined);
    await o.stores.close().catch(() => undefined);
  }
  await upstream?.close();
  await emu?.close();
  const redis = connectRedis(REDIS_URL, { prefix: PREFIX, name: 'pec-restart-cleanup' });
  const keys = await redis.keys(`${PREFIX}*`);
  if (keys.length > 0) await redis.del(...keys.map((k) => k.slice(PREFIX.length)));
  await closeRedis(redis);
  rmSync(DATA_DIR, { recursive: true, force: true });
});

describe.each<Place>(['redis', 'sqlite'])('bulk queue across a restart (%s)', (place) => {
  it(`resumes from ${place === 'redis' ? 'Redis' : 'the embedded store'} and sends every batch exactly once`, async () => {
    const tenant = `restart-tenant-${place}`;
    // The emulator's calls of this run only (the other place's run came first).
    const postsBefore = emu.calls().filter((c) => c.area === 'pecmassiva' && c.method === 'POST').length;
    const a = service(undefined, {}, place);
    const recipients = Array.from({ length: 1000 }, (_, i) => `r${i}@legalmail.it`);
    const queued = await a.bulk.queue(
      { token, tenant },
      { username: DEFAULT_BULK_USERNAME, password: DEFAULT_BULK_PASSWORD },
      { sender: DEFAULT_BULK_USERNAME, recipients, subject: 'Riavvio', html: '<p>x</p>', attachments: [] },
      'restart-key-1',
    );
    await sendingUntil(a.bulk, tenant, queued.id, (s) => s.recipients.filter((r) => r.state === 'SENT').length >= 250);
    // The layer stops (its queue and timers with it).
    await a.stop();
    const postsAtRestart = emu.calls().filter((c) => c.area === 'pecmassiva' && c.method === 'POST').length;

    // The new process charges the tenant's day on the shared ledger (here its free tier of sends: every call counts).
    const ledger = new MemoryCostLedger();
    const b = service(ledger, {}, place);
    // The same key on the new process: the same sending, not a second one.
    const again = await b.bulk.queue(
      { token, tenant },
      { username: DEFAULT_BULK_USERNAME, password: DEFAULT_BULK_PASSWORD },
      { sender: DEFAULT_BULK_USERNAME, recipients, subject: 'Riavvio', html: '<p>x</p>', attachments: [] },
      'restart-key-1',
    );
    expect(again.id).toBe(queued.id);
    const done = await sendingUntil(b.bulk, tenant, queued.id, (s) => s.recipients.every((r) => r.state !== 'QUEUED'));
    // Every recipient handed to the service (some already accepted: their receipts are read on), none lost, none unknown.
    expect(done.recipients.filter((r) => ['SENT', 'ACCEPTED', 'DELIVERED'].includes(r.state))).toHaveLength(1000);
    // Each batch reached the service once (a request refused for the pace, 429, sent nothing and was queued again).
    const posts = emu
      .calls()
      .filter((c) => c.area === 'pecmassiva' && c.method === 'POST')
      .slice(postsBefore);
    expect(posts.filter((c) => c.status === 201)).toHaveLength(4);
    expect(posts.every((c) => c.status === 201 || c.status === 429)).toBe(true);
    // The requests sent after the restart (three, and any refused for the pace) are on the tenant's day.
    const tier = freeTierOf('pecmassiva', 'POST', '/send')!;
    const [use] = await ledger.freeUse(tenant, tier.key, tier.tiers);
    expect(use.used).toBe(posts.length - (postsAtRestart - postsBefore));
    // No password and no token in what the store keeps.
    const stored = await rawSending(place, queued.id);
    expect(stored).toContain(queued.id);
    expect(stored).not.toContain(DEFAULT_BULK_PASSWORD);
    expect(stored).not.toContain(token);
  });

  it('never sends a batch an earlier process claimed and got no answer for: its recipients are UNKNOWN', async () => {
    const tenant = `restart-tenant-2-${place}`;
    const a = service(undefined, {}, place);
    const recipients = Array.from({ length: 500 }, (_, i) => `u${i}@legalmail.it`);
    const before = emu.calls().filter((c) => c.area === 'pecmassiva' && c.method === 'POST' && c.status === 201).length;
    const queued = await a.bulk.queue(
      { token, tenant },
      { username: DEFAULT_BULK_USERNAME, password: DEFAULT_BULK_PASSWORD },
      { sender: DEFAULT_BULK_USERNAME, recipients, subject: 'Riavvio 2', html: '<p>x</p>', attachments: [] },
      null,
    );
    await sendingUntil(a.bulk, tenant, queued.id, (s) => s.recipients.filter((r) => r.state !== 'QUEUED').length >= 250);
    await a.stop();
    // As if the stopped process had taken the second batch and died before its answer.
    expect(await a.stores.store.claimBatch(queued.id, 250)).toBe(true);
    const b = service(undefined, {}, place);
    const done = await sendingUntil(b.bulk, tenant, queued.id, (s) => s.recipients.every((r) => r.state !== 'QUEUED'));
    expect(done.recipients.slice(250).every((r) => r.state === 'UNKNOWN')).toBe(true);
    const after = emu.calls().filter((c) => c.area === 'pecmassiva' && c.method === 'POST' && c.status === 201).length;
    expect(after - before).toBe(1);
  });
});

describe('bulk queue on Redis', () => {
  it('keeps no sealed credential and no message in Redis once a sending is done', async () => {
    const tenant = 'restart-tenant-3';
    await fetch(`${emu.url}/_emulator/pecmassiva/timing`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ acceptAfterMs: 0, deliverAfterMs: 0 }),
    });
    const a = service(undefined, { PECMASSIVA_POLL_MS: '20' });
    const queued = await a.bulk.queue(
      { token, tenant },
      { username: DEFAULT_BULK_USERNAME, password: DEFAULT_BULK_PASSWORD },
      { sender: DEFAULT_BULK_USERNAME, recipients: ['fine1@legalmail.it', 'fine2@legalmail.it'], subject: 'Fine', html: '<p>segreto del messaggio</p>', attachments: [] },
      null,
    );
    const redis = connectRedis(REDIS_URL, { prefix: PREFIX, name: 'pec-restart-probe-2' });
    try {
      const whileQueued = JSON.parse(String(await redis.get(`pecmassiva:s:${queued.id}`))) as Record<string, unknown>;
      expect(typeof whileQueued.sealedPassword).toBe('string');
      await sendingUntil(a.bulk, tenant, queued.id, (s) => s.recipients.every((r) => r.state === 'SENT'));
      // The receipts arrive (the emulator's `advance`); the next reads find them.
      await fetch(`${emu.url}/_emulator/pecmassiva/advance`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      const done = await sendingUntil(a.bulk, tenant, queued.id, (s) => s.done);
      expect(done.recipients.map((r) => r.state)).toEqual(['DELIVERED', 'DELIVERED']);
      const stored = JSON.parse(String(await redis.get(`pecmassiva:s:${queued.id}`))) as Record<string, unknown>;
      expect((stored.sending as Sending).done).toBe(true);
      expect(stored).not.toHaveProperty('sealedToken');
      expect(stored).not.toHaveProperty('sealedPassword');
      expect(stored).not.toHaveProperty('request');
      expect(JSON.stringify(stored)).not.toContain('segreto del messaggio');
    } finally {
      await closeRedis(redis);
      await a.stop();
    }
  });
});
