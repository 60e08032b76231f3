/**
 * `/metrics` after a scenario through the gateway: the counts are exact and agree with what the
 * client was told in `extensions.cost` and with the calls the emulator received. One process: the
 * gateway's page holds the subgraphs' counts too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { GraphQLError } from 'graphql';
import { OperationNames, outcomeOf } from '../../../gateway/metrics.ts';
import { CF } from '../../support/risk.ts';
import { withSafety } from '../../support/safety.ts';
import { waitFor } from '../../support/wait.ts';

let t: TestStack;
let token: string;

beforeAll(async () => {
  // Per operation €20; per tenant and day €20 (a €15 order, then two €3 scores: the second is refused).
  t = await startTestStack({ OPENAPI_MAX_EURO_PER_OPERATION: '20', OPENAPI_MAX_EURO_PER_DAY: '20' });
  token = await t.createToken(100);
}, 120_000);

const clients: Client[] = [];

afterAll(async () => {
  for (const c of clients) await c.dispose();
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
    // A GET operation: its URL (query string with the VAT number) is no label.
    const query = new URLSearchParams({ query: COMPANY.replace('CompanyName', 'CompanyGet'), variables: JSON.stringify({ vat: '12485671007' }) });
    const get = await request(`${t.url}/graphql?${query}`, { headers: { ...auth, 'graphql-preflight': '1', accept: 'application/json' } });
    const got = (await get.body.json()) as { errors?: unknown };
    expect(got.errors).toBeUndefined();
    const upstreamCacheBefore = sum((await scrape(t.url)).samples, 'openapi_upstream_calls_total', { source: 'cache' });
    const second = await t.gql(COMPANY.replace('CompanyName', 'CompanyAgain'), { vat: '12485671007' }, auth);
    expect(second.errors).toBeUndefined();
    const bought = first.extensions!.cost!;
    expect(bought.upstreamCalls).toBeGreaterThan(0);
    expect(second.extensions!.cost!.upstreamCalls).toBe(0);
    const cacheHits = second.extensions!.cost!.cacheHits;
    expect(cacheHits).toBeGreaterThan(0);
    // Refused by the operation's budget before any call (estimate over €20).
    const many = `query TooDear { ${Array.from({ length: 30 }, (_, i) => `c${i}: company(vatCode: "12485671007") { creditScore(level: TOP) { score } }`).join(' ')} }`;
    const refused = await t.gql(many, {}, auth);
    expect(refused.errors?.[0]?.extensions?.code).toBe('COST_LIMIT_EXCEEDED');
    // A forged callback: refused on its signature.
    const forged = await request(`${t.url}/callbacks/risk/abc.${Math.floor(Date.now() / 1000) + 600}.def`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"data":{}}',
    });
    await forged.body.text();
    expect(forged.statusCode).toBe(403);

    const upstream = await t.calls();
    const page = await scrape(t.url);
    expect(page.contentType).toMatch(/^text\/plain/);
    const after = page.samples;
    const delta = (name: string, where: Record<string, string> = {}): number => Math.round((sum(after, name, where) - sum(before, name, where)) * 10_000) / 10_000;

    expect(delta('openapi_operations_total', { operation: 'CompanyName', type: 'query', outcome: 'ok' })).toBe(2);
    expect(delta('openapi_operations_total', { operation: 'CompanyGet', type: 'query', outcome: 'ok' })).toBe(1);
    // The second CompanyName: the gateway's response cache answered.
    expect(delta('openapi_answers_replayed_total', { source: 'cache' })).toBe(1);
    expect(delta('openapi_answers_replayed_total', { source: 'dedup' })).toBe(0);
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
    expect(delta('graphql_envelop_request_duration_count')).toBe(4);
    expect(after.filter((s) => 'url' in s.labels || (s.name.startsWith('graphql_envelop') && 'operationName' in s.labels))).toEqual([]);
    expect(sum(after, 'graphql_gateway_subgraph_execute_duration_count', { subgraphName: 'company' })).toBeGreaterThan(0);
    expect(page.text).not.toContain('12485671007');
    expect(page.text).not.toContain(token);
  });

  it('counts an invalid document, a subscription open then closed, an accepted callback and a refusal at call stage', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const before = (await scrape(t.url)).samples;
    const now = async (name: string, where: Record<string, string> = {}): Promise<number> =>
      Math.round((sum((await scrape(t.url)).samples, name, where) - sum(before, name, where)) * 10_000) / 10_000;
    /** Polls /metrics until `name` moved by `want` (a safety limit, not a timed assertion). */
    const until = async (name: string, where: Record<string, string>, want: number): Promise<void> =>
      void (await waitFor(async () => (await now(name, where)) === want, `${name} ${JSON.stringify(where)} to move by ${want}`, { deadline: 20_000, every: 20 }));

    // A document that does not validate: its name (client text) is no label.
    const invalid = await t.gql('query tok_abcdef123456 { nope }', {}, auth);
    expect(invalid.errors?.length).toBeGreaterThan(0);
    expect(await now('openapi_operations_total', { operation: 'invalid', outcome: 'error' })).toBe(1);

    // A subscription open on the gateway while the order it watches is completed by the upstream's callback.
    const client = createClient({ url: t.stack.gateway.wsUrl, webSocketImpl: WebSocket, connectionParams: auth, retryAttempts: 0, lazy: true });
    clients.push(client);
    const feed = client.iterate<{ riskRequestsUpdated: { id: string; state: string } }>({ query: 'subscription Feed { riskRequestsUpdated(family: PATRIMONIAL) { id state } }' });
    const firstEvent = feed.next();
    await until('openapi_subscriptions_open', { operation: 'Feed' }, 1);
    const order = await t.gql<{ orderPatrimonialReport: { id: string } }>(
      'mutation Order($input: PersonSubjectInput!) { orderPatrimonialReport(level: STANDARD, input: $input) { id } }',
      { input: { name: 'Mario', surname: 'Rossi', taxCode: CF } },
      auth,
    );
    expect(order.errors, JSON.stringify(order.errors)).toBeUndefined();
    const id = order.data!.orderPatrimonialReport.id;
    let event = await withSafety(firstEvent, 'first event', 20_000);
    await t.control('risk/advance', { id });
    while (!event.done && event.value.data?.riskRequestsUpdated.state !== 'COMPLETE') event = await withSafety(feed.next(), 'completion', 20_000);
    expect(event.done).toBe(false);
    expect(await now('openapi_callbacks_total', { area: 'risk', outcome: 'accepted' })).toBe(1);
    await feed.return?.();
    await until('openapi_subscriptions_open', { operation: 'Feed' }, 0);
    expect(await now('openapi_operations_total', { operation: 'Feed', type: 'subscription', outcome: 'ok' })).toBe(1);

    // €15.05 spent today: of two €3 scores (€6 estimate, within the operation's budget) the second
    // passes the day's €20 at its call: refused there, the first answered (partial).
    const scores = await t.gql(
      'query Scores { a: company(vatCode: "12485671007") { creditScore(level: TOP) { score } } b: company(vatCode: "03456783053") { creditScore(level: TOP) { score } } }',
      {},
      auth,
    );
    expect(scores.errors?.map((e) => e.extensions?.code)).toEqual(['COST_LIMIT_EXCEEDED']);
    expect(await now('openapi_budget_refused_total', { scope: 'day', stage: 'call' })).toBe(1);
    expect(await now('openapi_budget_refused_total', { stage: 'estimate' })).toBe(0);
    expect(await now('openapi_operations_total', { operation: 'Scores', outcome: 'partial' })).toBe(1);
    expect((await scrape(t.url)).text).not.toContain('tok_abcdef123456');
  });
});

