/**
 * Traces: with an exporter configured (here an in-memory one), one client operation through the
 * gateway is one trace holding the operation, each subgraph fetch, the subgraph serving it (the
 * context sent in `traceparent`) and each upstream REST call with its area, endpoint template,
 * status, euro and cache source; the response names the trace in `extensions.traceId`, and the log
 * lines written meanwhile carry it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { MemoryLogWriter } from '@graphql-hive/logger';
import { setupTracing } from '../subgraphs/runtime/tracing.ts';
import { logLevelOfEnv, logTo, setLogLevel } from '../subgraphs/runtime/log.ts';
import { startTestStack, type TestStack } from './support/stack.ts';

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
async function until<T>(what: string, get: () => T | undefined): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

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
    const upstream = await until('the upstream span', () => exporter.getFinishedSpans().find((s) => s.spanContext().traceId === traceId && s.attributes['openapi.area'] === 'company'));
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
  });
});
