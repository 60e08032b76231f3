/**
 * Traces: with an exporter configured (here an in-memory one), one client operation through the
 * gateway is one trace holding the operation, each subgraph fetch, the subgraph serving it (the
 * context sent in `traceparent`) and each upstream REST call with its area, endpoint template,
 * status, euro and cache source; the response names the trace in `extensions.traceId`, and the log
 * lines written meanwhile carry it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { MemoryLogWriter } from '@graphql-hive/logger';
import { setupTracing } from '../../../platform/tracing.ts';
import { logLevelOfEnv, logTo, setLogLevel } from '../../../platform/log.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { createServer, type Server } from 'node:http';
import { startGateway } from '../../../gateway/index.ts';
import { gatewayOptionsFromEnv } from '../../../services/build.ts';
import { baseEnv, spawnService, type Service } from '../../../services/processes.ts';
import { SUBGRAPH_NAMES } from '../../../subgraphs/index.ts';
import { waitFor } from '../../support/wait.ts';

const exporter = new InMemorySpanExporter();
let t: TestStack;
let token: string;

beforeAll(async () => {
  expect(await setupTracing({ exporter, env: {} })).toBe(true);
  t = await startTestStack();
  token = await t.createToken(100);
}, 120_000);

afterAll(async () => {
  await t?.close();
});

/** Polls until `check` holds (spans end shortly after the response is sent). */
const until = <T>(what: string, get: () => T | undefined): Promise<T> => waitFor(get, what, { every: 20 });

const parentOf = (s: ReadableSpan): string | undefined => s.parentSpanContext?.spanId;

describe('traces', () => {
  it('one trace: operation → subgraph fetch → subgraph → upstream call with its attributes', async () => {
    const memory = new MemoryLogWriter();
    logTo(memory);
    setLogLevel('debug');
    let res;
    try {
      res = await t.gql('query Traced { company(vatCode: "12485671007") { companyName } }', {}, { authorization: `Bearer ${token}` });
    } finally {
      logTo(null);
      setLogLevel(logLevelOfEnv(process.env));
    }
    expect(res.errors).toBeUndefined();
    const traceId = (res.extensions as { traceId?: string } | undefined)?.traceId;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    // The runtime's debug lines of the operation (each subgraph fetch) name its trace.
    const fetchLogs = memory.logs.filter((l) => l.msg?.includes('[useFetchDebug]'));
    expect(fetchLogs.length).toBeGreaterThan(0);
    expect(fetchLogs.filter((l) => (l.attrs as { traceId?: string } | undefined)?.traceId !== traceId)).toEqual([]);
    // And the operation's id, the one its subgraph requests are charged to.
    const operationIds = new Set(fetchLogs.map((l) => (l.attrs as { operationId?: string } | undefined)?.operationId));
    expect(operationIds.size).toBe(1);
    expect([...operationIds][0]).toMatch(/^[0-9a-f-]{36}$/);
    const upstream = await until('the upstream span', () =>
      exporter.getFinishedSpans().find((s) => s.spanContext().traceId === traceId && s.attributes['openapi.area'] === 'company'),
    );
    const spans = await until('the root span', () => {
      const all = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
      return all.some((s) => parentOf(s) === undefined) ? all : undefined;
    });
    const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
    const chain: string[] = [];
    for (let s: ReadableSpan | undefined = upstream; s; s = byId.get(parentOf(s) ?? '')) chain.unshift(s.name);
    // Every span up to the root is in the one trace.
    expect(byId.get(parentOf(spans.find((s) => parentOf(s) === undefined)!) ?? '')).toBeUndefined();
    expect(chain[0]).toMatch(/^POST \/graphql|^http/);
    expect(chain.some((n) => /^graphql\.operation Traced/.test(n))).toBe(true);
    expect(chain.some((n) => /^subgraph\.execute \(company\)/.test(n))).toBe(true);
    expect(chain).toContain('subgraph company');
    expect(chain.at(-1)).toBe(upstream.name);
    expect(chain.indexOf('subgraph company')).toBeGreaterThan(chain.findIndex((n) => n.startsWith('subgraph.execute')));
    expect(upstream.attributes).toMatchObject({ 'openapi.area': 'company', 'openapi.cache_source': 'network', 'http.request.method': 'GET', 'http.response.status_code': 200 });
    expect(upstream.attributes['openapi.endpoint']).toMatch(/^IT-[a-z]+\/\{\w+\}$/);
    expect(typeof upstream.attributes['openapi.euro']).toBe('number');
    expect(res.extensions?.cost?.euro).toBe(upstream.attributes['openapi.euro']);

    // The same again: answered without an upstream call; any upstream span it has says its source.
    const again = await t.gql('query TracedAgain { company(vatCode: "12485671007") { companyName } }', {}, { authorization: `Bearer ${token}` });
    const againId = (again.extensions as { traceId?: string } | undefined)?.traceId;
    expect(againId).toMatch(/^[0-9a-f]{32}$/);
    expect(againId).not.toBe(traceId);
    const cached = await until('the cache span', () => exporter.getFinishedSpans().find((s) => s.spanContext().traceId === againId && s.attributes['openapi.area'] === 'company'));
    expect(cached.attributes).toMatchObject({ 'openapi.cache_source': 'cache', 'openapi.euro': 0 });

    // Answers that never execute name their trace too: a parse error, a validation error, an
    // unknown persisted query.
    for (const body of [{ query: '{ company(' }, { query: '{ nope }' }, { extensions: { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } } }]) {
      const res = await request(t.url + '/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const answer = (await res.body.json()) as { errors?: unknown[]; extensions?: { traceId?: string } };
      expect(answer.errors?.length, JSON.stringify(body)).toBeGreaterThan(0);
      expect(answer.extensions?.traceId, JSON.stringify(answer)).toMatch(/^[0-9a-f]{32}$/);
    }
  });
});