describe('operation labels and outcomes', () => {
  it('admits at most the cap of validated names, then other; unknown names seen without validation are the fallback', () => {
    const names = new OperationNames(2);
    expect([names.admit('A'), names.admit('B'), names.admit('C'), names.admit('A')]).toEqual(['A', 'B', 'other', 'A']);
    expect([names.seen('B', 'invalid'), names.seen('C', 'invalid'), names.seen(null, 'other')]).toEqual(['B', 'invalid', 'other']);
  });

  it('tells an APQ miss, a budget stopping part of an operation, and a refusal apart', () => {
    const err = (code: string): GraphQLError => new GraphQLError('x', { extensions: { code } });
    expect(outcomeOf({ errors: [err('PERSISTED_QUERY_NOT_FOUND')] })).toBe('persisted_query_miss');
    expect(outcomeOf({ data: { a: { score: 1 }, b: null }, errors: [err('COST_LIMIT_EXCEEDED')] })).toBe('partial');
    expect(outcomeOf({ data: null, errors: [err('COST_LIMIT_EXCEEDED')] })).toBe('refused');
    expect(outcomeOf({ data: { a: null }, errors: [err('UPSTREAM_UNAVAILABLE')] })).toBe('error');
    expect(outcomeOf({ data: { a: 1 } })).toBe('ok');
  });
});
