/**
 * The build to deploy, as the container image runs it: `npm run build` once, then the emulator, one
 * subgraph server (every subgraph) and the gateway as separate processes started from dist/ with
 * plain `node` (no TypeScript loader), on free loopback ports and Redis. Through the gateway: a
 * query; `/healthz` and `/readyz` of the gateway and the subgraph server; `/readyz` 503 naming an
 * unreachable subgraph; then SIGTERM to the gateway while a query is in flight and a subscription is
 * open: the query is answered, the subscription gets `complete`, and the process exits 0. Last, the
 * image and compose definitions parse and name entry points the build emits.
 */
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { parse as parseYaml } from 'yaml';
import { CF } from './support/risk.ts';
import { withSafety } from './support/safety.ts';
import { startGateway } from '../gateway/index.ts';
import { gatewayOptionsFromEnv } from '../services/build.ts';
import { ServerLife } from '../subgraphs/runtime/health.ts';
import { SUBGRAPH_NAMES } from '../subgraphs/index.ts';
import { baseEnv, emulatorControl, gqlAt, spawnService, subgraphUrlsEnv, until, type Service } from '../services/processes.ts';

type Obj = Record<string, unknown>;

const ROOT = new URL('..', import.meta.url).pathname;
const DIST = 'dist';
const SECRET = 'build-test-secret-0123456789abcdef';
const REDIS_PREFIX = `build-test-${process.pid}-${Date.now()}:`;

const services: Service[] = [];
const clients: Client[] = [];
let emulatorUrl = '';
let gateway: Service;
let subgraphs: Service;

/** A probe's status and JSON body. */
async function getJson(url: string): Promise<{ status: number; body: Obj }> {
  const res = await request(url);
  return { status: res.statusCode, body: (await res.body.json()) as Obj };
}

beforeAll(async () => {
  // One build for the whole file, exactly as `npm run build` (and the image's build stage) makes it.
  await promisify(execFile)('npm', ['run', 'build'], { cwd: ROOT });
  const env = baseEnv({ LAYER_SECRET: SECRET, RISK_POLL_MAX_CALLS_PER_MIN: '0', REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PREFIX, SHUTDOWN_TIMEOUT_MS: '20000' });
  const emulator = await spawnService('emulator', 'emulator', [], { ...env, EMULATOR_PORT: '0' }, { dist: DIST });
  services.push(emulator);
  emulatorUrl = emulator.url;
  // Risk orders stay PROCESSING until the test says otherwise.
  await emulatorControl(emulatorUrl, 'POST', 'risk/timing', { completeAfterMs: 0 });
  subgraphs = await spawnService('subgraphs', 'subgraph', [...SUBGRAPH_NAMES], { ...env, OPENAPI_EMULATOR_URL: emulatorUrl, PUBLIC_URL: 'http://127.0.0.1:1', SUBGRAPH_PORT: '0' }, { dist: DIST });
  services.push(subgraphs);
  gateway = await spawnService('gateway', 'gateway', [], { ...env, PORT: '0', ...subgraphUrlsEnv(subgraphs.url, SUBGRAPH_NAMES) }, { dist: DIST });
  services.push(gateway);
}, 180_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.dispose()));
  for (const s of services) await s.kill('SIGKILL');
}, 180_000);

