/**
 * The layer as separate services, as an operator runs them: `npm run emulator`, `npm run subgraph --
 * company`, `npm run subgraph -- risk` and `npm run gateway` as four child processes on free loopback
 * ports, sharing `LAYER_SECRET`. Through the gateway: a company query with its cost, a risk order
 * completed by the upstream's callback through the gateway's `/callbacks/risk` route into the risk
 * process, signed downloads through `/files/risk`; then every process stops cleanly on SIGTERM.
 */
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { bureauInput, CF } from '../../support/risk.ts';
import { baseEnv as serviceEnv, emulatorControl, freePort, gqlAt, otherSubgraphs, spawnService, subgraphUrlsEnv, until, type Service } from '../../../services/processes.ts';
import type { Obj } from '../../../contract/values.ts';

const SECRET = 'services-test-secret-0123456789';

/** The environment every service gets: none of the caller's layer settings leak in. */
const baseEnv = (): NodeJS.ProcessEnv => serviceEnv({ LAYER_SECRET: SECRET, RISK_POLL_MAX_CALLS_PER_MIN: '0' });

const services: Service[] = [];

/** Spawns `services/<script>.ts` and keeps it for the stop test and the clean-up. */
async function start(name: string, script: 'emulator' | 'gateway' | 'subgraph', args: string[], env: NodeJS.ProcessEnv): Promise<Service> {
  const service = await spawnService(name, script, args, env);
  services.push(service);
  return service;
}

let emulatorUrl = '';
let gatewayUrl = '';
const subgraphUrls: Record<string, string> = {};

