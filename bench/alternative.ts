/**
 * The layer beside the alternative a user would pick (`npm run bench`, or alone:
 * `npx tsx bench/alternative.ts`): GraphQL Mesh's OpenAPI source over the vendor's company spec,
 * composed by `mesh-compose` (`bench/mesh.config.ts`) into a supergraph served by the Hive gateway
 * runtime with the REST transport, in three variants:
 *
 * - **mesh**: as composed, nothing else;
 * - **mesh tuned**: the runtime's response cache keyed per `Authorization` (one session per tenant)
 *   and its inbound in-flight de-duplication;
 * - **mesh tuned, fixed spec**: tuned, over a copy of the spec whose IT-advanced answer is fixed by
 *   hand (the vendor spec says `data` is one object; the service answers an array), so that a
 *   profile buys IT-advanced + IT-stakeholders as the layer does. With the vendor spec IT-advanced
 *   comes back empty, so the profile takes IT-stakeholders + IT-marketing, and the walk IT-shareholders
 *   + IT-address for the root's name.
 *
 * plus the bare-gateway **baseline** of `speed.ts` (a Hive gateway with its response cache over a
 * yoga subgraph answering the layer's JSON after the same delay: no upstream, no euro).
 *
 * Every side runs in a process of its own (this file with `ALT_SIDE` set, under tsx, with `npm
 * start`'s heap flags), as does the emulator (`services/emulator.ts`): the server CPU per operation is
 * read from `/proc/<pid>/stat` of the side's process over the throughput run, so neither the client
 * nor the emulator is counted. All sides but the baseline call the same emulator with the caller's
 * bearer token. Upstream calls and euro per operation come from the emulator's call log and
 * `contract/prices.ts` over the sequential operations.
 *
 * Tasks, each at every upstream latency of `BENCH_ALT_LATENCIES` (default `0,<BENCH_UPSTREAM_LATENCY_MS>`):
 * - identity + address, company profile, ownership walk: **cold**, every operation by a tenant
 *   (an emulator token) that never asked before;
 * - burst: 20 identical profiles at once by a new tenant (`BENCH_ALT_BURSTS` rounds);
 * - warm: the same profile again and again by the same tenant.
 * The GraphQL differs per side (Mesh's generated schema has its own names): each task's query asks
 * each side for the same data, checked before measuring (every side's answer, reduced to one shape,
 * equals the layer's). Not the same on both sides:
 * - the Mesh walk is two operations (the shareholders, then the companies among them in one
 *   operation): the spec links no shareholder to a company;
 * - the layer buys IT-stakeholders by POST and callback (the emulator calls back after the upstream
 *   latency, as in `speed.ts`), Mesh by GET (same price, answered at once): at 40 ms the layer's
 *   profile waits two latencies, Mesh's one;
 * - the spec gives the managers' `roles` no schema: Mesh answers them as one JSON value;
 * - the tuned response cache keeps answers until evicted (no TTL), the layer's by its own policy;
 * - the burst's p50 and "p99" columns are `speed.ts`'s `burst`: each answer's arrival after the
 *   last upstream call returned (negative: answered before it, nothing shared), p50 and max; for
 *   the layer the callback it waits for is not a call of the log;
 * - the sides run from sources under tsx (the layer as `stack.ts` starts it, not `npm start`'s
 *   dist/), each with `npm start`'s heap flags.
 *
 * Environment: `BENCH_ALT_OPERATIONS` (sequential operations per row, default `BENCH_OPERATIONS`
 * or 40), `BENCH_ALT_THROUGHPUT_MS` (default `BENCH_THROUGHPUT_MS` or 3000), `BENCH_ALT_WARMUP_MS`
 * (untimed load before each throughput run, default 1000), `BENCH_CONCURRENCY` (default 16),
 * `BENCH_ALT_BURSTS` (default 5), `BENCH_ALT_LATENCIES`, `BENCH_ALT_SIDES` (comma list of
 * layer,baseline,mesh,mesh-tuned,mesh-fixed; default all). About 3 minutes, composition included, with
 * `BENCH_ALT_OPERATIONS=15 BENCH_ALT_THROUGHPUT_MS=1000 BENCH_ALT_WARMUP_MS=300 BENCH_ALT_BURSTS=3`.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Agent, request } from 'undici';
import type { Area } from '../emulator/core.ts';
import { burst, pct, PROFILE, START_FLAGS, sequentialLatencies, throughput, WALK, WALK_BASELINE, WALK_VAT, type Side } from './speed.ts';

const ROOT = resolve(fileURLToPath(import.meta.url), '../..');
const OPS = Number(process.env.BENCH_ALT_OPERATIONS ?? process.env.BENCH_OPERATIONS ?? 40);
const THROUGHPUT_MS = Number(process.env.BENCH_ALT_THROUGHPUT_MS ?? process.env.BENCH_THROUGHPUT_MS ?? 3000);
const WARMUP_MS = Number(process.env.BENCH_ALT_WARMUP_MS ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const BURSTS = Number(process.env.BENCH_ALT_BURSTS ?? 5);
const BURST_SIZE = 20;
const LATENCIES = (process.env.BENCH_ALT_LATENCIES ?? `0,${process.env.BENCH_UPSTREAM_LATENCY_MS ?? 40}`).split(',').map(Number);
/** The company every task asks about (its sole shareholder is a company). */
const VAT = WALK_VAT;