describe('npm run build: JavaScript that node runs as the image does', () => {
  it('emits JavaScript and the files read at run time, and the services run it without a TypeScript loader', () => {
    const files: string[] = [];
    const walk = (dir: string): void => {
      for (const e of readdirSync(join(ROOT, dir))) (statSync(join(ROOT, dir, e)).isDirectory() ? walk : files.push.bind(files))(join(dir, e));
    };
    walk(DIST);
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    for (const f of ['main.js', 'services/gateway.js', 'services/subgraph.js', 'services/emulator.js', 'supergraph.graphql', 'data/comuni.json', ...SUBGRAPH_NAMES.map((n) => `subgraphs/${n}/schema.graphql`)]) {
      expect(files, f).toContain(join(DIST, f));
    }
    for (const s of services) expect(s.proc.spawnargs.join(' '), s.name).not.toMatch(/tsx|\.ts\b/);
  });

  it('answers a query through the gateway, one upstream call', async () => {
    await emulatorControl(emulatorUrl, 'DELETE', 'calls');
    const res = await gqlAt<{ company: Obj }>(gateway.url, '{ company(vatCode: "12485671007") { companyName } }');
    expect(res.errors).toBeUndefined();
    expect(res.data?.company).toEqual({ companyName: 'OPENAPI S.P.A.' });
    expect(res.extensions?.cost?.upstreamCalls).toBe(1);
    expect(((await emulatorControl(emulatorUrl, 'GET', 'calls')) as unknown[]).length).toBe(1);
  });

  it('/healthz and /readyz: every subgraph and Redis reachable', async () => {
    expect(await getJson(`${gateway.url}/healthz`)).toEqual({ status: 200, body: { ok: true } });
    const ready = await getJson(`${gateway.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ ready: true, draining: false, checks: { ...Object.fromEntries(SUBGRAPH_NAMES.map((n) => [`subgraph ${n}`, 'ok'])), redis: 'ok' } });
    expect(await getJson(`${subgraphs.url}/healthz`)).toEqual({ status: 200, body: { ok: true } });
    expect(await getJson(`${subgraphs.url}/readyz`)).toEqual({ status: 200, body: { ready: true, draining: false, checks: { redis: 'ok' } } });
  });

  it('/readyz answers 503 naming a subgraph that cannot be reached (and /healthz stays 200)', async () => {
    // A gateway whose postal subgraph is at a port nothing listens on (1).
    const urls = { ...Object.fromEntries(SUBGRAPH_NAMES.map((n) => [n, `${subgraphs.url}/${n}/graphql`])), postal: 'http://127.0.0.1:1/postal/graphql' };
    const lone = await startGateway(gatewayOptionsFromEnv(baseEnv(), urls, { port: 0 }));
    try {
      const ready = await getJson(`${lone.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(ready.body).toMatchObject({ ready: false, draining: false, checks: { 'subgraph postal': 'ECONNREFUSED', 'subgraph company': 'ok' } });
      expect((await getJson(`${lone.url}/healthz`)).status).toBe(200);
    } finally {
      await lone.close();
    }
  });

  it('SIGTERM: the query in flight is answered, the open subscription gets complete, the gateway exits 0', async () => {
    const order = await gqlAt<{ orderPatrimonialReport: { id: string } }>(gateway.url, `mutation { orderPatrimonialReport(input: { name: "MARIO", surname: "ROSSI", taxCode: "${CF}" }) { id } }`);
    expect(order.errors).toBeUndefined();
    const client = createClient({ url: gateway.url.replace(/^http/, 'ws') + '/graphql', webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
    clients.push(client);
    const updates = client.iterate<{ riskRequestUpdated: { state: string } }>({ query: 'subscription($id: ID!) { riskRequestUpdated(id: $id) { state } }', variables: { id: order.data!.orderPatrimonialReport.id } });
    // The latest state first: the subscription is open end to end.
    expect((await withSafety(updates.next(), 'first state')).value?.data?.riskRequestUpdated.state).toBe('PROCESSING');

    // A company query whose upstream answer comes late: in flight when the signal arrives.
    await emulatorControl(emulatorUrl, 'POST', 'faults', { area: 'company', delayAfterMs: 1_500, count: 1 });
    const slow = gqlAt<{ company: Obj }>(gateway.url, '{ company(vatCode: "03456783053") { companyName } }');
    await until('the upstream call in flight', async () => (((await emulatorControl(emulatorUrl, 'GET', 'inflight')) as { count: number }).count > 0 ? true : undefined));

    const exited = once(gateway.proc, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    gateway.proc.kill('SIGTERM');

    // Completed by the server (`complete`), not dropped: the iterator ends without an error.
    expect(await withSafety(updates.next(), 'completion')).toEqual({ done: true, value: undefined });
    const answered = await withSafety(slow, 'the query in flight');
    expect(answered.errors).toBeUndefined();
    expect(answered.data?.company).toMatchObject({ companyName: expect.any(String) });
    expect(await withSafety(exited, 'exit', 25_000)).toEqual([0, null]);
    expect(gateway.output()).not.toMatch(/not stopped in time|failed/);
  });
});

describe('ServerLife: readiness while draining', () => {
  it('/readyz answers 503 from the moment the drain starts, and the drain waits for the request in flight', async () => {
    const life = new ServerLife([{ name: 'always', check: async () => undefined }]);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let drained: Promise<{ clean: boolean }> | null = null;
    let slowArrived = false;
    const server = createServer((req, res) => {
      life.track(res);
      void (async () => {
        if (req.url === '/slow') {
          slowArrived = true;
          await held;
          res.end('slow done');
        } else if (req.url === '/drain') {
          // The signal arrives while /slow is in flight; this request itself asks /readyz right after.
          drained = life.drain(server, 20_000);
          await life.answer('/readyz', res);
        } else await life.answer(req.url ?? '', res);
      })();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect(await getJson(`${base}/readyz`)).toEqual({ status: 200, body: { ready: true, draining: false, checks: { always: 'ok' } } });
      const slow = request(`${base}/slow`);
      await until('the slow request in flight', async () => (slowArrived ? true : undefined));
      expect(await getJson(`${base}/drain`)).toEqual({ status: 503, body: { ready: false, draining: true, checks: {} } });
      let settled = false;
      void drained!.then(() => (settled = true));
      // Still in flight: the drain has not ended.
      await new Promise((r) => setImmediate(r));
      expect(settled).toBe(false);
      release();
      expect(await (await slow).body.text()).toBe('slow done');
      expect(await withSafety(drained!, 'drain')).toEqual({ clean: true });
    } finally {
      release();
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('image and compose definitions', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  /** `node <file>` of a command names a file the build emits. */
  const entryOf = (command: readonly string[]): string => {
    expect(command[0]).toBe('node');
    expect(existsSync(join(ROOT, command[1]!)), command[1]).toBe(true);
    return command[1]!;
  };

  it('package.json builds and runs the built JavaScript', () => {
    expect(pkg.scripts.build).toBe('node scripts/build.mjs');
    for (const s of ['start:prod', 'gateway:prod', 'subgraph:prod', 'emulator:prod']) entryOf(pkg.scripts[s]!.split(' '));
    expect(pkg.scripts.start).toBe('tsx main.ts');
  });

  it('compose.yaml: Redis, the emulator (profile), one service per subgraph and two gateways, each checked on /readyz', () => {
    const compose = parseYaml(readFileSync(join(ROOT, 'compose.yaml'), 'utf8'), { merge: true }) as { services: Record<string, Obj> };
    const { services: svc } = compose;
    expect(Object.keys(svc).sort()).toEqual(['emulator', 'gateway-1', 'gateway-2', 'redis', ...SUBGRAPH_NAMES.map((n) => `subgraph-${n}`)].sort());
    expect(svc.emulator!.profiles).toEqual(['emulator']);
    expect(entryOf(svc.emulator!.command as string[])).toBe('dist/services/emulator.js');
    for (const name of SUBGRAPH_NAMES) {
      const s = svc[`subgraph-${name}`]!;
      expect(s.command).toEqual(['node', 'dist/services/subgraph.js', name]);
      entryOf(s.command as string[]);
      expect(JSON.stringify((s.healthcheck as Obj).test)).toContain('127.0.0.1:4001/readyz');
      expect(s.environment).toMatchObject({ REDIS_URL: 'redis://redis:6379', SUBGRAPH_PORT: '4001' });
    }
    for (const name of ['gateway-1', 'gateway-2']) {
      const g = svc[name]!;
      expect(entryOf(g.command as string[])).toBe('dist/services/gateway.js');
      expect(JSON.stringify((g.healthcheck as Obj).test)).toContain('127.0.0.1:4000/readyz');
      const env = g.environment as Record<string, string>;
      expect(env.REDIS_URL).toBe('redis://redis:6379');
      // Every subgraph of the supergraph at its service.
      for (const n of SUBGRAPH_NAMES) expect(env[`SUBGRAPH_${n.toUpperCase()}_URL`]).toBe(`http://subgraph-${n}:4001/${n}/graphql`);
      expect(Object.keys(g.depends_on as Obj).sort()).toEqual(['redis', ...SUBGRAPH_NAMES.map((n) => `subgraph-${n}`)].sort());
    }
    expect(JSON.stringify((svc.redis!.healthcheck as Obj).test)).toContain('ping');
  });

  it('Dockerfile: build stage (npm ci, build), runtime stage (npm ci --omit=dev, dist/), non-root, heap cap, HEALTHCHECK on /healthz', () => {
    const lines = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
      .replace(/\\\n/g, ' ')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    const stages = lines.filter((l) => /^FROM /i.test(l));
    expect(stages).toHaveLength(2);
    expect(stages[0]).toMatch(/ AS build$/);
    const runtimeAt = lines.indexOf(stages[1]!);
    const build = lines.slice(0, runtimeAt).join('\n');
    const runtime = lines.slice(runtimeAt).join('\n');
    expect(build).toMatch(/^RUN npm ci\b/m);
    expect(build).toMatch(/^RUN .*npm run build\b/m);
    expect(runtime).toMatch(/^RUN npm ci --omit=dev\b/m);
    expect(runtime).toMatch(/^COPY --from=build \/app\/dist \.\/dist$/m);
    expect(runtime).toMatch(/^USER (?!root\b|0\b)\S+$/m);
    expect(runtime).toMatch(/NODE_OPTIONS=--max-old-space-size=\d+/);
    expect(runtime).toMatch(/^HEALTHCHECK .*CMD .*HEALTHCHECK_URL/m);
    expect(runtime).toMatch(/HEALTHCHECK_URL=http:\/\/127\.0\.0\.1:4000\/healthz/);
    const cmd = /^CMD (\[.*\])$/m.exec(runtime);
    expect(entryOf(JSON.parse(cmd![1]!) as string[])).toBe('dist/main.js');
    for (const ignored of ['node_modules', 'dist', '.git', '.env']) expect(readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n')).toContain(ignored);
  });
});
