/**
 * The build to deploy, as the container image runs it: `npm run build` once (into a directory of this
 * run's own, removed after), then the emulator, one subgraph server (every subgraph) and the gateway
 * as separate processes started from the built JavaScript with plain `node` (no TypeScript loader),
 * on free loopback ports and Redis. The build imports only packages the image installs
 * (`dependencies`). Through the gateway: a query; `/healthz` and `/readyz` of the gateway, the
 * subgraph server and the emulator; `/readyz` 503 naming an unreachable subgraph; then SIGTERM to
 * the gateway while a query is in flight and a subscription is open: the query is answered, the
 * socket is closed with 1001 without `complete`, so a graphql-ws client with retries resubscribes
 * to a second gateway and gets the latest state first; the process exits 0. A unit of ServerLife:
 * `/readyz` 503 while draining, the keep-alive connection closed after its answer, SSE streams
 * ended, a drain cut short reporting what was left. Last, the image and compose definitions parse
 * and name entry points the build emits.
 */
import { execFile, spawn } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { builtinModules } from 'node:module';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { parse as parseYaml } from 'yaml';
import { CF } from '../../support/risk.ts';
import { withSafety } from '../../support/safety.ts';
import { startGateway, type RunningGateway } from '../../../gateway/index.ts';
import { gatewayOptionsFromEnv } from '../../../services/build.ts';
import { ServerLife, type DrainResult } from '../../../platform/health.ts';
import { SUBGRAPH_NAMES } from '../../../subgraphs/index.ts';
import { baseEnv, emulatorControl, gqlAt, spawnService, subgraphUrlsEnv, until, type Service } from '../../../services/processes.ts';

type Obj = Record<string, unknown>;

const ROOT = new URL('../../..', import.meta.url).pathname;
/** This run's own build (inside the package, for node_modules), never the shared dist/. */
const DIST = `.build-test-${process.pid}`;
const SECRET = 'build-test-secret-0123456789abcdef';
const REDIS_PREFIX = `build-test-${process.pid}-${Date.now()}:`;

const services: Service[] = [];
const clients: Client[] = [];
let emulatorUrl = '';
let gateway: Service;
let subgraphs: Service;
let emulator: Service;
/** A second gateway (in this process) over the same subgraph server: where clients go after a drain. */
let second: RunningGateway | null = null;

/** A probe's status and JSON body. */
async function getJson(url: string): Promise<{ status: number; body: Obj }> {
  const res = await request(url);
  return { status: res.statusCode, body: (await res.body.json()) as Obj };
}

beforeAll(async () => {
  // One build for the whole file, exactly as `npm run build` (and the image's build stage) makes it.
  await promisify(execFile)('npm', ['run', 'build', '--', '--out', DIST], { cwd: ROOT });
  const env = baseEnv({ LAYER_SECRET: SECRET, RISK_POLL_MAX_CALLS_PER_MIN: '0', REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PREFIX, SHUTDOWN_TIMEOUT_MS: '20000' });
  emulator = await spawnService('emulator', 'emulator', [], { ...env, EMULATOR_PORT: '0' }, { dist: DIST });
  services.push(emulator);
  emulatorUrl = emulator.url;
  // Risk orders stay PROCESSING until the test says otherwise.
  await emulatorControl(emulatorUrl, 'POST', 'risk/timing', { completeAfterMs: 0 });
  subgraphs = await spawnService(
    'subgraphs',
    'subgraph',
    [...SUBGRAPH_NAMES],
    { ...env, OPENAPI_EMULATOR_URL: emulatorUrl, PUBLIC_URL: 'http://127.0.0.1:1', SUBGRAPH_PORT: '0' },
    { dist: DIST },
  );
  services.push(subgraphs);
  gateway = await spawnService('gateway', 'gateway', [], { ...env, PORT: '0', ...subgraphUrlsEnv(subgraphs.url, SUBGRAPH_NAMES) }, { dist: DIST });
  services.push(gateway);
  second = await startGateway(gatewayOptionsFromEnv(env, Object.fromEntries(SUBGRAPH_NAMES.map((n) => [n, `${subgraphs.url}/${n}/graphql`])), { port: 0 }));
}, 180_000);

