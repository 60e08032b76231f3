/**
 * A malformed credential is refused, never replaced by the emulator's account: over HTTP
 * (`Authorization` that is not `Bearer <token>`), over SSE, and over graphql-ws (connection params in
 * an unknown shape, or a known shape with a malformed value). Only an absent credential falls back.
 * Everything goes through the gateway; the emulator's call log proves no upstream call was made.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type FormattedExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';
import { request } from 'undici';
import { resolveAuth } from '../../../subgraphs/runtime/server.ts';
import { credentialOfParams, HTTP_FORM, WS_FORM } from '../../../subgraphs/runtime/credentials.ts';
import { CF } from '../../support/risk.ts';
import { startTestStack, type GraphQLResponse, type TestStack } from '../../support/stack.ts';
import { withSafety as safety } from '../../support/safety.ts';

type Result = FormattedExecutionResult<Record<string, unknown>, unknown>;

const COMPANY = '{ company(vatCode: "12485671007") { companyName } }';
const SUBSCRIPTION = 'subscription { riskRequestsUpdated { id state } }';
const ORDER = `mutation { orderPatrimonialReport(input: { name: "MARIO", surname: "ROSSI", taxCode: "${CF}" }) { id } }`;
const SAFETY_MS = 10_000;

/** A safety limit on a wait an event ends (see `support/safety.ts`). */
const withSafety = <T>(p: Promise<T>, what: string): Promise<T> => safety(p, what, SAFETY_MS);

/** The first result of an operation over graphql-ws with these connection params. */
async function overWs(t: TestStack, connectionParams: Record<string, unknown>, query: string): Promise<Result> {
  const client = createClient({ url: t.stack.gateway.wsUrl, webSocketImpl: WebSocket, connectionParams, retryAttempts: 0, lazy: true });
  try {
    const results = client.iterate<Record<string, unknown>>({ query });
    const first = await withSafety(results.next(), `graphql-ws result for ${JSON.stringify(connectionParams)}`);
    await results.return?.();
    return first.value as Result;
  } finally {
    await client.dispose();
  }
}

/** The first event of a subscription over SSE. */
async function overSse(t: TestStack, query: string, headers: Record<string, string>): Promise<GraphQLResponse> {
  const ctl = new AbortController();
  const res = await fetch(t.stack.gateway.graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify({ query }),
    signal: ctl.signal,
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    return await withSafety(
      (async () => {
        for (;;) {
          const m = /(?:^|\n)data: ?(\{.*\})\n/.exec(buffer);
          if (m) return JSON.parse(m[1]) as GraphQLResponse;
          const { value, done } = await reader.read();
          if (done) throw new Error(`SSE stream ended without a result: ${buffer}`);
          buffer += decoder.decode(value, { stream: true });
        }
      })(),
      'SSE event',
    );
  } finally {
    ctl.abort();
  }
}

/** Remaining credit of an emulator token. */
async function creditOf(t: TestStack, token: string): Promise<number> {
  const res = await request(`${t.stack.emulatorUrl}/_emulator/tokens/${encodeURIComponent(token)}`);
  return ((await res.body.json()) as { credit: number }).credit;
}

function expectUnauthenticated(errors: GraphQLResponse['errors'] | Result['errors'], form: string): void {
  expect(errors?.length, JSON.stringify(errors)).toBeGreaterThan(0);
  for (const e of errors ?? []) {
    expect(e.extensions?.code).toBe('UNAUTHENTICATED');
    expect(e.message).toContain(form);
  }
}

const MALFORMED_HEADERS: Array<[string, string]> = [
  ['Basic credentials', 'Basic dXNlcjpwYXNzd29yZA=='],
  ['another scheme', 'Token abc123'],
  ['a bare token', 'abc123'],
  ['an empty Bearer', 'Bearer'],
  ['a Bearer with only blanks', 'Bearer   '],
  ['a Bearer with two words', 'Bearer abc 123'],
];

/** graphql-ws connection params carrying a credential in an unknown shape. */
const UNKNOWN_SHAPES: Array<[string, Record<string, unknown>]> = [
  ['token', { token: 'abc123' }],
  ['authToken', { authToken: 'Bearer abc123' }],
  ['apiKey', { apiKey: 'abc123' }],
  ['password', { user: 'me', password: 'secret' }],
  ['credentials object', { credentials: { token: 'abc123' } }],
  ['headers.x-api-key', { headers: { 'x-api-key': 'abc123' } }],
  ['headers.token', { headers: { token: 'abc123' } }],
  ['authorization: number', { authorization: 42 }],
  ['Authorization: null', { Authorization: null }],
  ['authorization: object', { authorization: { bearer: 'abc123' } }],
  ['headers.authorization: list', { headers: { authorization: ['Bearer abc123'] } }],
  ['headers: a string', { headers: 'Authorization: Bearer abc123' }],
];

