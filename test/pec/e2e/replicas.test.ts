/**
 * Two PEC subgraph instances on one Redis (a unique prefix), as two replicas of the layer: a bulk
 * sending is run by one of them at a time. The one that queued it holds its lease; the other takes
 * up nothing while it runs (its record is never overwritten, no batch is claimed twice, no receipt
 * read twice), and takes it up as soon as the holder stops and gives it back. Upstream calls are
 * counted exactly: one `POST /send` per batch and one `GET /send/{code}` per code (the receipts are
 * all in before the first read).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../../emulator/server.ts';
import { createPecMassivaModule, DEFAULT_BULK_PASSWORD, DEFAULT_BULK_USERNAME } from '../../../emulator/pecmassiva/index.ts';
import { createPecSubgraph } from '../../../subgraphs/pec/index.ts';
import type { BulkService, Sending } from '../../../subgraphs/pec/bulk.ts';
import { closeRedis, connectRedis } from '../../../platform/redis.ts';
import { UpstreamClient } from '../../../subgraphs/upstream/client.ts';
import { loadUpstreamConfig } from '../../../subgraphs/upstream/config.ts';
import { sendingUntil } from '../../support/pec.ts';
import { waitFor } from '../../support/wait.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `test:pec-replicas:${randomBytes(4).toString('hex')}:`;
// Ten recipients a request, one request every 400 ms per mailbox; receipts read 1 s after a request.
const ENV: NodeJS.ProcessEnv = {
  REDIS_URL,
  REDIS_PREFIX: PREFIX,
  LAYER_SECRET: 'pec-replicas-test-secret-0123456789',
  PECMASSIVA_BATCH_SIZE: '10',
  PECMASSIVA_SEND_INTERVAL_MS: '400',
  PECMASSIVA_POLL_MS: '1000',
  PEC_POLL_INTERVAL_MS: '600000',
};

let emu: RunningEmulator;
let upstream: UpstreamClient;
let token: string;
const running = new Set<() => Promise<void>>();

/** One subgraph instance (a replica) on the shared Redis, started. */
async function replica(extra: NodeJS.ProcessEnv = {}): Promise<{ bulk: BulkService; stop: () => Promise<void> }> {
  const sg = createPecSubgraph({ env: { ...ENV, ...extra } });
  const stopSg = await sg.start!({ upstream, publicUrl: () => 'http://127.0.0.1:9' });
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    running.delete(stop);
    if (stopSg) await stopSg();
  };
  running.add(stop);
  return { bulk: sg.bulk, stop };
}

const creds = { username: DEFAULT_BULK_USERNAME, password: DEFAULT_BULK_PASSWORD };
const request = (prefix: string) => ({
  sender: DEFAULT_BULK_USERNAME,
  recipients: Array.from({ length: 40 }, (_, i) => `${prefix}${i}@legalmail.it`),
  subject: prefix,
  html: '<p>x</p>',
  attachments: [],
});
const sent = (s: Sending) => s.recipients.filter((r) => r.state !== 'QUEUED').length;

/** The emulator's bulk calls since `from`: sends (201) and receipt reads (200) by path. */
function callsSince(from: number): { posts: number; reads: string[] } {
  const calls = emu
    .calls()
    .slice(from)
    .filter((c) => c.area === 'pecmassiva');
  expect(calls.every((c) => c.status === 201 || c.status === 200)).toBe(true);
  return {
    posts: calls.filter((c) => c.method === 'POST').length,
    reads: calls
      .filter((c) => c.method === 'GET')
      .map((c) => c.path)
      .sort(),
  };
}

beforeAll(async () => {
  // Receipts arrive 1 ms after a request (long before the layer's first read); the emulator does not pace.
  emu = await startEmulator({ modules: [createPecMassivaModule({ acceptAfterMs: 1, deliverAfterMs: 1, sendIntervalMs: 0 })] });
  token = emu.tokens.create({ credit: 100 }).token;
  upstream = new UpstreamClient(loadUpstreamConfig({ OPENAPI_ENV: 'emulator' }, emu.url));
}, 120_000);

afterAll(async () => {
  for (const stop of [...running]) await stop().catch(() => undefined);
  await upstream?.close();
  await emu?.close();
  const redis = connectRedis(REDIS_URL, { prefix: PREFIX, name: 'pec-replicas-cleanup' });
  const keys = await redis.keys(`${PREFIX}*`);
  if (keys.length > 0) await redis.del(...keys.map((k) => k.slice(PREFIX.length)));
  await closeRedis(redis);
}, 120_000);