afterAll(async () => {
  await Promise.all(clients.map(async (c) => c.dispose()));
  await second?.close();
  for (const s of services) await s.kill('SIGKILL');
  rmSync(join(ROOT, DIST), { recursive: true, force: true });
}, 180_000);

/** Every file under `dir` (relative to the package). */
function filesUnder(dir: string): string[] {
  const files: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(join(ROOT, d))) (statSync(join(ROOT, d, e)).isDirectory() ? walk : files.push.bind(files))(join(d, e));
  };
  walk(dir);
  return files;
}

/** The module specifiers a built file imports (static `import … from`, bare `import '…'`, `import('…')`). */
function importsOf(js: string): string[] {
  return [...js.matchAll(/(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm)].map(
    (m) => m[1] ?? m[2] ?? m[3],
  );
}

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`); null for relative paths and Node's own modules. */
function packageOf(specifier: string): string | null {
  if (/^[./]|^node:/.test(specifier)) return null;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  return builtinModules.includes(name) ? null : name;
}

describe('npm run build: JavaScript that node runs as the image does', () => {
  it('emits JavaScript and the files read at run time; relative imports name the emitted .js files', () => {
    const files = filesUnder(DIST);
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    for (const f of [
      'main.js',
      'services/gateway.js',
      'services/subgraph.js',
      'services/emulator.js',
      'supergraph.graphql',
      'data/comuni.json',
      ...SUBGRAPH_NAMES.map((n) => `subgraphs/${n}/schema.graphql`),
    ]) {
      expect(files, f).toContain(join(DIST, f));
    }
    const unresolved = files
      .filter((f) => f.endsWith('.js'))
      .flatMap((f) =>
        importsOf(readFileSync(join(ROOT, f), 'utf8'))
          .filter((s) => s.startsWith('.') && !existsSync(join(ROOT, f, '..', s)))
          .map((s) => `${f}: ${s}`),
      );
    expect(unresolved).toEqual([]);
  });

  it('imports only packages that package.json lists in dependencies (what the image installs with --omit=dev)', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const used = new Map<string, string>();
    for (const f of filesUnder(DIST).filter((x) => x.endsWith('.js'))) {
      for (const s of importsOf(readFileSync(join(ROOT, f), 'utf8'))) {
        const name = packageOf(s);
        if (name && !used.has(name)) used.set(name, f);
      }
    }
    // The scan finds the runtime's packages (a scan that finds nothing would pass for nothing).
    expect([...used.keys()]).toEqual(expect.arrayContaining(['@graphql-hive/gateway-runtime', 'graphql-ws', 'ioredis']));
    const missing = [...used].filter(([name]) => !(name in pkg.dependencies)).map(([name, file]) => `${name} (imported by ${file.slice(DIST.length + 1)})`);
    expect(missing).toEqual([]);
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
    expect(await getJson(`${emulator.url}/readyz`)).toEqual({ status: 200, body: { ready: true, draining: false } });
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

  it('SIGTERM: the query in flight is answered, the subscription is closed with 1001 (no complete) and resumes on another gateway, the gateway exits 0', async () => {
    const order = await gqlAt<{ orderPatrimonialReport: { id: string } }>(
      gateway.url,
      `mutation { orderPatrimonialReport(input: { name: "MARIO", surname: "ROSSI", taxCode: "${CF}" }) { id } }`,
    );
    expect(order.errors).toBeUndefined();
    // A client as deployed behind a load balancer: it reconnects on a close, here to the second gateway.
    const targets = [gateway.url, second!.url];
    const connectedTo: string[] = [];
    const closeCodes: number[] = [];
    const client = createClient({
      url: () => {
        const target = targets.shift() ?? second!.url;
        connectedTo.push(target);
        return target.replace(/^http/, 'ws') + '/graphql';
      },
      webSocketImpl: WebSocket,
      lazy: true,
      retryAttempts: 3,
      retryWait: async () => undefined,
      on: { closed: (event) => void closeCodes.push((event as { code: number }).code) },
    });
    clients.push(client);
    const updates = client.iterate<{ riskRequestUpdated: { state: string } }>({
      query: 'subscription($id: ID!) { riskRequestUpdated(id: $id) { state } }',
      variables: { id: order.data!.orderPatrimonialReport.id },
    });
    // The latest state first: the subscription is open end to end.
    expect((await withSafety(updates.next(), 'first state')).value?.data?.riskRequestUpdated.state).toBe('PROCESSING');

    // A company query whose upstream answer comes late: in flight when the signal arrives.
    await emulatorControl(emulatorUrl, 'POST', 'faults', { area: 'company', delayAfterMs: 1_500, count: 1 });
    const slow = gqlAt<{ company: Obj }>(gateway.url, '{ company(vatCode: "03456783053") { companyName } }');
    await until('the upstream call in flight', async () => (((await emulatorControl(emulatorUrl, 'GET', 'inflight')) as { count: number }).count > 0 ? true : undefined));

    const exited = once(gateway.proc, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    gateway.proc.kill('SIGTERM');

    // Not ended (`complete` would end it for good): the client reconnects to the second gateway,
    // resubscribes, and gets the latest state first.
    const resumed = await withSafety(updates.next(), 'the state again, from the second gateway');
    expect(resumed.done).toBe(false);
    expect(resumed.value?.data?.riskRequestUpdated.state).toBe('PROCESSING');
    expect(closeCodes).toEqual([1001]);
    expect(connectedTo).toEqual([gateway.url, second!.url]);

    const answered = await withSafety(slow, 'the query in flight');
    expect(answered.errors).toBeUndefined();
    expect(answered.data?.company).toMatchObject({ companyName: expect.any(String) });
    expect(await withSafety(exited, 'exit', 25_000)).toEqual([0, null]);
    expect(gateway.output()).not.toMatch(/not stopped in time|failed|cut short/);
  });

  it("the image's default command (node main.js, one process) drains on SIGTERM too: the subscription is closed with 1001, the process exits 0", async () => {
    const proc = spawn(process.execPath, [`${DIST}/main.js`], {
      cwd: ROOT,
      env: baseEnv({ LAYER_SECRET: SECRET, PORT: '0', RISK_POLL_MAX_CALLS_PER_MIN: '0', SHUTDOWN_TIMEOUT_MS: '20000' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
    proc.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = once(proc, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    try {
      const [, url, emu] = await until(
        'the one-process stack ready',
        async () => /GraphiQL and GraphQL: +(http:\/\/127\.0\.0\.1:\d+)\/graphql\n[^]*embedded emulator at (http:\/\/127\.0\.0\.1:\d+)/.exec(out) ?? undefined,
        60_000,
      );
      await emulatorControl(emu, 'POST', 'risk/timing', { completeAfterMs: 0 });
      const order = await gqlAt<{ orderPatrimonialReport: { id: string } }>(
        url,
        `mutation { orderPatrimonialReport(input: { name: "MARIO", surname: "ROSSI", taxCode: "${CF}" }) { id } }`,
      );
      expect(order.errors).toBeUndefined();
      const closeCodes: number[] = [];
      const client = createClient({
        url: url.replace(/^http/, 'ws') + '/graphql',
        webSocketImpl: WebSocket,
        retryAttempts: 0,
        lazy: true,
        on: { closed: (e) => void closeCodes.push((e as { code: number }).code) },
      });
      clients.push(client);
      const updates = client.iterate<{ riskRequestUpdated: { state: string } }>({
        query: 'subscription($id: ID!) { riskRequestUpdated(id: $id) { state } }',
        variables: { id: order.data!.orderPatrimonialReport.id },
      });
      expect((await withSafety(updates.next(), 'first state')).value?.data?.riskRequestUpdated.state).toBe('PROCESSING');
      proc.kill('SIGTERM');
      // Closed, not completed: without retries the client reports the close as an error.
      await expect(withSafety(updates.next(), 'the close')).rejects.toMatchObject({ code: 1001 });
      expect(closeCodes).toEqual([1001]);
      expect(await withSafety(exited, 'exit', 25_000)).toEqual([0, null]);
      expect(out).not.toMatch(/not stopped in time|failed|cut short/);
    } finally {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    }
  });
});

describe('ServerLife: readiness and drain', () => {
  /** A server whose every request ServerLife tracks; `routes` answer by path, else `life.answer`. */
  async function serve(life: ServerLife, routes: Record<string, (res: ServerResponse) => void | Promise<void>>) {
    const server = createServer((req, res) => {
      life.track(res);
      const route = routes[req.url ?? ''];
      void (route ? Promise.resolve(route(res)) : life.answer(req.url ?? '', res));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  }

  it('/readyz 503 from the moment the drain starts; the request in flight is answered, SSE streams are ended, keep-alive connections closed, then the drain ends clean', async () => {
    const life = new ServerLife([{ name: 'always', check: async () => undefined }]);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let drained: Promise<DrainResult> | null = null;
    let slowArrived = false;
    let streaming = false;
    const { server, base } = await serve(life, {
      '/slow': async (res) => {
        slowArrived = true;
        await held;
        res.end('slow done');
      },
      // An SSE subscription as @whatwg-node/server sends it: headers given to writeHead, never ended by itself.
      '/events': (res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.write('event: next\ndata: {"n":1}\n\n', () => (streaming = true));
      },
      // The signal arrives while /slow is in flight; this request itself asks /readyz right after.
      '/drain': async (res) => {
        drained = life.drain(server, 60_000);
        await life.answer('/readyz', res);
      },
    });
    try {
      // Over keep-alive connections (undici's pool): the drain can only end once the server closed them.
      expect(await getJson(`${base}/readyz`)).toEqual({ status: 200, body: { ready: true, draining: false, checks: { always: 'ok' } } });
      const slow = request(`${base}/slow`);
      const events = await request(`${base}/events`);
      const eventsText = events.body.text();
      await until('the slow request and the stream in flight', async () => (slowArrived && streaming ? true : undefined));
      expect(await getJson(`${base}/drain`)).toEqual({ status: 503, body: { ready: false, draining: true, checks: {} } });
      // The stream is ended by the drain (the client reconnects elsewhere), with what was sent.
      expect(await withSafety(eventsText, 'the SSE stream ended')).toBe('event: next\ndata: {"n":1}\n\n');
      let settled = false;
      void drained!.then(() => (settled = true));
      // Still in flight: the drain has not ended.
      await new Promise((r) => setImmediate(r));
      expect(settled).toBe(false);
      release();
      expect(await (await slow).body.text()).toBe('slow done');
      // Clean: `server.close` called back, so every keep-alive connection (idle ones, and the slow
      // request's once answered) was closed by the server, not left to the client's idle timeout.
      expect(await withSafety(drained!, 'drain')).toEqual({ clean: true, requests: 0, sockets: 0 });
    } finally {
      release();
      server.closeAllConnections();
      server.close();
    }
  });

  it('a drain cut short by its timeout says what was left (the service then exits 1)', async () => {
    const life = new ServerLife([], 'unit');
    let arrived = false;
    const { server, base } = await serve(life, {
      '/forever': () => {
        arrived = true;
      },
    });
    try {
      void request(`${base}/forever`).catch(() => undefined);
      await until('the request in flight', async () => (arrived ? true : undefined));
      expect(await life.drain(server, 0)).toEqual({ clean: false, requests: 1, sockets: 0 });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('image and compose definitions', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  /**
   * `node <file>` of a command names a file the build emits: `dist/X.js` from the source `X.ts`
   * (a clean checkout has no `dist/`; this run's own build is elsewhere and checked above).
   */
  const entryOf = (command: readonly string[]): string => {
    expect(command[0]).toBe('node');
    expect(command[1]).toMatch(/^dist\/.+\.js$/);
    const source = command[1].replace(/^dist\//, '').replace(/\.js$/, '.ts');
    expect(existsSync(join(ROOT, source)), `${command[1]} from ${source}`).toBe(true);
    return command[1];
  };

  it('package.json builds and runs the built JavaScript', () => {
    expect(pkg.scripts.build).toBe('node scripts/build.mjs');
    for (const s of ['start:prod', 'gateway:prod', 'subgraph:prod', 'emulator:prod']) entryOf(pkg.scripts[s].split(' '));
    // `npm start` from a fresh clone: dist/ built when stale, then the built main, with the heap cap
    // and a young generation of 2 × 8 MB (V8's default 2 × 16 MB held about 15 MB more at idle).
    expect(pkg.scripts.start).toMatch(/^node --max-old-space-size=\d+ --max-semi-space-size=8 scripts\/start\.mjs$/);
    // `npm run dev`: the sources through tsx, no build.
    expect(pkg.scripts.dev).toMatch(/^node (?:\S+ )*--import tsx main\.ts$/);
  });

  it('compose.yaml: Redis, the emulator (profile), one service per subgraph and two gateways, each checked on /readyz', () => {
    const compose = parseYaml(readFileSync(join(ROOT, 'compose.yaml'), 'utf8'), { merge: true }) as { services: Record<string, Obj> };
    const { services: svc } = compose;
    expect(Object.keys(svc).sort()).toEqual(['emulator', 'gateway-1', 'gateway-2', 'redis', ...SUBGRAPH_NAMES.map((n) => `subgraph-${n}`)].sort());
    expect(svc.emulator.profiles).toEqual(['emulator']);
    expect(entryOf(svc.emulator.command as string[])).toBe('dist/services/emulator.js');
    expect(JSON.stringify((svc.emulator.healthcheck as Obj).test)).toContain('127.0.0.1:4010/readyz');
    // Money state survives restarts: append-only file on a named volume, never evicted.
    expect(svc.redis.command).toEqual(['redis-server', '--appendonly', 'yes', '--maxmemory-policy', 'noeviction']);
    expect(svc.redis.volumes).toEqual(['redis-data:/data']);
    expect(Object.keys((compose as { volumes?: Obj }).volumes ?? {})).toEqual(['redis-data']);
    /** Megabytes of a compose size (`512m`) or of a heap cap in NODE_OPTIONS. */
    const mb = (size: unknown): number => Number(/^(\d+)m$/i.exec(String(size))?.[1]);
    const heapMb = (env: Record<string, string>): number => Number(/--max-old-space-size=(\d+)/.exec(env.NODE_OPTIONS ?? '')?.[1]);
    const seconds = (d: unknown): number => Number(/^(\d+)s$/.exec(String(d))?.[1]);
    // Every service of the image: the heap cap is about 75 % of the container's limit, and the
    // stop grace period outlasts the drain (SHUTDOWN_TIMEOUT_MS), itself above the layer's 60 s waits.
    for (const [name, s] of Object.entries(svc).filter(([n]) => n !== 'redis')) {
      const env = s.environment as Record<string, string>;
      expect(heapMb(env) / mb(s.mem_limit), name).toBeGreaterThanOrEqual(0.7);
      expect(heapMb(env) / mb(s.mem_limit), name).toBeLessThanOrEqual(0.8);
      expect(Number(env.SHUTDOWN_TIMEOUT_MS), name).toBeGreaterThan(60_000);
      expect(seconds(s.stop_grace_period) * 1000, name).toBeGreaterThan(Number(env.SHUTDOWN_TIMEOUT_MS));
    }
    for (const name of SUBGRAPH_NAMES) {
      const s = svc[`subgraph-${name}`];
      expect(s.command).toEqual(['node', 'dist/services/subgraph.js', name]);
      entryOf(s.command as string[]);
      expect(JSON.stringify((s.healthcheck as Obj).test)).toContain('127.0.0.1:4001/readyz');
      expect(s.environment).toMatchObject({ REDIS_URL: 'redis://redis:6379', SUBGRAPH_PORT: '4001' });
      // No silent default to the emulator: compose refuses to start without OPENAPI_ENV.
      expect((s.environment as Record<string, string>).OPENAPI_ENV).toMatch(/^\$\{OPENAPI_ENV:\?/);
    }
    for (const name of ['gateway-1', 'gateway-2']) {
      const g = svc[name];
      expect(entryOf(g.command as string[])).toBe('dist/services/gateway.js');
      expect(JSON.stringify((g.healthcheck as Obj).test)).toContain('127.0.0.1:4000/readyz');
      const env = g.environment as Record<string, string>;
      expect(env.REDIS_URL).toBe('redis://redis:6379');
      // Only what a gateway uses: no upstream environment or credentials.
      expect(Object.keys(env).sort()).toEqual(
        [
          'GATEWAY_SERVICE_TOKEN',
          'HOST',
          'LAYER_SECRET',
          'NODE_OPTIONS',
          'PORT',
          'REDIS_URL',
          'SHUTDOWN_TIMEOUT_MS',
          ...SUBGRAPH_NAMES.map((n) => `SUBGRAPH_${n.toUpperCase()}_URL`),
        ].sort(),
      );
      // Apart from subgraphs that may use a service token, the gateway is told so (README: such a
      // gateway needs GATEWAY_SERVICE_TOKEN=on), unless the operator says otherwise.
      expect(env.GATEWAY_SERVICE_TOKEN).toBe('${GATEWAY_SERVICE_TOKEN:-on}');
      const asComposeRuns = (vars: NodeJS.ProcessEnv): NodeJS.ProcessEnv =>
        Object.fromEntries(
          Object.entries(env).map(([k, v]) => [
            k,
            v.replace(/\$\{(\w+):([-?])([^}]*)\}/g, (_m, name: string, op: string, dflt: string) => vars[name] || (op === '-' ? dflt : 'set-by-the-operator-0123456789')),
          ]),
        );
      const serviceTokenOf = (vars: NodeJS.ProcessEnv): boolean | undefined => {
        const cache = gatewayOptionsFromEnv(asComposeRuns(vars), {}).responseCache;
        return cache === false ? undefined : cache?.serviceToken;
      };
      expect(serviceTokenOf({})).toBe(true);
      expect(serviceTokenOf({ GATEWAY_SERVICE_TOKEN: 'off' })).toBe(false);
      // Every subgraph of the supergraph at its service.
      for (const n of SUBGRAPH_NAMES) expect(env[`SUBGRAPH_${n.toUpperCase()}_URL`]).toBe(`http://subgraph-${n}:4001/${n}/graphql`);
      expect(Object.keys(g.depends_on as Obj).sort()).toEqual(['redis', ...SUBGRAPH_NAMES.map((n) => `subgraph-${n}`)].sort());
    }
    expect(JSON.stringify((svc.redis.healthcheck as Obj).test)).toContain('ping');
  });

  it('runs on a supported Node: the floor the dependencies declare (engines, read by ensure-deps), Node 24 in the image', () => {
    const engines = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    expect(engines).toBe('>=22.15.0');
    const NODE_FLOOR = [22, 15];
    // This very process: on a machine whose Node is older, the npm scripts put Node 24 first on PATH.
    const [major, minor] = process.versions.node.split('.').map(Number);
    expect(major > NODE_FLOOR[0] || (major === NODE_FLOOR[0] && minor >= NODE_FLOOR[1])).toBe(true);
    const image = /^ARG NODE_VERSION=(\d+)$/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
    expect(Number(image?.[1])).toBeGreaterThanOrEqual(24);
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
    const runtimeAt = lines.indexOf(stages[1]);
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
    // The embedded store's directory: owned by the node user, a volume.
    expect(runtime).toMatch(/DATA_DIR=\/data\b/);
    expect(runtime).toMatch(/^RUN .*chown node:node \/data\b/m);
    expect(runtime).toMatch(/^VOLUME \/data$/m);
    const cmd = /^CMD (\[.*\])$/m.exec(runtime);
    expect(entryOf(JSON.parse(cmd![1]) as string[])).toBe('dist/main.js');
    for (const ignored of ['node_modules', 'dist', '.git', '.env', '.data']) expect(readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n')).toContain(ignored);
  });
});