describe('malformed credentials, without a service token', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack({ OPENAPI_TOKEN: '' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each(MALFORMED_HEADERS)('refuses %s in Authorization over HTTP, with no upstream call', async (_what, authorization) => {
    await t.clearCalls();
    const res = await t.gql<{ company: unknown }>(COMPANY, undefined, { authorization });
    expectUnauthenticated(res.errors, HTTP_FORM);
    expect(res.data?.company ?? null).toBeNull();
    expect(await t.calls()).toEqual([]);
  });

  it('refuses an empty Authorization header', async () => {
    await t.clearCalls();
    const res = await t.gql(COMPANY, undefined, { authorization: '' });
    expectUnauthenticated(res.errors, HTTP_FORM);
    expect(await t.calls()).toEqual([]);
  });

  it('never echoes what might be a token in the message', async () => {
    const res = await t.gql(COMPANY, undefined, { authorization: 'sk-live-0123456789 extra' });
    expectUnauthenticated(res.errors, HTTP_FORM);
    expect(JSON.stringify(res)).not.toContain('sk-live');
  });

  it('refuses a malformed Authorization on a subscription over SSE', async () => {
    await t.clearCalls();
    const res = await overSse(t, SUBSCRIPTION, { authorization: 'Basic dXNlcjpwYXNzd29yZA==' });
    expectUnauthenticated(res.errors, HTTP_FORM);
    expect(await t.calls()).toEqual([]);
  });

  it.each(UNKNOWN_SHAPES)('refuses graphql-ws connection params with %s, for queries and subscriptions', async (_what, params) => {
    await t.clearCalls();
    const query = await overWs(t, params, COMPANY);
    expectUnauthenticated(query.errors, WS_FORM);
    expect(query.data ?? null).toBeNull();
    const sub = await overWs(t, params, SUBSCRIPTION);
    expectUnauthenticated(sub.errors, WS_FORM);
    expect(await t.calls()).toEqual([]);
  });

  it.each([
    ['authorization', { authorization: 'Token abc123' }],
    ['Authorization', { Authorization: 'abc123' }],
    ['headers.authorization', { headers: { authorization: 'Bearer' } }],
    ['headers.Authorization', { headers: { Authorization: 'Basic dXNlcjpwYXNzd29yZA==' } }],
  ])('refuses a malformed value in connection params %s, for queries and subscriptions', async (_shape, params) => {
    await t.clearCalls();
    expectUnauthenticated((await overWs(t, params, COMPANY)).errors, WS_FORM);
    expectUnauthenticated((await overWs(t, params, SUBSCRIPTION)).errors, WS_FORM);
    expect(await t.calls()).toEqual([]);
  });

  it('uses the emulator account when no credential is sent (HTTP, and graphql-ws with unrelated or no params)', async () => {
    const before = await creditOf(t, 'emulator-token');
    await t.clearCalls();
    const res = await t.gql<{ company: { companyName: string } }>(COMPANY);
    expect(res.errors).toBeUndefined();
    expect(res.data?.company.companyName).toBe('OPENAPI S.P.A.');
    expect((await t.calls()).length).toBeGreaterThan(0);
    expect(await creditOf(t, 'emulator-token')).toBeLessThan(before);
    for (const params of [{}, { locale: 'it-IT', client: { name: 'app', version: '1.2' } }]) {
      const ws = await overWs(t, params, COMPANY);
      expect(ws.errors, JSON.stringify(ws.errors)).toBeUndefined();
      expect(ws.data).toEqual({ company: { companyName: 'OPENAPI S.P.A.' } });
    }
  });

  it('uses a well-formed bearer token (HTTP and graphql-ws), and only that account', async () => {
    const { token } = (await t.control('tokens', { credit: 100 })) as { token: string };
    const before = { caller: await creditOf(t, token), emulator: await creditOf(t, 'emulator-token') };
    const res = await t.gql<{ company: { companyName: string } }>(COMPANY, undefined, { authorization: `Bearer ${token}` });
    expect(res.errors).toBeUndefined();
    expect(res.data?.company.companyName).toBe('OPENAPI S.P.A.');
    expect(res.extensions?.cost?.upstreamCalls).toBeGreaterThan(0);
    expect(await creditOf(t, token)).toBeLessThan(before.caller);
    expect(await creditOf(t, 'emulator-token')).toBe(before.emulator);
    for (const params of [{ authorization: `Bearer ${token}` }, { headers: { Authorization: `bearer ${token}` } }]) {
      const ws = await overWs(t, params, COMPANY);
      expect(ws.errors, JSON.stringify(ws.errors)).toBeUndefined();
      expect(ws.data).toEqual({ company: { companyName: 'OPENAPI S.P.A.' } });
    }
    expect(await creditOf(t, 'emulator-token')).toBe(before.emulator);
  });

  it('passes an unknown but well-formed bearer token upstream, which refuses it (no fallback)', async () => {
    const res = await t.gql(COMPANY, undefined, { authorization: 'Bearer not-a-token-of-the-emulator' });
    expect(res.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(res.errors?.[0]?.message).not.toContain(HTTP_FORM);
  });
});

describe('malformed credentials, with a service token', () => {
  let t: TestStack;
  beforeAll(async () => {
    // The emulator's built-in token as OPENAPI_TOKEN: every upstream call uses it.
    t = await startTestStack({ OPENAPI_TOKEN: 'emulator-token' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("ignores the caller's Authorization, whatever its form (it may be meant for the gateway)", async () => {
    for (const [, authorization] of MALFORMED_HEADERS) {
      const res = await t.gql<{ company: { companyName: string } }>(COMPANY, undefined, { authorization });
      expect(res.errors, `${authorization}: ${JSON.stringify(res.errors)}`).toBeUndefined();
      expect(res.data?.company.companyName).toBe('OPENAPI S.P.A.');
    }
  });

  it('ignores it on subscriptions too (SSE and graphql-ws)', async () => {
    const order = await t.gql<{ orderPatrimonialReport: { id: string } }>(ORDER);
    expect(order.errors).toBeUndefined();
    const id = order.data!.orderPatrimonialReport.id;
    const sse = await overSse(t, SUBSCRIPTION, { authorization: 'Basic dXNlcjpwYXNzd29yZA==' });
    expect(sse.errors).toBeUndefined();
    expect(sse.data).toMatchObject({ riskRequestsUpdated: { id } });
    const ws = await overWs(t, { authorization: 'Token abc123' }, SUBSCRIPTION);
    expect(ws.errors).toBeUndefined();
    expect(ws.data).toMatchObject({ riskRequestsUpdated: { id } });
  });

  it('still refuses graphql-ws connection params in an unknown shape (a client bug whatever the configuration)', async () => {
    expectUnauthenticated((await overWs(t, { token: 'abc123' }, COMPANY)).errors, WS_FORM);
  });
});

describe('reading credentials', () => {
  it('reads the known graphql-ws shapes, and nothing else', () => {
    expect(credentialOfParams({})).toEqual({ kind: 'absent' });
    expect(credentialOfParams(undefined)).toEqual({ kind: 'absent' });
    expect(credentialOfParams({ locale: 'it', headers: { 'accept-language': 'it' } })).toEqual({ kind: 'absent' });
    for (const params of [{ authorization: 'Bearer x' }, { Authorization: 'Bearer x' }, { headers: { authorization: 'Bearer x' } }, { headers: { Authorization: 'Bearer x' } }]) {
      expect(credentialOfParams(params)).toEqual({ kind: 'present', authorization: 'Bearer x' });
    }
    for (const [, params] of UNKNOWN_SHAPES) expect(credentialOfParams(params).kind).toBe('malformed');
    expect(credentialOfParams({ authorization: 'Bearer x', headers: { authorization: 'Bearer y' } }).kind).toBe('malformed');
  });

  it('keeps the policy of the subgraph server: service token first, malformed refused, absent falls back', () => {
    expect(resolveAuth('Basic abc', { serviceToken: 'service' }).token).toBe('service');
    expect(() => resolveAuth('Basic abc', { serviceToken: null, fallbackToken: 'emu' })).toThrow(/Authorization: Bearer <token>/);
    expect(resolveAuth(null, { serviceToken: null, fallbackToken: 'emu' }).token).toBe('emu');
    expect(resolveAuth(() => 'Bearer caller', { serviceToken: null, fallbackToken: 'emu' }).token).toBe('caller');
    expect(
      resolveAuth(
        () => {
          throw new Error('not read with a service token');
        },
        { serviceToken: 'service' },
      ).token,
    ).toBe('service');
  });
});