describe('a bulk sending across two replicas', () => {
  it('is run by the replica holding its lease: the other takes up nothing while it runs', async () => {
    const tenant = 'replicas-tenant-1';
    const from = emu.calls().length;
    // Where every gateway replica's response cache listens (the kit's channels, `<prefix>bus:*`).
    const listener = connectRedis(REDIS_URL, { prefix: PREFIX, name: 'pec-replicas-gateway-ear', commandTimeoutMs: 0 });
    const heard = new Set<string>();
    listener.on('pmessage', (_p: string, channel: string) => heard.add(channel));
    await listener.psubscribe(`${PREFIX}bus:*`);
    const a = await replica();
    const queued = await a.bulk.queue({ token, tenant }, creds, request('uno'), null);
    await sendingUntil(a.bulk, tenant, queued.id, (s) => sent(s) >= 10);
    const b = await replica();
    // B looks for unfinished sendings while A is on its second of four requests: A holds this one.
    expect((await b.bulk.get(tenant, queued.id))?.done).toBe(false);
    expect(await b.bulk.takeUp()).toEqual([]);
    const done = await sendingUntil(a.bulk, tenant, queued.id, (s) => s.done);
    expect(done.recipients.map((r) => r.state)).toEqual(Array(40).fill('DELIVERED'));
    // B's view is A's record, as A left it.
    expect(await b.bulk.get(tenant, queued.id)).toEqual(done);
    // Four requests, each code's receipts read once.
    const codes = [...new Set(done.recipients.map((r) => r.code))];
    expect(codes).toHaveLength(4);
    expect(callsSince(from)).toEqual({ posts: 4, reads: codes.map((c) => `/send/${c}`).sort() });
    // The sending's changes were announced where other replicas' gateways hear them.
    expect([...heard]).toContain(`${PREFIX}bus:pecmassiva:${tenant}:${queued.id}`);
    await closeRedis(listener);
    await a.stop();
    await b.stop();
  });

  it('is taken up by the other replica once its holder stops, and finished without sending anything twice', async () => {
    const tenant = 'replicas-tenant-2';
    const from = emu.calls().length;
    const a = await replica();
    const b = await replica();
    const queued = await a.bulk.queue({ token, tenant }, creds, request('due'), null);
    await sendingUntil(a.bulk, tenant, queued.id, (s) => sent(s) >= 10);
    expect(await b.bulk.takeUp()).toEqual([]);
    // A stops between two requests and gives the sending back; B takes it up at once.
    await a.stop();
    expect(await b.bulk.takeUp()).toEqual([queued.id]);
    const done = await sendingUntil(b.bulk, tenant, queued.id, (s) => s.done);
    expect(done.recipients.map((r) => r.state)).toEqual(Array(40).fill('DELIVERED'));
    const codes = [...new Set(done.recipients.map((r) => r.code))];
    expect(codes).toHaveLength(4);
    expect(callsSince(from)).toEqual({ posts: 4, reads: codes.map((c) => `/send/${c}`).sort() });
    await b.stop();
  });

  it('keeps its lease while it waits for receipts longer than the lease: no loss, each code read once', async () => {
    const tenant = 'replicas-tenant-3';
    const from = emu.calls().length;
    // Receipts first read 3 s after each request: two leases of 1.5 s with nothing due, while B
    // looks for lapsed leases every lease.
    const env = { PECMASSIVA_LEASE_MS: '1500', PECMASSIVA_POLL_MS: '3000' };
    const a = await replica(env);
    const b = await replica(env);
    const queued = await a.bulk.queue({ token, tenant }, creds, request('tre'), null);
    const done = await sendingUntil(a.bulk, tenant, queued.id, (s) => s.done);
    expect(done.recipients.map((r) => r.state)).toEqual(Array(40).fill('DELIVERED'));
    expect(a.bulk.leaseStats).toEqual({ lost: 0, takenUp: 0 });
    expect(b.bulk.leaseStats).toEqual({ lost: 0, takenUp: 0 });
    const codes = [...new Set(done.recipients.map((r) => r.code))];
    expect(callsSince(from)).toEqual({ posts: 4, reads: codes.map((c) => `/send/${c}`).sort() });
    await a.stop();
    await b.stop();
  });

  it('is taken up from a holder that stopped without giving it back (a crash) once its lease lapses, its waits kept', async () => {
    const tenant = 'replicas-tenant-4';
    const from = emu.calls().length;
    const env = { PECMASSIVA_LEASE_MS: '1500', PECMASSIVA_POLL_MS: '2000' };
    const a = await replica(env);
    const b = await replica(env);
    const queued = await a.bulk.queue({ token, tenant }, creds, request('quattro'), null);
    await sendingUntil(a.bulk, tenant, queued.id, (s) => sent(s) >= 10);
    await a.bulk.halt();
    // The lease is still A's: B waits for it to lapse (polled, with a deadline), then runs the rest.
    const taken = await waitFor(
      async () => {
        const ids = await b.bulk.takeUp();
        return ids.length > 0 && ids;
      },
      "B taking up A's lapsed lease",
      { deadline: 20_000, every: 50 },
    );
    expect(taken).toEqual([queued.id]);
    expect(b.bulk.leaseStats).toEqual({ lost: 0, takenUp: 1 });
    const done = await sendingUntil(b.bulk, tenant, queued.id, (s) => s.done);
    expect(done.recipients.map((r) => r.state)).toEqual(Array(40).fill('DELIVERED'));
    const codes = [...new Set(done.recipients.map((r) => r.code))];
    expect(codes).toHaveLength(4);
    // Nothing sent twice, each code's receipts read once (all in before the first read).
    expect(callsSince(from)).toEqual({ posts: 4, reads: codes.map((c) => `/send/${c}`).sort() });
    await a.stop();
    await b.stop();
  });
});
