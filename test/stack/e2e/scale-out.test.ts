/**
 * The layer scaled out on one Redis: two gateways (A and B), each over its own company and risk
 * subgraph processes (so two replicas of each subgraph), one emulator. Through them: a subscriber on
 * gateway A hears a completion whose callback came in through gateway B; a late request is polled
 * once in all, not once per replica; a company bought through one replica is a cache hit through the
 * other; two replicas asked for the same company at the same moment buy it once; a tenant's daily
 * budget holds across replicas.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { registeredVats } from '../../../emulator/company/index.ts';
import { CF, CF2 } from '../../support/risk.ts';
import { baseEnv, emulatorControl, freePort, gqlAt, otherSubgraphs, spawnService, subgraphUrlsEnv, until, type Service } from '../../../services/processes.ts';

const SECRET = 'scale-out-test-secret-0123456789';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `test:scale:${randomBytes(4).toString('hex')}:`;
const LATE_MS = 1500;

const services: Service[] = [];
let emulatorUrl = '';
const gateways: string[] = [];

const ORDER = `mutation($input: PersonSubjectInput!) { orderPatrimonialReport(input: $input) { id state } }`;
type Call = { method: string; path: string; area: string; status: number; price: number; at: string };
const newToken = async (): Promise<string> => ((await emulatorControl(emulatorUrl, 'POST', 'tokens', { credit: 1000 })) as { token: string }).token;
const calls = async (area: string): Promise<Call[]> => (await emulatorControl(emulatorUrl, 'GET', `calls?area=${area}`)) as Call[];

const registered = registeredVats;

beforeAll(async () => {
  // The estimate assumes one item per list here, so an operation whose lists are longer can pass it
  // and meet the per-operation budget while it runs (across the company and risk processes).
  const env = baseEnv({
    LAYER_SECRET: SECRET,
    REDIS_URL,
    REDIS_PREFIX: PREFIX,
    OPENAPI_MAX_EURO_PER_DAY: '20',
    OPENAPI_MAX_EURO_PER_OPERATION: '16',
    OPENAPI_ESTIMATE_LIST_SIZE: '1',
  });
  const emu = await spawnService('emulator', 'emulator', [], { ...env, EMULATOR_PORT: '0' });
  services.push(emu);
  emulatorUrl = emu.url;
  await emulatorControl(emulatorUrl, 'POST', 'risk/timing', { completeAfterMs: 0 });
  const ports = [await freePort(), await freePort()];
  const replicas = await Promise.all(
    ports.flatMap((port, i) => {
      const subgraphEnv = {
        ...env,
        OPENAPI_EMULATOR_URL: emulatorUrl,
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        SUBGRAPH_PORT: '0',
        RISK_POLL_INTERVAL_MS: '100',
        RISK_POLL_LATE_AFTER_MS: String(LATE_MS),
      };
      return [spawnService(`company-${i}`, 'subgraph', ['company'], subgraphEnv), spawnService(`risk-${i}`, 'subgraph', ['risk'], subgraphEnv)];
    }),
  );
  services.push(...replicas);
  // The subgraphs not under test, in one process both gateways share.
  const rest = otherSubgraphs(['company', 'risk']);
  const others = await spawnService('others', 'subgraph', rest, { ...env, OPENAPI_EMULATOR_URL: emulatorUrl, PUBLIC_URL: `http://127.0.0.1:${ports[0]}`, SUBGRAPH_PORT: '0' });
  services.push(others);
  for (let i = 0; i < 2; i++) {
    const gw = await spawnService(`gateway-${i}`, 'gateway', [], {
      ...env,
      PORT: String(ports[i]),
      SUBGRAPH_COMPANY_URL: `${replicas[2 * i].url}/company/graphql`,
      SUBGRAPH_RISK_URL: `${replicas[2 * i + 1].url}/risk/graphql`,
      ...subgraphUrlsEnv(others.url, rest),
    });
    services.push(gw);
    gateways.push(gw.url);
  }
}, 120_000);

afterAll(async () => {
  for (const s of services) await s.kill('SIGKILL');
});

describe('two gateways and two replicas of each subgraph on one Redis', () => {
  it('a subscriber on gateway A hears a completion whose callback came in through gateway B', async () => {
    // (A tenant of its own: the daily budget of €20 is tested below.)
    const token = await newToken();
    const ordered = await gqlAt<{ orderPatrimonialReport: { id: string } }>(
      gateways[1],
      ORDER,
      { input: { name: 'MARIO', surname: 'ROSSI', taxCode: CF } },
      { authorization: `Bearer ${token}` },
    );
    expect(ordered.errors, JSON.stringify(ordered.errors)).toBeUndefined();
    const id = ordered.data!.orderPatrimonialReport.id;
    const client = createClient({
      url: `${gateways[0].replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${token}` },
    });
    try {
      const it = client.iterate<{ riskRequestUpdated: { id: string; state: string } }>({
        query: `subscription($id: ID!) { riskRequestUpdated(id: $id, family: PATRIMONIAL) { id state } }`,
        variables: { id },
      });
      const first = await it.next();
      expect(first.value?.data?.riskRequestUpdated).toEqual({ id, state: 'PROCESSING' });
      await emulatorControl(emulatorUrl, 'DELETE', 'callbacks');
      // Counted from here: a poll before it (a slow machine can make the request late) is not what this checks.
      await emulatorControl(emulatorUrl, 'DELETE', 'calls');
      await emulatorControl(emulatorUrl, 'POST', 'risk/advance', { id });
      const log = (await emulatorControl(emulatorUrl, 'GET', 'callbacks')) as Array<{ url: string; status: number | null }>;
      expect(log.map((d) => [new URL(d.url).origin, d.status])).toEqual([[gateways[1], 200]]);
      const next = await it.next();
      expect(next.value?.data?.riskRequestUpdated).toEqual({ id, state: 'COMPLETE' });
      // Heard on the shared bus and found in the shared store: the one read of the request upstream
      // is replica B's re-read of the callback (no look-up by A for the subscription, no poll).
      expect((await calls('risk')).filter((c) => c.method === 'GET' && c.path.endsWith(`/${id}`))).toHaveLength(1);
      await it.return?.();
    } finally {
      await client.dispose();
    }
  });

  it('polls a late request once in all, not once per replica', async () => {
    const ordered = await gqlAt<{ orderPatrimonialReport: { id: string } }>(
      gateways[0],
      ORDER,
      { input: { name: 'ANNA', surname: 'BIANCHI', taxCode: CF2 } },
      { authorization: `Bearer ${await newToken()}` },
    );
    expect(ordered.errors, JSON.stringify(ordered.errors)).toBeUndefined();
    const id = ordered.data!.orderPatrimonialReport.id;
    /** When the emulator received each read of the request (its own clock: when it happened, not when seen). */
    const reads = async (): Promise<number[]> => (await calls('risk')).filter((c) => c.method === 'GET' && c.path.endsWith(`/${id}`)).map((c) => Date.parse(c.at));
    // Both pollers tick every 100 ms; the request is late after 1.5 s. After the first read, the
    // next is due only a late period later: within most of it, one read in all.
    const first = await until('the first poll', async () => (await reads())[0], 10_000);
    await until('most of a late period', async () => (Date.now() > first + LATE_MS * 0.6 ? true : undefined), LATE_MS * 2);
    expect((await reads()).filter((at) => at < first + LATE_MS * 0.6)).toEqual([first]);
  });

  it('a company bought through one replica is a cache hit through the other', async () => {
    const [vat] = registered(6_100_000, 1);
    const q = `{ company(vatCode: "${vat}") { companyName } }`;
    const a = await gqlAt(gateways[0], q);
    expect(a.extensions?.cost).toMatchObject({ upstreamCalls: 1 });
    const b = await gqlAt(gateways[1], q);
    expect(b.data).toEqual(a.data);
    expect(b.extensions?.cost).toMatchObject({ upstreamCalls: 0, cacheHits: 1, euro: 0 });
    expect((await calls('company')).filter((c) => c.path.includes(vat))).toHaveLength(1);
  });

  it('two replicas asked for the same company at the same moment buy it once', async () => {
    await emulatorControl(emulatorUrl, 'POST', 'latency', { area: 'company', ms: 300 });
    try {
      const vats = registered(6_200_000, 5);
      for (const vat of vats) {
        const q = `{ company(vatCode: "${vat}") { companyName address { town } } }`;
        const [a, b] = await Promise.all([gqlAt(gateways[0], q), gqlAt(gateways[1], q)]);
        expect(a.data).toEqual(b.data);
        expect(a.extensions!.cost!.upstreamCalls + b.extensions!.cost!.upstreamCalls).toBe(1);
        expect((await calls('company')).filter((c) => c.path.includes(vat))).toHaveLength(1);
      }
    } finally {
      await emulatorControl(emulatorUrl, 'POST', 'latency', { area: 'company', ms: 0 });
    }
  });

  it("holds one operation's budget across the company and risk processes it spans", async () => {
    const token = await newToken();
    const auth = { authorization: `Bearer ${token}` };
    // Each company: IT-full (€1.50, for isMarketable) + a top score (€3). Estimated with one owner:
    // €13.50; BETA SERVIZI has two company owners: €18 in all, €6 in the company process and €12 in
    // the risk process, neither above €16 alone.
    const sel = 'isMarketable creditScore(level: TOP) { score }';
    const q = `{
      beta: company(vatCode: "04123450159") { ${sel} shareholders { owners { ... on ShareholderCompany { company { ${sel} } } } } }
      x: company(vatCode: "12485671007") { ${sel} }
    }`;
    const res = await gqlAt(gateways[0], q, undefined, auth);
    expect(res.extensions?.cost?.estimate?.euro).toBeLessThanOrEqual(16);
    expect(res.errors?.map((e) => [e.extensions?.code, e.extensions?.scope])).toContainEqual(['COST_LIMIT_EXCEEDED', 'operation']);
    // What the wallet was charged is what was reported, and within the one budget.
    const wallet = 1000 - ((await emulatorControl(emulatorUrl, 'GET', `tokens/${token}`)) as { credit: number }).credit;
    expect(wallet).toBeCloseTo(res.extensions!.cost!.euro, 6);
    expect(wallet).toBeGreaterThan(0);
    expect(wallet).toBeLessThanOrEqual(16);
    expect(res.extensions!.cost!.budget?.operation).toMatchObject({ limit: 16 });
  });

  it("holds a tenant's daily budget across replicas", async () => {
    const token = await newToken();
    const auth = { authorization: `Bearer ${token}` };
    const vats = registered(6_300_000, 8);
    // €3.05 per company (IT-start + a top score): six fit in €20, on whichever replica.
    let spent = 0;
    let refused = 0;
    for (let i = 0; i < vats.length; i++) {
      const res = await gqlAt(gateways[i % 2], `{ company(vatCode: "${vats[i]}") { companyName creditScore(level: TOP) { score } } }`, undefined, auth);
      spent += res.extensions?.cost?.euro ?? 0;
      if (res.errors?.some((e) => e.extensions?.code === 'COST_LIMIT_EXCEEDED' && e.extensions?.scope === 'day')) refused++;
      expect(res.extensions?.cost?.budget?.day?.committed).toBeCloseTo(spent, 6);
    }
    expect(spent).toBeLessThanOrEqual(20);
    expect(refused).toBeGreaterThan(0);
    const wallet = 1000 - ((await emulatorControl(emulatorUrl, 'GET', `tokens/${token}`)) as { credit: number }).credit;
    expect(wallet).toBeCloseTo(spent, 6);
  });
});