const KINDS = ['layer', 'baseline', 'mesh', 'mesh-tuned', 'mesh-fixed'] as const;
type Kind = (typeof KINDS)[number];
const LABEL: Record<Kind, string> = { layer: 'layer', baseline: 'baseline', mesh: 'mesh', 'mesh-tuned': 'mesh tuned', 'mesh-fixed': 'mesh tuned, fixed spec' };
/** The sides to run besides the layer (which always runs: the ratios are against it). */
const SIDES = ['layer', ...(process.env.BENCH_ALT_SIDES ?? KINDS.join(',')).split(',').map((s) => s.trim())].filter((k, i, all) => all.indexOf(k) === i) as Kind[];
for (const k of SIDES) if (!KINDS.includes(k)) throw new Error(`BENCH_ALT_SIDES: unknown side ${k}`);

// ---------------------------------------------------------------------------------------------
// The queries, per side

/** The layer's identity + address (as `run.ts` asks it). */
const IDENTITY_ADDRESS = `query($v: String!) { company(vatCode: $v) { companyName vatCode address { streetName zipCode town } } }`;

const IT_ADDRESS = (alias: string, arg: string, sel: string): string =>
  `${alias}: IT_address_by_vatCode_taxCode_or_id(vatCode_taxCode_or_id: ${arg}) { ... on IT_address_by_vatCode_taxCode_or_id_200_response { data { ${sel} } } }`;
const IT_STAKEHOLDERS = (sel: string): string =>
  `s: IT_stakeholders_by_vatCode_or_taxCode(vatCode_or_taxCode: $v) { ... on IT_stakeholders_by_vatCode_or_taxCode_200_response { data { ${sel} } } }`;
const IT_ADVANCED = (sel: string): string =>
  `a: IT_advanced_by_vatCode_taxCode_or_id(vatCode_taxCode_or_id: $v) { ... on IT_advanced_by_vatCode_taxCode_or_id_200_response { data { ${sel} } } }`;

const MESH_IDENTITY = `query($v: String!) { ${IT_ADDRESS('i', '$v', 'companyName vatCode address { registeredOffice { streetName zipCode town } }')} }`;
// The vendor spec gives the managers' `roles` no schema (a JSON scalar): the whole list comes back.
/** The vendor spec: IT-advanced answers nothing usable, so the balance sheet comes from IT-marketing. */
const MESH_PROFILE_PLAIN = `query($v: String!) { ${IT_STAKEHOLDERS('companyDetails { companyName } address { town } managers { roles } shareholders { percentShare }')}
  m: IT_marketing_by_vatCode_or_taxCode(vatCode_or_taxCode: $v) { ... on IT_marketing_by_vatCode_or_taxCode_200_response { data { ecofin { turnover netWorth } } } } }`;
/** The fixed spec: what the layer buys (IT-advanced + IT-stakeholders). */
const MESH_PROFILE_FIXED = `query($v: String!) { ${IT_ADVANCED('companyName address { registeredOffice { town } } balanceSheets { last { turnover netWorth } }')}
  ${IT_STAKEHOLDERS('managers { roles } shareholders { percentShare }')} }`;
