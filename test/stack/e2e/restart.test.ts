/**
 * Nothing lost across a restart (with Redis), as an operator would see it: the emulator, a company
 * subgraph, a risk subgraph and the gateway run as separate processes sharing `LAYER_SECRET` and
 * `REDIS_URL`. A request is ordered (relayed to the caller's own callback), a second one is left
 * pending; the risk subgraph is killed hard (SIGKILL); the emulator completes the first request and
 * tries its callback while the layer is down (and retries); the risk subgraph starts again on the
 * same port. Then: the callback is accepted, the caller's relay fires once, a reconnecting
 * subscriber gets COMPLETE first, and the poller reads the request that was pending.
 */
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { CF, CF2 } from '../../support/risk.ts';
import { baseEnv, emulatorControl, freePort, gqlAt, otherSubgraphs, spawnService, subgraphUrlsEnv, until, type Service } from '../../../services/processes.ts';

const SECRET = 'restart-test-secret-0123456789';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `test:restart:${randomBytes(4).toString('hex')}:`;

const services: Service[] = [];
let emulatorUrl = '';
let gatewayUrl = '';
let riskEnv: NodeJS.ProcessEnv = {};
let risk: Service;
let receiver: Server;
let receiverUrl = '';
const relayed: string[] = [];

const ORDER = `mutation($input: PersonSubjectInput!) { orderPatrimonialReport(input: $input) { id state } }`;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      relayed.push(body);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;

  const env = baseEnv({ LAYER_SECRET: SECRET, REDIS_URL, REDIS_PREFIX: PREFIX });
  const emu = await spawnService('emulator', 'emulator', [], { ...env, EMULATOR_PORT: '0' });
  services.push(emu);
  emulatorUrl = emu.url;
  await emulatorControl(emulatorUrl, 'POST', 'risk/timing', { completeAfterMs: 0 });
  // Five retries, 0.5 s doubling: the upstream keeps trying for about 15 s.
  await emulatorControl(emulatorUrl, 'POST', 'callbacks', { backoffMs: 500 });

  const gatewayPort = await freePort();
  const riskPort = await freePort();
  const subgraphEnv = {
    ...env,
    OPENAPI_EMULATOR_URL: emulatorUrl,
    PUBLIC_URL: `http://127.0.0.1:${gatewayPort}`,
    RISK_RELAY_ALLOW_PRIVATE: '1',
    RISK_POLL_INTERVAL_MS: '200',
    RISK_POLL_LATE_AFTER_MS: '1000',
  };
  riskEnv = { ...subgraphEnv, SUBGRAPH_PORT: String(riskPort) };
  const rest = otherSubgraphs(['company', 'risk']);
  const [company, r, others] = await Promise.all([
    spawnService('company', 'subgraph', ['company'], { ...subgraphEnv, SUBGRAPH_PORT: '0' }),
    spawnService('risk', 'subgraph', ['risk'], riskEnv),
    spawnService('others', 'subgraph', rest, { ...subgraphEnv, SUBGRAPH_PORT: '0' }),
  ]);
  services.push(company, r, others);
  risk = r;
  const gw = await spawnService('gateway', 'gateway', [], {
    ...env,
    PORT: String(gatewayPort),
    SUBGRAPH_COMPANY_URL: `${company.url}/company/graphql`,
    SUBGRAPH_RISK_URL: `${risk.url}/risk/graphql`,
    ...subgraphUrlsEnv(others.url, rest),
  });
  services.push(gw);
  gatewayUrl = gw.url;
}, 120_000);

afterAll(async () => {
  for (const s of services) await s.kill('SIGKILL');
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
});

it('loses nothing when the risk subgraph is killed and started again', { timeout: 90_000 }, async () => {
  const a = await gqlAt<{ orderPatrimonialReport: { id: string } }>(gatewayUrl, ORDER, {
    input: { name: 'MARIO', surname: 'ROSSI', taxCode: CF, callback: { url: receiverUrl, method: 'JSON' } },
  });
  expect(a.errors).toBeUndefined();
  const idA = a.data!.orderPatrimonialReport.id;
  const b = await gqlAt<{ orderPatrimonialReport: { id: string } }>(gatewayUrl, ORDER, { input: { name: 'ANNA', surname: 'BIANCHI', taxCode: CF2 } });
  expect(b.errors).toBeUndefined();
  const idB = b.data!.orderPatrimonialReport.id;

  // The risk subgraph dies hard.
  await risk.kill('SIGKILL');
  await emulatorControl(emulatorUrl, 'DELETE', 'callbacks');

  // The upstream completes A and tries its callback while the layer is down (and keeps retrying).
  const advancing = emulatorControl(emulatorUrl, 'POST', 'risk/advance', { id: idA });
  const log = async () => (await emulatorControl(emulatorUrl, 'GET', 'callbacks')) as Array<{ url: string; status: number | null }>;
  await until('a refused callback attempt while the layer is down', async () => ((await log()).some((d) => d.status !== 200) ? true : undefined));

  // The layer comes back on the same port, with the same secret and Redis.
  await emulatorControl(emulatorUrl, 'DELETE', 'calls');
  risk = await spawnService('risk', 'subgraph', ['risk'], riskEnv);
  services.push(risk);
  await advancing;
  expect((await log()).at(-1)?.status, `${JSON.stringify(await log())}\n${risk.output()}`).toBe(200);

  // The caller's own callback got the completion, once.
  await until('the relay to the caller', async () => (relayed.length > 0 ? true : undefined));
  expect(relayed.join('\n')).toContain(idA);

  // A subscriber that reconnects gets COMPLETE first.
  const client = createClient({ url: `${gatewayUrl.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
  try {
    const it = client.iterate<{ riskRequestUpdated: { id: string; state: string } }>({
      query: `subscription($id: ID!) { riskRequestUpdated(id: $id, family: PATRIMONIAL) { id state } }`,
      variables: { id: idA },
    });
    const first = await it.next();
    expect(first.value?.data?.riskRequestUpdated).toEqual({ id: idA, state: 'COMPLETE' });
    await it.return?.();
  } finally {
    await client.dispose();
  }

  // The poller of the new process resumes the request that was pending when the old one died.
  await until('the poller reading the pending request', async () => {
    const calls = (await emulatorControl(emulatorUrl, 'GET', 'calls?area=risk')) as Array<{ method: string; path: string }>;
    return calls.some((c) => c.method === 'GET' && c.path.endsWith(`/${idB}`)) ? true : undefined;
  });
  expect(relayed.filter((r) => r.includes(idA))).toHaveLength(1);
});