const gql = <T = Obj>(query: string, variables?: Obj) => gqlAt<T>(gatewayUrl, query, variables);
const emulator = (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<unknown> => emulatorControl(emulatorUrl, method, path, body);

async function download(url: string): Promise<{ status: number; bytes: Buffer }> {
  const res = await request(url);
  return { status: res.statusCode, bytes: Buffer.from(await res.body.arrayBuffer()) };
}

beforeAll(async () => {
  const env = baseEnv();
  emulatorUrl = (await start('emulator', 'emulator', [], { ...env, EMULATOR_PORT: '0' })).url;
  const gatewayPort = await freePort();
  const publicUrl = `http://127.0.0.1:${gatewayPort}`;
  const subgraphEnv = { ...env, OPENAPI_EMULATOR_URL: emulatorUrl, PUBLIC_URL: publicUrl, SUBGRAPH_PORT: '0' };
  // Company and risk in a process each; the other subgraphs together in one (`-- pec invoicing …`).
  const rest = otherSubgraphs(['company', 'risk']);
  const [company, risk, others] = await Promise.all([
    start('company', 'subgraph', ['company'], subgraphEnv),
    start('risk', 'subgraph', ['risk'], subgraphEnv),
    start('others', 'subgraph', rest, subgraphEnv),
  ]);
  subgraphUrls.company = `${company.url}/company/graphql`;
  subgraphUrls.risk = `${risk.url}/risk/graphql`;
  const gw = await start('gateway', 'gateway', [], {
    ...env,
    PORT: String(gatewayPort),
    SUBGRAPH_COMPANY_URL: subgraphUrls.company,
    SUBGRAPH_RISK_URL: subgraphUrls.risk,
    ...subgraphUrlsEnv(others.url, rest),
  });
  gatewayUrl = gw.url;
  expect(gatewayUrl).toBe(publicUrl);
  // Risk requests complete only when the test says so.
  await emulator('POST', 'risk/timing', { completeAfterMs: 0 });
}, 120_000);

afterAll(async () => {
  for (const s of services) await s.kill('SIGKILL');
});

describe('separate services (npm run emulator / subgraph / gateway)', () => {
  it('each subgraph process serves only its own subgraph', async () => {
    expect(new URL(subgraphUrls.company).port).not.toBe(new URL(subgraphUrls.risk).port);
    const other = await request(subgraphUrls.company.replace('/company/graphql', '/risk/graphql'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query":"{ __typename }"}',
    });
    await other.body.dump();
    expect(other.statusCode).toBe(404);
  });

  it('a company query through the gateway works and reports its cost', async () => {
    const res = await gql<{ company: Obj }>('{ company(vatCode: "12485671007") { companyName } }');
    expect(res.errors).toBeUndefined();
    expect(res.data?.company).toMatchObject({ companyName: 'OPENAPI S.P.A.' });
    expect(res.extensions?.cost).toMatchObject({ upstreamCalls: 1, cacheHits: 0 });
    expect(res.extensions?.cost?.euro).toBeGreaterThan(0);
    expect(res.extensions?.cost?.calls[0]?.path).toMatch(/^\/IT-/);
  });

  it('a risk order completes through the callback route into the risk process, and its report downloads', async () => {
    const order = await gql<{ orderPatrimonialReport: Obj }>('mutation($input: PersonSubjectInput!) { orderPatrimonialReport(level: STANDARD, input: $input) { id state done } }', {
      input: { name: 'Mario', surname: 'Rossi', taxCode: CF },
    });
    expect(order.errors).toBeUndefined();
    expect(order.data?.orderPatrimonialReport).toMatchObject({ state: 'PROCESSING', done: false });
    expect(order.extensions?.cost?.euro).toBeGreaterThan(0);
    const id = String(order.data!.orderPatrimonialReport.id);

    // The upstream holds the callback URL signed by the risk process, under the gateway's PUBLIC_URL.
    const upstream = await request(`${emulatorUrl}/risk/IT-patrimoniale-persona/${id}`, { headers: { authorization: 'Bearer emulator-token' } });
    const record = ((await upstream.body.json()) as { data: Obj }).data;
    const callbackUrl = String((record.callback as Obj).url);
    expect(callbackUrl.startsWith(`${gatewayUrl}/callbacks/risk/`)).toBe(true);

    await emulator('POST', 'risk/advance', { id });
    // The emulator's delivery to the gateway was accepted: the risk process verified the signature.
    const delivered = await until(
      'the callback delivery',
      async () => {
        const log = (await emulator('GET', 'callbacks')) as Array<{ url: string; status: number | null }>;
        return log.find((d) => d.url === callbackUrl && d.status !== null);
      },
      5_000,
    );
    expect(delivered.status).toBe(200);

    const report = await gql<{ riskRequest: Obj }>('query($id: ID!) { riskRequest(family: PATRIMONIAL, id: $id) { state done ... on PatrimonialRequest { report { url } } } }', {
      id,
    });
    expect(report.errors).toBeUndefined();
    expect(report.data?.riskRequest).toMatchObject({ state: 'COMPLETE', done: true });
    const url = String((report.data!.riskRequest.report as Obj).url);
    expect(url.startsWith(`${gatewayUrl}/files/risk/`)).toBe(true);
    const doc = await download(url);
    expect(doc.status).toBe(200);
    expect(doc.bytes.subarray(0, 4).toString('latin1')).toBe('%PDF');

    // A forged callback reaches the risk process too, which refuses it.
    const forged = await request(`${callbackUrl.slice(0, -1)}${callbackUrl.endsWith('A') ? 'B' : 'A'}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    await forged.body.dump();
    expect(forged.statusCode).toBe(403);
  });

  it('a person bureau order: its signed delegation form downloads through /files/risk', async () => {
    const res = await gql<{ orderPersonBureauReport: Obj }>(
      'mutation($input: PersonBureauInput!) { orderPersonBureauReport(input: $input) { id state delegationForm { url contentType } } }',
      { input: bureauInput() },
    );
    expect(res.errors).toBeUndefined();
    const form = res.data!.orderPersonBureauReport.delegationForm as Obj;
    expect(String(form.url).startsWith(`${gatewayUrl}/files/risk/`)).toBe(true);
    const doc = await download(String(form.url));
    expect(doc.status).toBe(200);
    expect(doc.bytes.subarray(0, 4).toString('latin1')).toBe('%PDF');
    // Tampered: refused by the risk process's signature check.
    const [, head, c, tail] = /^(.*\/files\/risk\/[^./]+\.\d+\.)(.)([^/]*\/.+)$/.exec(String(form.url)) as unknown as [string, string, string, string];
    const tampered = await download(`${head}${c === 'A' ? 'B' : 'A'}${tail}`);
    expect(tampered.status).toBe(403);
  });

  it('every process stops cleanly on SIGTERM with exit code 0', async () => {
    const running = services.filter((s) => s.proc.exitCode === null);
    expect(running.map((s) => s.name).sort()).toEqual(['company', 'emulator', 'gateway', 'others', 'risk']);
    // The gateway first, the emulator last, as an operator would.
    for (const name of ['gateway', 'others', 'risk', 'company', 'emulator']) {
      const s = running.find((r) => r.name === name)!;
      const exited = once(s.proc, 'exit');
      s.proc.kill('SIGTERM');
      const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
      expect({ name, code, signal }, s.output()).toEqual({ name, code: 0, signal: null });
      expect(s.output()).toContain('SIGTERM: shutting down');
    }
  });
});

describe('a subgraph started alone', () => {
  it('refuses to start without LAYER_SECRET, saying why', async () => {
    const env: NodeJS.ProcessEnv = { ...baseEnv(), OPENAPI_EMULATOR_URL: 'http://127.0.0.1:9', PUBLIC_URL: 'http://127.0.0.1:4000', SUBGRAPH_PORT: '0' };
    delete env.LAYER_SECRET;
    // It exits with code 1 before saying where it listens; the error carries its output.
    await expect(spawnService('risk', 'subgraph', ['risk'], env)).rejects.toThrow(/exited with 1 before it was ready:[\s\S]*LAYER_SECRET is required/);
  });
});
