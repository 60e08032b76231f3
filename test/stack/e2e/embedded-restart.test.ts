/**
 * Nothing lost across a hard restart in the default mode (no `REDIS_URL`, no `LAYER_SECRET`: the
 * embedded store in `DATA_DIR`), as an operator would see it: the emulator runs as its own process
 * (`services/emulator.ts`, its clock stopped), the whole layer as another (`main.ts`). Six paid
 * orders with idempotency keys are left pending; the layer is killed (SIGKILL) and started again
 * with the same environment. Then: the same keys buy nothing (the emulator's call log), the
 * pending callbacks (signed before the restart) are accepted, subscribers that re-attach get the
 * change, and the daily budget remembers what was spent.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { CF } from '../../support/risk.ts';
import { baseEnv, emulatorControl, freePort, gqlAt, spawnNode, spawnService, type Service } from '../../../services/processes.ts';

const ORDER = `mutation($input: PersonSubjectInput!, $key: String) { orderPatrimonialReport(input: $input, idempotencyKey: $key) { id state } }`;
const SUBSCRIBE = `subscription($id: ID!) { riskRequestUpdated(id: $id, family: PATRIMONIAL) { id state } }`;
/** `main.ts` says where GraphQL is served once it is ready. */
const READY = /GraphiQL and GraphQL:\s+(http:\/\/127\.0\.0\.1:\d+)/;
const PRICE = 15; // risk POST IT-patrimoniale-persona
const KEYS = Array.from({ length: 6 }, (_, i) => `restart-order-${i + 1}`);

interface Call {
  method: string;
  path: string;
  area: string;
  price?: number;
}

const services: Service[] = [];
let dataDir = '';
let emulatorUrl = '';
let layerEnv: NodeJS.ProcessEnv = {};

const startLayer = async (): Promise<Service> => {
  const layer = await spawnNode('layer', ['--import', 'tsx', 'main.ts'], layerEnv, READY);
  services.push(layer);
  return layer;
};

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'embedded-restart-'));
  const emu = await spawnService('emulator', 'emulator', [], baseEnv({ EMULATOR_PORT: '0' }));
  services.push(emu);
  emulatorUrl = emu.url;
  // The upstream's clock stands still: the orders stay pending until the test moves it.
  await emulatorControl(emulatorUrl, 'POST', 'clock', { mode: 'manual' });
  await emulatorControl(emulatorUrl, 'POST', 'risk/timing', { completeAfterMs: 60_000 });
  const port = await freePort();
  layerEnv = baseEnv({
    DATA_DIR: dataDir,
    OPENAPI_EMULATOR_URL: emulatorUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    OPENAPI_MAX_EURO_PER_DAY: String(KEYS.length * PRICE + 10),
  });
  expect(layerEnv.REDIS_URL).toBeUndefined();
  expect(layerEnv.LAYER_SECRET).toBeUndefined();
  expect(layerEnv.STORE).toBeUndefined();
}, 120_000);

afterAll(async () => {
  for (const s of services) await s.kill('SIGKILL');
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const calls = async (): Promise<Call[]> => (await emulatorControl(emulatorUrl, 'GET', 'calls')) as Call[];
const paidPosts = (list: Call[]): Call[] => list.filter((c) => c.method === 'POST' && c.path.includes('IT-patrimoniale-persona'));

it('loses nothing when the one-process layer is killed (SIGKILL) and started again on the embedded store', { timeout: 120_000 }, async () => {
  let layer = await startLayer();
  const order = (key: string) =>
    gqlAt<{ orderPatrimonialReport: { id: string; state: string } }>(layer.url, ORDER, { input: { name: 'MARIO', surname: 'ROSSI', taxCode: CF }, key });

  // Six paid orders, each under its own key, all pending upstream.
  const ids: string[] = [];
  for (const key of KEYS) {
    const res = await order(key);
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    ids.push(res.data!.orderPatrimonialReport.id);
  }
  expect(new Set(ids).size).toBe(KEYS.length);
  const before = paidPosts(await calls());
  expect(before).toHaveLength(KEYS.length);
  expect(before.reduce((sum, c) => sum + (c.price ?? 0), 0)).toBe(KEYS.length * PRICE);

  // The secret the layer made for itself is kept beside the database, readable by its owner only.
  expect(statSync(join(dataDir, 'layer-secret')).mode & 0o777).toBe(0o600);
  expect(statSync(join(dataDir, 'layer.db')).isFile()).toBe(true);

  // Killed hard, started again with the same environment (same port, same data directory).
  await layer.kill('SIGKILL');
  await emulatorControl(emulatorUrl, 'DELETE', 'calls');
  layer = await startLayer();

  // The same keys buy nothing: the same requests come back, and the upstream hears nothing at all.
  for (const [i, key] of KEYS.entries()) {
    const res = await order(key);
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    expect(res.data!.orderPatrimonialReport.id).toBe(ids[i]);
  }
  expect(await calls()).toEqual([]);

  // The daily budget remembers the €90 spent: a seventh order (€15) would pass €100, refused unsent.
  const over = await order('restart-order-7');
  expect(over.errors?.[0]?.extensions?.code, JSON.stringify(over)).toBe('COST_LIMIT_EXCEEDED');
  expect(await calls()).toEqual([]);

  // Subscribers re-attach: each first hears the state it missed nothing of, then the change.
  const client = createClient({ url: `${layer.url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
  try {
    const subs = ids.map((id) => client.iterate<{ riskRequestUpdated: { id: string; state: string } }>({ query: SUBSCRIBE, variables: { id } }));
    for (const [i, sub] of subs.entries()) expect((await sub.next()).value?.data?.riskRequestUpdated).toEqual({ id: ids[i], state: 'PROCESSING' });

    // The upstream's time moves on: every order completes and its callback (signed before the restart) is delivered.
    await emulatorControl(emulatorUrl, 'DELETE', 'callbacks');
    await emulatorControl(emulatorUrl, 'POST', 'clock', { advanceMs: 120_000 });
    const deliveries = (await emulatorControl(emulatorUrl, 'GET', 'callbacks')) as Array<{ url: string; status: number | null }>;
    expect(deliveries.map((d) => d.status)).toEqual(KEYS.map(() => 200));

    for (const [i, sub] of subs.entries()) expect((await sub.next()).value?.data?.riskRequestUpdated).toEqual({ id: ids[i], state: 'COMPLETE' });
    for (const sub of subs) await sub.return?.();
  } finally {
    await client.dispose();
  }

  // After the restart the upstream saw exactly one free read per delivered callback (the layer
  // confirms a delivery by reading the request), and no paid call: €0.
  const after = await calls();
  expect(after.map((c) => `${c.method} ${c.path}`).sort()).toEqual(ids.map((id) => `GET /IT-patrimoniale-persona/${id}`).sort());
  expect(after.reduce((sum, c) => sum + (c.price ?? 0), 0)).toBe(0);
});