/** The walk's first step: the company's name and its shareholders. */
const MESH_WALK_PLAIN = `query($v: String!) { ${IT_ADDRESS('n', '$v', 'companyName')}
  sh: IT_shareholders_by_vatCode_taxCode_or_id(vatCode_taxCode_or_id: $v) { ... on IT_shareholders_by_vatCode_taxCode_or_id_200_response { data { companyName taxCode percentShare } } } }`;
const MESH_WALK_FIXED = `query($v: String!) { ${IT_ADVANCED('companyName shareHolders { companyName taxCode percentShare }')} }`;

interface Queries {
  identity: string;
  profile: string;
  walk: string;
}
const QUERIES: Record<Kind, Queries> = {
  layer: { identity: IDENTITY_ADDRESS, profile: PROFILE, walk: WALK },
  baseline: { identity: IDENTITY_ADDRESS, profile: PROFILE, walk: WALK_BASELINE },
  mesh: { identity: MESH_IDENTITY, profile: MESH_PROFILE_PLAIN, walk: MESH_WALK_PLAIN },
  'mesh-tuned': { identity: MESH_IDENTITY, profile: MESH_PROFILE_PLAIN, walk: MESH_WALK_PLAIN },
  'mesh-fixed': { identity: MESH_IDENTITY, profile: MESH_PROFILE_FIXED, walk: MESH_WALK_FIXED },
};

interface Shareholder {
  companyName?: string | null;
  taxCode?: string | null;
}
/** The company shareholders of a Mesh walk's first answer (persons have no company name). */
function companyOwners(data: unknown): string[] {
  const d = data as { sh?: { data?: Shareholder[] | null }; a?: { data?: Array<{ shareHolders?: Shareholder[] | null }> | null } };
  const holders = d.sh?.data ?? d.a?.data?.[0]?.shareHolders ?? [];
  return [...new Set(holders.filter((h) => h.companyName && h.taxCode).map((h) => h.taxCode!))];
}

