/**
 * `/metrics` after a scenario through the gateway: the counts are exact and agree with what the
 * client was told in `extensions.cost` and with the calls the emulator received. One process: the
 * gateway's page holds the subgraphs' counts too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startTestStack, type TestStack } from './support/stack.ts';

let t: TestStack;
let token: string;

beforeAll(async () => {
  t = await startTestStack({ OPENAPI_MAX_EURO_PER_OPERATION: '5' });
  token = await t.createToken(100);
}, 120_000);

afterAll(async () => {
  await t?.close();
});

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

async function scrape(url: string): Promise<{ contentType: string; samples: Sample[]; text: string }> {
  const res = await request(`${url}/metrics`);
  const text = await res.body.text();
  expect(res.statusCode).toBe(200);
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2]!;
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return { contentType: String(res.headers['content-type']), samples, text };
}

/** The sum of the samples of `name` whose labels include `where`. */
const sum = (samples: Sample[], name: string, where: Record<string, string> = {}): number =>
  samples.filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);

const COMPANY = 'query CompanyName($vat: String!) { company(vatCode: $vat) { companyName } }';

describe('/metrics', () => {
  it('counts operations, upstream calls and euro, cache hits, budgets refused and callbacks exactly', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const before = (await scrape(t.url)).samples;
    await t.clearCalls();

    // Bought once; the same operation again (the gateway's answer cache, when it has one, or the
    // upstream cache); another document asking the same (the upstream cache).
    const first = await t.gql(COMPANY, { vat: '12485671007' }, auth);
    expect(first.errors).toBeUndefined();
    const again = await t.gql(COMPANY, { vat: '12485671007' }, auth);
    expect(again.errors).toBeUndefined();
    expect(again.extensions!.cost!.upstreamCalls).toBe(0);
    const upstreamCacheBefore = sum((await scrape(t.url)).samples, 'openapi_upstream_calls_total', { source: 'cache' });
    const second = await t.gql(COMPANY.replace('CompanyName', 'CompanyAgain'), { vat: '12485671007' }, auth);
    expect(second.errors).toBeUndefined();
    const bought = first.extensions!.cost!;
    expect(bought.upstreamCalls).toBeGreaterThan(0);
    expect(second.extensions!.cost!.upstreamCalls).toBe(0);
    const cacheHits = second.extensions!.cost!.cacheHits;
    expect(cacheHits).toBeGreaterThan(0);
    // Refused by the operation's budget before any call (estimate over €5).
    const many = `query TooDear { ${Array.from({ length: 30 }, (_, i) => `c${i}: company(vatCode: "12485671007") { creditScore(level: TOP) { score } }`).join(' ')} }`;
    const refused = await t.gql(many, {}, auth);
    expect(refused.errors?.[0]?.extensions?.code).toBe('COST_LIMIT_EXCEEDED');
    // A forged callback: refused on its signature.
    const forged = await request(`${t.url}/callbacks/risk/abc.${Math.floor(Date.now() / 1000) + 600}.def`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"data":{}}' });
    await forged.body.text();
    expect(forged.statusCode).toBe(403);

    const upstream = await t.calls();
    const page = await scrape(t.url);
    expect(page.contentType).toMatch(/^text\/plain/);
    const after = page.samples;
    const delta = (name: string, where: Record<string, string> = {}): number => Math.round((sum(after, name, where) - sum(before, name, where)) * 10_000) / 10_000;

    expect(delta('openapi_operations_total', { operation: 'CompanyName', type: 'query', outcome: 'ok' })).toBe(2);
    expect(delta('openapi_operations_total', { operation: 'CompanyAgain', type: 'query', outcome: 'ok' })).toBe(1);
    expect(delta('openapi_operations_total', { operation: 'TooDear', outcome: 'refused' })).toBe(1);
    expect(delta('openapi_budget_refused_total', { scope: 'operation', stage: 'estimate' })).toBe(1);
    // Upstream calls sent: as many as the emulator received and the client was told; euro likewise.
    expect(delta('openapi_upstream_calls_total', { source: 'network' })).toBe(upstream.length);
    expect(delta('openapi_upstream_calls_total', { source: 'network' })).toBe(bought.upstreamCalls);
    expect(delta('openapi_upstream_euro_total')).toBe(bought.euro);
    expect(sum(after, 'openapi_upstream_calls_total', { source: 'cache' }) - upstreamCacheBefore).toBe(cacheHits);
    expect(delta('openapi_upstream_calls_total', { source: 'dedup' })).toBe(0);
    expect(delta('openapi_upstream_call_duration_seconds_count')).toBe(upstream.length);
    expect(delta('openapi_upstream_at_risk_euro_total')).toBe(0);
    expect(delta('openapi_callbacks_total', { area: 'risk', outcome: 'signature' })).toBe(1);
    // Endpoints by template: no VAT number (nor any other identifier) in a label.
    const endpoints = after.filter((s) => s.name === 'openapi_upstream_calls_total').map((s) => s.labels.endpoint ?? '');
    expect(endpoints.length).toBeGreaterThan(0);
    expect(endpoints.filter((e) => /\d{6,}/.test(e))).toEqual([]);
    // The runtime's own: request latency histograms, subgraph fetches.
    // Executed operations (the response cache's answer runs nothing); no client text in their labels.
    expect(delta('graphql_envelop_request_duration_count')).toBe(3);
    expect(after.filter((s) => s.name.startsWith('graphql_envelop') && ('operationName' in s.labels || 'url' in s.labels))).toEqual([]);
    expect(sum(after, 'graphql_gateway_subgraph_execute_duration_count', { subgraphName: 'company' })).toBeGreaterThan(0);
    expect(page.text).not.toContain('12485671007');
    expect(page.text).not.toContain(token);
  });
});