/** A span as OTLP/HTTP JSON carries it (ids in hex). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
}

describe('traces across processes', () => {
  let receiver: Server;
  let subgraph: Service | undefined;
  const received: OtlpSpan[] = [];

  afterAll(async () => {
    await subgraph?.kill('SIGKILL');
    await new Promise((r) => receiver?.close(r));
  }, 120_000);

  it("a subgraph service started with OTEL_EXPORTER_OTLP_ENDPOINT exports its spans under the gateway's trace (traceparent)", async () => {
    // An OTLP/HTTP receiver on loopback (JSON, as the exporter sends it).
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (req.url === '/v1/traces') {
          const doc = JSON.parse(body) as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: OtlpSpan[] }> }> };
          for (const rs of doc.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) received.push(...(ss.spans ?? []));
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const otlp = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;

    // The company subgraph in a process of its own (no shared AsyncLocalStorage with this one),
    // traces on from its environment alone.
    const secret = 'tracing-test-secret-0123456789';
    subgraph = await spawnService(
      'company',
      'subgraph',
      ['company'],
      baseEnv({
        LAYER_SECRET: secret,
        OPENAPI_EMULATOR_URL: t.stack.emulatorUrl!,
        PUBLIC_URL: 'http://127.0.0.1:1',
        SUBGRAPH_PORT: '0',
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp,
        OTEL_BSP_SCHEDULE_DELAY: '50',
      }),
    );
    // A gateway in this process (traces on, in memory) over it; the other subgraphs are the test stack's.
    const urls = Object.fromEntries(SUBGRAPH_NAMES.map((n) => [n, n === 'company' ? `${subgraph!.url}/company/graphql` : t.stack.subgraphs.graphqlUrl(n)]));
    const gateway = await startGateway(gatewayOptionsFromEnv(baseEnv({ LAYER_SECRET: secret }), urls, { port: 0 }));
    try {
      const res = await request(gateway.graphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query: 'query Across { company(vatCode: "03456783053") { companyName } }' }),
      });
      const body = (await res.body.json()) as { errors?: unknown; extensions?: { traceId?: string } };
      expect(body.errors).toBeUndefined();
      const traceId = body.extensions?.traceId;
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
      // The subgraph process's server span: same trace, its parent the gateway's fetch to it.
      const served = await until("the subgraph process's span", () => received.find((s) => s.traceId === traceId && s.name === 'subgraph company'));
      const fetches = await until("the gateway's fetch span", () => {
        const f = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
        return f.some((s) => s.spanContext().spanId === served.parentSpanId) ? f : undefined;
      });
      const parent = fetches.find((s) => s.spanContext().spanId === served.parentSpanId)!;
      expect(parent.name).toMatch(/^http\.fetch|^POST|^subgraph\.execute/);
      // And its upstream call, under it, in the same trace.
      const upstream = await until("the subgraph process's upstream span", () =>
        received.find((s) => s.traceId === traceId && s.parentSpanId === served.spanId && s.name.includes('company')),
      );
      expect(upstream.name).toMatch(/^GET company IT-/);
      // The subgraph service's own /metrics counts that call: one sent to company, the one its span shows.
      const page = await request(`${subgraph.url}/metrics`);
      const text = await page.body.text();
      expect(page.statusCode).toBe(200);
      const sent = [...text.matchAll(/^openapi_upstream_calls_total\{(.*)\} (\d+)$/gm)].filter((m) => m[1].includes('source="network"'));
      expect(sent.map((m) => [/endpoint="([^"]*)"/.exec(m[1])![1], Number(m[2])])).toEqual([[upstream.name.split(' ')[2], 1]]);
      expect(text).not.toContain('03456783053');
    } finally {
      await gateway.close();
    }
  }, 120_000);
});