/** The value at a dot path (`a.0.b`), or undefined. */
function at(value: unknown, path: string): unknown {
  let v = value;
  for (const k of path.split('.')) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/**
 * What a task's answer says, in one shape for every side (checked equal to the layer's before
 * measuring, so that every side is asked for the same data).
 */
function summary(kind: Kind, task: keyof Queries, data: unknown): unknown {
  const mesh = kind.startsWith('mesh');
  const fixed = kind === 'mesh-fixed';
  if (task === 'identity') {
    const c = mesh ? at(data, 'i.data.0') : at(data, 'company');
    const a = mesh ? at(c, 'address.registeredOffice') : at(c, 'address');
    return [at(c, 'companyName'), at(c, 'vatCode'), at(a, 'streetName'), at(a, 'zipCode'), at(a, 'town')];
  }
  if (task === 'profile') {
    const roles = (managers: unknown): unknown[] => list(managers).map((m) => list(at(m, 'roles')).map((r) => at(r, 'role.code')));
    const shares = (holders: unknown): unknown[] => list(holders).map((h) => at(h, 'percentShare'));
    if (!mesh) {
      const c = at(data, 'company');
      return [at(c, 'companyName'), at(c, 'address.town'), roles(at(c, 'managers')), shares(at(c, 'shareholders')), at(c, 'ecofin.turnover'), at(c, 'ecofin.netWorth')];
    }
    const s = at(data, 's.data');
    if (fixed) {
      const a = at(data, 'a.data.0');
      return [
        at(a, 'companyName'),
        at(a, 'address.registeredOffice.town'),
        roles(at(s, 'managers')),
        shares(at(s, 'shareholders')),
        at(a, 'balanceSheets.last.turnover'),
        at(a, 'balanceSheets.last.netWorth'),
      ];
    }
    return [
      at(s, 'companyDetails.companyName'),
      at(s, 'address.town'),
      roles(at(s, 'managers')),
      shares(at(s, 'shareholders')),
      at(data, 'm.data.ecofin.turnover'),
      at(data, 'm.data.ecofin.netWorth'),
    ];
  }
  if (!mesh) {
    const owners = list(at(data, 'company.shareholders')).flatMap((h) =>
      list(at(h, 'owners'))
        .filter((o) => at(o, 'company'))
        .map((o) => `${String(at(o, 'company.companyName'))} (${String(at(o, 'company.address.town'))})`),
    );
    return [at(data, 'company.companyName'), owners.sort()];
  }
  const owners = Object.entries(data as Record<string, unknown>)
    .filter(([k]) => /^o\d+$/.test(k))
    .map(([, v]) => `${String(at(v, 'data.0.companyName'))} (${String(at(v, 'data.0.address.registeredOffice.town'))})`);
  return [fixed ? at(data, 'a.data.0.companyName') : at(data, 'n.data.0.companyName'), owners.sort()];
}

// ---------------------------------------------------------------------------------------------
// A side's process (ALT_SIDE set): serves until SIGTERM

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function bodyOf(req: IncomingMessage): Promise<Record<string, unknown>> {
  let raw = '';
  for await (const chunk of req) raw += String(chunk);
  return raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
}

async function serveSide(kind: Kind): Promise<void> {
  const emulatorUrl = process.env.ALT_EMULATOR_URL!;
  let graphqlUrl: string;
  let control = '-';
  let close: () => Promise<void>;
  if (kind === 'layer') {
    const { startStack } = await import('../stack.ts');
    const stack = await startStack({ env: process.env, port: 0, emulatorUrl });
    graphqlUrl = stack.gateway.graphqlUrl;
    close = () => stack.close();
  } else if (kind === 'baseline') {
    const { startBaselineSide } = await import('./speed.ts');
    const side = await startBaselineSide(JSON.parse(process.env.ALT_SAMPLES ?? '{}') as { profile: unknown; walk: unknown; identity?: unknown }, 0);
    graphqlUrl = side.graphqlUrl;
    // Its upstream is in this process: the parent reads its calls and sets its delay here.
    const ctl = createServer((req, res) => {
      void (async () => {
        const body = await bodyOf(req);
        if (req.url === '/latency') await side.setLatency(Number(body.ms ?? 0));
        if (req.url === '/calls' && req.method === 'DELETE') await side.resetCalls();
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(req.url === '/calls' && req.method === 'GET' ? await side.calls() : {}));
      })();
    });
    control = await listen(ctl);
    close = async () => {
      ctl.closeAllConnections();
      ctl.close();
      await side.close();
    };
  } else {
    const { createGatewayRuntime } = await import('@graphql-hive/gateway-runtime');
    const rest = (await import('@graphql-mesh/transport-rest')).default;
    const { lruKeyValueCache } = await import('./speed.ts');
    const tuned = kind !== 'mesh';
    const runtime = createGatewayRuntime({
      supergraph: readFileSync(process.env.ALT_SUPERGRAPH!, 'utf8'),
      transports: { rest },
      logging: false,
      landingPage: false,
      graphqlEndpoint: '/graphql',
      ...(tuned
        ? {
            cache: lruKeyValueCache(),
            // One cache session per tenant: its bearer token.
            responseCaching: { session: (req: Request) => req.headers.get('authorization') },
            inboundInflightRequestDeduplication: true,
          }
        : {}),
    });
    const server = createServer(runtime.requestListener);
    graphqlUrl = `${await listen(server)}/graphql`;
    close = async () => {
      await runtime.dispose();
      server.closeAllConnections();
      server.close();
    };
  }
  process.once('SIGTERM', () => void close().then(() => process.exit(0)));
  console.log(`alt side ready: ${graphqlUrl} control ${control}`);
}

// ---------------------------------------------------------------------------------------------
// The bench

const agent = new Agent({ connections: 256, pipelining: 1 });
const CLOCK_TICK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
/** CPU time (ms) a process has used so far: utime + stime of /proc/<pid>/stat. */
const cpuOf = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / CLOCK_TICK;
};

