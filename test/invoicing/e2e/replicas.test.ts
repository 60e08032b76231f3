/**
 * Two invoicing subgraph replicas on one Redis (and one emulator): a tenant's configuration
 * creations run one at a time across them (the kit's lease), so the tenth and eleventh created at
 * once through different replicas are metered €0 and €1, as the service charges them. The
 * emulator's invoicing answers are slowed (latency control) so both would count nine without the
 * lease. Real processes on loopback ports, GraphQL over HTTP to each replica.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeItalianVat } from '../../../contract/checksums.ts';
import { baseEnv, emulatorControl, freePort, gqlAt, spawnService, type Service } from '../../../services/processes.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `test:invoicing-replicas:${randomBytes(4).toString('hex')}:`;
const CONFIGURE = `mutation($input: ConfigureInvoicingInput!) { configureInvoicing(input: $input) { id } }`;

const services: Service[] = [];
let emulatorUrl = '';
const replicas: string[] = [];

beforeAll(async () => {
  const env = baseEnv({ LAYER_SECRET: 'invoicing-replicas-test-secret-0123456789', REDIS_URL, REDIS_PREFIX: PREFIX, INVOICING_POLL_INTERVAL_MS: '60000' });
  const emu = await spawnService('emulator', 'emulator', [], { ...env, EMULATOR_PORT: '0' });
  services.push(emu);
  emulatorUrl = emu.url;
  // No gateway here: the callback URLs the replicas register point at a port nobody serves (no event is delivered in this test).
  const publicUrl = `http://127.0.0.1:${await freePort()}`;
  const subgraphs = await Promise.all(
    [0, 1].map((i) => spawnService(`invoicing-${i}`, 'subgraph', ['invoicing'], { ...env, OPENAPI_EMULATOR_URL: emulatorUrl, SUBGRAPH_PORT: '0', PUBLIC_URL: publicUrl })),
  );
  services.push(...subgraphs);
  replicas.push(...subgraphs.map((s) => `${s.url}/invoicing`));
}, 120_000);

afterAll(async () => {
  await Promise.all(services.map((s) => s.kill()));
}, 120_000);

it('the tenth and eleventh configurations created at once through two replicas are metered €0 and €1', async () => {
  const token = ((await emulatorControl(emulatorUrl, 'POST', 'tokens', { credit: 5 })) as { token: string }).token;
  const auth = { authorization: `Bearer ${token}` };
  const vats = Array.from({ length: 11 }, (_, i) => makeItalianVat(String(3000000000 + i * 17)));
  const configure = (replica: string, vat: string) => gqlAt(replica, CONFIGURE, { input: { fiscalId: vat, name: `Company ${vat}`, email: `${vat}@example.com` } }, auth);
  for (const vat of vats.slice(0, 9)) {
    const r = await configure(replicas[0], vat);
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  }
  await emulatorControl(emulatorUrl, 'DELETE', 'calls');
  // Each count takes 300 ms: without the lease both replicas would read nine configurations.
  await emulatorControl(emulatorUrl, 'POST', 'latency', { area: 'invoice', ms: 300 });
  try {
    const both = await Promise.all([configure(replicas[0], vats[9]), configure(replicas[1], vats[10])]);
    for (const r of both) expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    expect(both.map((r) => r.extensions!.cost!.euro).sort()).toEqual([0, 1]);
  } finally {
    await emulatorControl(emulatorUrl, 'POST', 'latency', { area: 'invoice', ms: 0 });
  }
  const credit = ((await emulatorControl(emulatorUrl, 'GET', `tokens/${encodeURIComponent(token)}`)) as { credit: number }).credit;
  expect(credit).toBe(4);
  const calls = (await emulatorControl(emulatorUrl, 'GET', 'calls?area=invoice')) as Array<{ method: string; path: string; status: number }>;
  // The tenth: counted, created, the list read again (free, its place settles €0); the eleventh: counted (ten), created at €1.
  expect(calls.map((c) => `${c.method} ${c.path} ${c.status}`).sort()).toEqual([
    'GET /IT-configurations 200',
    'GET /IT-configurations 200',
    'GET /IT-configurations 200',
    'POST /api_configurations 200',
    'POST /api_configurations 200',
  ]);
});