describe('npm start builds dist/ again when it is not the build of the sources as they are', () => {
  // The fingerprint `scripts/start.mjs` compares with `dist/.built` (`scripts/build-inputs.mjs`).
  const root = mkdtempSync(join(tmpdir(), 'fingerprint-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (rel: string, text: string): void => {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  };

  it('changes with an edit, a new file, a removed or moved one; not with generated types or node_modules', async () => {
    const { fingerprint } = (await import(pathToFileURL(join(ROOT, 'scripts', 'build-inputs.mjs')).href)) as { fingerprint: (root: string) => string };
    write('main.ts', 'one');
    write('gateway/a.ts', 'a');
    write('subgraphs/x/schema.graphql', 'type Query { a: Int }');
    const first = fingerprint(root);
    expect(fingerprint(root)).toBe(first);
    write('subgraphs/x/__generated__/types.ts', 'generated');
    write('gateway/node_modules/m.js', 'x');
    expect(fingerprint(root)).toBe(first);
    write('gateway/a.ts', 'ab');
    const edited = fingerprint(root);
    expect(edited).not.toBe(first);
    write('contract/new.ts', 'n');
    const added = fingerprint(root);
    expect(added).not.toBe(edited);
    renameSync(join(root, 'contract/new.ts'), join(root, 'contract/moved.ts'));
    const moved = fingerprint(root);
    expect(moved).not.toBe(added);
    rmSync(join(root, 'contract/moved.ts'));
    expect(fingerprint(root)).not.toBe(moved);
  });
});