async function json(url: string, method: 'GET' | 'POST' | 'DELETE' = 'GET', body?: unknown): Promise<unknown> {
  const res = await request(url, {
    method,
    dispatcher: agent,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${await res.body.text()}`);
  return res.body.json();
}

interface EmuCall {
  area: Area | null;
  method: string;
  path: string;
  at: string;
  ms: number;
  status: number;
}

/** Fresh emulator tokens: a tenant that never asked. */
class Tenants {
  private pool: string[] = [];
  private readonly used: string[] = [];
  /** Operations that had to reuse a tenant (the pool ran dry): printed, as they are not cold. */
  reused = 0;
  constructor(private readonly emulator: string) {}
  async fill(n: number): Promise<void> {
    const missing = Math.min(30_000, n) - this.pool.length;
    for (let i = 0; i < missing; i += 64) {
      const batch = await Promise.all(
        Array.from(
          { length: Math.min(64, missing - i) },
          async () => ((await json(`${this.emulator}/_emulator/tokens`, 'POST', { credit: 1_000_000 })) as { token: string }).token,
        ),
      );
      this.pool.push(...batch);
    }
  }
  next(): string {
    const t = this.pool.pop();
    if (t !== undefined) {
      this.used.push(t);
      return t;
    }
    this.reused++;
    return this.used[this.reused % this.used.length];
  }
}

interface Running {
  kind: Kind;
  pid: number;
  side: Side;
  kill(): Promise<void>;
}

/** Operations carry their tenant as the variable `__token`: sent as `Authorization`, never as a variable. */
function sideOf(kind: Kind, graphqlUrl: string, control: string, emulator: string): Side {
  const post = async (query: string, variables: Record<string, unknown>, token: string) => {
    const res = await request(graphqlUrl, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.body.json()) as { data?: unknown; errors?: unknown };
    return { body, at: Date.now() };
  };
  const emu = `${emulator}/_emulator`;
  const setEmulatorLatency = async (ms: number): Promise<void> => {
    // Every call answers after `ms`, and a composite tier bought by POST (the layer's) calls back after `ms` too.
    await json(`${emu}/latency`, 'POST', { area: 'company', ms });
    await json(`${emu}/company/async`, 'POST', { ms });
  };
  return {
    name: LABEL[kind],
    graphqlUrl,
    async send(query, vars) {
      const { __token, ...variables } = vars;
      const token = String(__token);
      // The baseline has no tenants: a new tenant is a new cache key (a variable its subgraph ignores).
      if (kind === 'baseline') return post(query, { ...variables, gen: token }, token);
      const first = await post(query, variables, token);
      const owners = query === MESH_WALK_PLAIN || query === MESH_WALK_FIXED ? companyOwners(first.body.data) : [];
      if (first.body.errors || owners.length === 0) return first;
      // The Mesh walk's second step: the company shareholders' name and town, in one operation.
      const second = await post(
        `query(${owners.map((_, i) => `$o${i}: String!`).join(', ')}) { ${owners.map((_, i) => IT_ADDRESS(`o${i}`, `$o${i}`, 'companyName address { registeredOffice { town } }')).join(' ')} }`,
        Object.fromEntries(owners.map((o, i) => [`o${i}`, o])),
        token,
      );
      return { body: { data: { ...(first.body.data as object), ...(second.body.data as object) }, errors: second.body.errors }, at: second.at };
    },
    async calls() {
      if (kind === 'baseline') return (await json(`${control}/calls`)) as Array<{ returnedAt: number }>;
      const all = (await json(`${emu}/calls`)) as EmuCall[];
      return all.filter((c) => c.area !== null).map((c) => ({ returnedAt: Date.parse(c.at) + c.ms }));
    },
    async resetCalls() {
      await json(kind === 'baseline' ? `${control}/calls` : `${emu}/calls`, 'DELETE');
    },
    async setLatency(ms) {
      if (kind === 'baseline') await json(`${control}/latency`, 'POST', { ms });
      else await setEmulatorLatency(ms);
    },
    async clearCaches() {
      // Nothing: a cold operation is a new tenant.
    },
    async close() {
      // The process is killed by its owner.
    },
  };
}

async function startSide(kind: Kind, emulator: string, env: NodeJS.ProcessEnv): Promise<Running> {
  const { spawnNode } = await import('../services/processes.ts');
  const proc = await spawnNode(
    kind,
    [...START_FLAGS, '--import', 'tsx', fileURLToPath(import.meta.url)],
    { ...env, ALT_SIDE: kind, ALT_EMULATOR_URL: emulator },
    /alt side ready: (\S+ control \S+)/,
  );
  const [graphqlUrl, , control] = proc.url.split(' ');
  return { kind, pid: proc.proc.pid!, side: sideOf(kind, graphqlUrl, control, emulator), kill: () => proc.kill() };
}

/** Composes the spec at `oas` with `mesh-compose` into a supergraph file, REST calls to `endpoint`. */
async function compose(oas: string, endpoint: string, out: string): Promise<void> {
  await promisify(execFile)(resolve(ROOT, 'node_modules/.bin/mesh-compose'), ['-c', 'bench/mesh.config.ts', '-o', out], {
    cwd: ROOT,
    env: { ...process.env, MESH_OAS: oas, MESH_ENDPOINT: endpoint },
    maxBuffer: 16 * 2 ** 20,
  });
}

/** The vendor spec with IT-advanced's answer fixed: `data` is an array of `Advanced`, as the service answers. */
function fixedSpec(vendor: string): string {
  const spec = JSON.parse(readFileSync(vendor, 'utf8')) as {
    paths: Record<string, { get: { responses: Record<string, { content: Record<string, { schema: { properties: Record<string, unknown> } }> }> } }>;
  };
  const props = spec.paths['/IT-advanced/{vatCode_taxCode_or_id}'].get.responses['200'].content['application/json'].schema.properties;
  props.data = { type: 'array', items: { $ref: '#/components/schemas/Advanced' } };
  return JSON.stringify(spec);
}

export interface AlternativeRow {
  task: string;
  latencyMs: number;
  side: Kind;
  calls: number;
  /** Per operation; NaN for the baseline (no upstream). */
  euro: number;
  p50: number;
  p99: number;
  rps: number;
  cpuMs: number;
  /** Cold operations that reused a tenant (the pool of new tokens ran dry): not cold. */
  reused?: number;
}

/** A row from one task's readings on one side: upstream calls and euro over OPS sequential operations, their latencies, and a throughput run with the server's CPU over it. */
function timedRow(task: string, latencyMs: number, side: Kind, up: { n: number; euro: number }, lat: number[], t: { rps: number }, cpu: number, reused?: number): AlternativeRow {
  return {
    task,
    latencyMs,
    side,
    calls: up.n / OPS,
    euro: side === 'baseline' ? NaN : up.euro / OPS,
    p50: pct(lat, 50),
    p99: pct(lat, 99),
    rps: t.rps,
    cpuMs: cpu / Math.max(1, (t.rps * THROUGHPUT_MS) / 1000),
    ...(reused === undefined ? {} : { reused }),
  };
}

export async function runAlternativeBench(): Promise<AlternativeRow[]> {
  const { baseEnv, spawnService } = await import('../services/processes.ts');
  const { priceOf } = await import('../contract/prices.ts');
  const { DEFAULT_TOKEN } = await import('../emulator/server.ts');
  // Every cold operation is a new token, up to 30,000 in the pool (`Tenants`): the emulator keeps
  // 10,000 by default and answers a forgotten one 401, which stopped the run on the fast sides.
  const emulator = await spawnService('emulator', 'emulator', [], baseEnv({ EMULATOR_PORT: '0', EMULATOR_MAX_TOKENS: '100000' }));
  const tmp = mkdtempSync(join(tmpdir(), 'alt-bench-'));
  const running: Running[] = [];
  const rows: AlternativeRow[] = [];
  try {
    const vendor = process.env.ALT_COMPANY_OAS ?? '/work/shared/upstream/oas/company.openapi.json';
    writeFileSync(join(tmp, 'company.fixed.json'), fixedSpec(vendor));
    const wantsMesh = SIDES.some((k) => k.startsWith('mesh'));
    if (wantsMesh) {
      const t0 = performance.now();
      await Promise.all([
        compose(vendor, `${emulator.url}/company`, join(tmp, 'mesh.graphql')),
        compose(join(tmp, 'company.fixed.json'), `${emulator.url}/company`, join(tmp, 'mesh-fixed.graphql')),
      ]);
      console.log(`[alternative] mesh-compose: both supergraphs in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }
    const env = baseEnv({ OPENAPI_ENV: 'emulator' });
    const tenants = new Tenants(emulator.url);
    // The layer first: the baseline answers its JSON.
    const layer = await startSide('layer', emulator.url, env);
    running.push(layer);
    const sample = async (q: string): Promise<unknown> => {
      const r = await layer.side.send(q, { v: VAT, __token: DEFAULT_TOKEN });
      if (r.body.errors) throw new Error(`layer: ${JSON.stringify(r.body.errors).slice(0, 300)}`);
      return (r.body.data as { company: unknown }).company;
    };
    const samples = { profile: await sample(PROFILE), walk: await sample(WALK), identity: await sample(IDENTITY_ADDRESS) };
    for (const kind of SIDES) {
      if (kind === 'layer') continue;
      const supergraph = join(tmp, kind === 'mesh-fixed' ? 'mesh-fixed.graphql' : 'mesh.graphql');
      running.push(await startSide(kind, emulator.url, { ...env, ALT_SAMPLES: JSON.stringify(samples), ALT_SUPERGRAPH: supergraph }));
    }

    const upstream = async (side: Side): Promise<{ n: number; euro: number }> => {
      const all = (await json(`${emulator.url}/_emulator/calls`)) as EmuCall[];
      const paid = all.filter((c) => c.area !== null);
      return { n: side.name === 'baseline' ? (await side.calls()).length : paid.length, euro: paid.reduce((s, c) => s + priceOf(c.area!, c.method, c.path), 0) };
    };

    // Every side answers each task with the same data as the layer (the queries differ).
    for (const task of ['identity', 'profile', 'walk'] as const) {
      const said = new Map<Kind, string>();
      for (const r of running) {
        const a = await r.side.send(QUERIES[r.kind][task], { v: VAT, __token: DEFAULT_TOKEN });
        if (a.body.errors) throw new Error(`${r.side.name}, ${task}: ${JSON.stringify(a.body.errors).slice(0, 300)}`);
        said.set(r.kind, JSON.stringify(summary(r.kind, task, a.body.data)));
      }
      const layerSaid = said.get('layer');
      for (const [kind, s] of said)
        if (s !== layerSaid) throw new Error(`${LABEL[kind]} does not answer ${task} as the layer does:\n  layer: ${layerSaid}\n  ${LABEL[kind]}: ${s}`);
      console.log(`[alternative] ${task}: every side answers ${layerSaid}`);
    }

    for (const latencyMs of LATENCIES) {
      for (const r of running) await r.side.setLatency(latencyMs);
      for (const task of ['identity', 'profile', 'walk'] as const) {
        for (const r of running) {
          const q = QUERIES[r.kind][task];
          const cold = (): Record<string, unknown> => ({ v: VAT, __token: tenants.next() });
          // An untimed run first (JIT, connections), under the load of the timed one.
          await tenants.fill(OPS);
          const t1 = performance.now();
          await sequentialLatencies(r.side, 3, q, cold);
          await tenants.fill(Math.ceil((CONCURRENCY * WARMUP_MS) / Math.max(1, (performance.now() - t1) / 3)));
          const warm = await throughput(r.side, q, cold, CONCURRENCY, WARMUP_MS);
          // The untimed run is the slower (JIT): three times its rate, at least 200 ops/s.
          await tenants.fill(OPS + Math.ceil((Math.max(200, 3 * warm.rps) * THROUGHPUT_MS) / 1000) + CONCURRENCY);
          const reused0 = tenants.reused;
          await r.side.resetCalls();
          const lat = await sequentialLatencies(r.side, OPS, q, cold);
          const up = await upstream(r.side);
          const cpu0 = cpuOf(r.pid);
          const t = await throughput(r.side, q, cold, CONCURRENCY, THROUGHPUT_MS);
          const cpu = cpuOf(r.pid) - cpu0;
          const name = { identity: 'identity + address', profile: 'company profile', walk: 'ownership walk' }[task];
          rows.push(timedRow(name, latencyMs, r.kind, up, lat, t, cpu, tenants.reused - reused0));
        }
      }
      // Bursts: 20 identical profiles at once by a new tenant.
      for (const r of running) {
        const q = QUERIES[r.kind].profile;
        await tenants.fill(BURSTS + 1);
        await burst(r.side, BURST_SIZE, q, { v: VAT, __token: tenants.next() }); // untimed (JIT)
        const p50s: number[] = [];
        let max = 0;
        let calls = 0;
        let euro = 0;
        const cpu0 = cpuOf(r.pid);
        const t0 = performance.now();
        for (let i = 0; i < BURSTS; i++) {
          await r.side.resetCalls();
          const b = await burst(r.side, BURST_SIZE, q, { v: VAT, __token: tenants.next() });
          const up = await upstream(r.side);
          p50s.push(b.p50);
          max = Math.max(max, b.max);
          calls += b.calls;
          euro += up.euro;
        }
        const elapsed = performance.now() - t0;
        rows.push({
          task: `burst of ${BURST_SIZE} identical profiles (answer after the last upstream return: p50, max)`,
          latencyMs,
          side: r.kind,
          calls: calls / (BURSTS * BURST_SIZE),
          euro: r.kind === 'baseline' ? NaN : euro / (BURSTS * BURST_SIZE),
          p50: pct(p50s, 50),
          p99: max,
          rps: (BURSTS * BURST_SIZE) / (elapsed / 1000),
          cpuMs: (cpuOf(r.pid) - cpu0) / (BURSTS * BURST_SIZE),
        });
      }
      // Warm: the same profile by the same tenant, again and again.
      for (const r of running) {
        const q = QUERIES[r.kind].profile;
        await tenants.fill(1);
        const same = { v: VAT, __token: tenants.next() };
        const first = await r.side.send(q, same);
        if (first.body.errors) throw new Error(`${r.side.name}: ${JSON.stringify(first.body.errors).slice(0, 300)}`);
        await r.side.resetCalls();
        const lat = await sequentialLatencies(r.side, OPS, q, () => same);
        const up = await upstream(r.side);
        await throughput(r.side, q, () => same, CONCURRENCY, WARMUP_MS);
        const cpu0 = cpuOf(r.pid);
        const t = await throughput(r.side, q, () => same, CONCURRENCY, THROUGHPUT_MS);
        const cpu = cpuOf(r.pid) - cpu0;
        rows.push(timedRow('warm repeat of the same profile', latencyMs, r.kind, up, lat, t, cpu));
      }
    }
    if (tenants.reused > 0) console.log(`[alternative] note: ${tenants.reused} operations reused a tenant (the pool of new tokens ran dry): those were not cold`);
  } finally {
    for (const r of running) await r.kill().catch(() => undefined);
    await emulator.kill();
    rmSync(tmp, { recursive: true, force: true });
  }
  printAlternativeRows(rows);
  return rows;
}

const ratio = (a: number, b: number): string => (Number.isFinite(a / b) ? (a / b).toFixed(2) : '—');

export function printAlternativeRows(rows: AlternativeRow[]): void {
  console.log(
    `\nThe alternative: GraphQL Mesh (OpenAPI source over the vendor's company spec, mesh-compose, Hive gateway runtime + REST transport) beside the layer and the bare-gateway baseline; each side in its own process, CPU of that process only. ${OPS} sequential operations per row (cold: each by a new tenant), ${CONCURRENCY} clients for ${THROUGHPUT_MS} ms for throughput; bursts: ${BURSTS} rounds.\n`,
  );
  console.log('| task | upstream | side | upstream calls/op | €/op | p50 | p99 | ops/s | server CPU/op | layer ÷ side: €/op, p50, ops/s, CPU/op |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const l = rows.find((x) => x.task === r.task && x.latencyMs === r.latencyMs && x.side === 'layer');
    const ratios = r.side === 'layer' || !l ? '' : `${ratio(l.euro, r.euro)}, ${ratio(l.p50, r.p50)}, ${ratio(l.rps, r.rps)}, ${ratio(l.cpuMs, r.cpuMs)}`;
    console.log(
      `| ${r.task} | ${r.latencyMs} ms | ${LABEL[r.side]}${r.reused ? ` (${r.reused} operations by a tenant that had asked)` : ''} | ${r.calls.toFixed(2)} | ${Number.isNaN(r.euro) ? '—' : r.euro.toFixed(3)} | ${r.p50.toFixed(1)} ms | ${r.p99.toFixed(1)} ms | ${r.rps.toFixed(0)} | ${r.cpuMs.toFixed(2)} ms | ${ratios} |`,
    );
  }
}

if (process.env.ALT_SIDE) {
  await serveSide(process.env.ALT_SIDE as Kind);
} else if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  await runAlternativeBench();
  await agent.close();
}
