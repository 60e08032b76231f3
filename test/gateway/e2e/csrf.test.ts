/**
 * CSRF and CORS at the gateway, over plain HTTP (the browser itself is in csrf-browser.test.ts):
 * requests a browser sends without a preflight (form posts, multipart, text/plain, GET) are refused
 * unless they carry a preflight-forcing header; JSON posts work; CORS is granted only to the
 * origins listed in CORS_ORIGINS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startTestStack, type GraphQLResponse, type TestStack } from '../../support/stack.ts';
import { CF } from '../../support/risk.ts';

const ORDER = `mutation { orderPatrimonialReport(input: { name: "MARIO", surname: "ROSSI", taxCode: "${CF}" }) { id } }`;
const LISTED = 'https://app.example.com';
const OTHER = 'https://other.example.org';
const ATTACKER = 'https://attacker.example.net';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: GraphQLResponse<{ orderPatrimonialReport?: { id: string } | null }> | null;
}

async function send(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const res = await request(url, { method: method as 'POST', headers, body });
  const text = await res.body.text();
  let parsed: Answer['body'];
  try {
    parsed = text ? (JSON.parse(text) as Answer['body']) : null;
  } catch {
    parsed = null;
  }
  return { status: res.statusCode, headers: res.headers, body: parsed };
}

/** POSTs to the risk area (orders) the emulator received. */
async function riskOrders(t: TestStack): Promise<number> {
  return (await t.calls('risk')).filter((c) => c.method === 'POST').length;
}

let t: TestStack;
let listed: TestStack;
beforeAll(async () => {
  [t, listed] = await Promise.all([
    startTestStack(),
    // Spaces and a trailing slash, as people write them in an environment file.
    startTestStack({ CORS_ORIGINS: ` ${LISTED}/ ,${OTHER}` }),
  ]);
});
afterAll(async () => {
  await Promise.all([t?.close(), listed?.close()]);
});

/** The refusal says which header to send (one error, a stable code, the accepted names). */
function expectCsrfRefusal(res: Answer): void {
  expect(res.body?.errors).toHaveLength(1);
  const [error] = res.body!.errors!;
  expect(error.message).toMatch(/CSRF/);
  expect(error.message).toContain('Send the header x-graphql-csrf: 1 (or one of graphql-preflight, apollo-require-preflight');
  expect(error.extensions?.code).toBe('CSRF_HEADER_REQUIRED');
  expect(error.extensions?.requestHeaders).toEqual(['x-graphql-csrf', 'graphql-preflight', 'apollo-require-preflight', 'x-apollo-operation-name', 'x-graphql-yoga-csrf']);
  expect(error.extensions?.http).toBeUndefined();
}

describe('CSRF prevention', () => {
  const form = () => new URLSearchParams({ query: ORDER }).toString();
  /**
   * A multipart form post as a browser sends it, encoded to bytes first: on Node 24, a FormData
   * body given to undici 7's request() is announced with its length and then never sent.
   */
  const multipart = async (): Promise<{ headers: Record<string, string>; body: string }> => {
    const data = new FormData();
    data.set('operations', JSON.stringify({ query: ORDER }));
    data.set('map', '{}');
    const encoded = new Response(data);
    return { headers: { 'content-type': encoded.headers.get('content-type')! }, body: await encoded.text() };
  };

  it.each([
    ['an HTML form post (application/x-www-form-urlencoded)', () => ({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form() })],
    ['a multipart form post', multipart],
    ['a text/plain post', () => ({ headers: { 'content-type': 'text/plain;charset=UTF-8' }, body: JSON.stringify({ query: ORDER }) })],
  ] as const)('refuses %s with 403 and a clear error, and orders nothing', async (_what, make) => {
    await t.clearCalls();
    const { headers, body } = await make();
    const res = await send(t.stack.gateway.graphqlUrl, 'POST', { ...headers, origin: ATTACKER }, body);
    expect(res.status).toBe(403);
    expect(res.body?.data ?? null).toBeNull();
    expectCsrfRefusal(res);
    expect(await t.calls()).toEqual([]);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('refuses a GET without the header (an <img> or <script> tag could buy data), answers it with the header', async () => {
    await t.clearCalls();
    const url = `${t.stack.gateway.graphqlUrl}?query=${encodeURIComponent('{ company(vatCode: "12485671007") { companyName } }')}`;
    const bare = await send(url, 'GET', { accept: 'application/json' });
    expect(bare.status).toBe(403);
    expectCsrfRefusal(bare);
    expect(await t.calls()).toEqual([]);
    const withHeader = await send(url, 'GET', { accept: 'application/json', 'x-graphql-csrf': '1' });
    expect(withHeader.status).toBe(200);
    expect(withHeader.body?.data).toEqual({ company: { companyName: 'OPENAPI S.P.A.' } });
    // A browser opening the URL still gets GraphiQL (a page, not an operation).
    const page = await request(t.stack.gateway.graphqlUrl, { headers: { accept: 'text/html' } });
    expect(page.statusCode).toBe(200);
    expect(await page.body.text()).toContain('<html');
  });

  it('runs a JSON post (what non-browser clients and GraphiQL send), not the same order as a form post', async () => {
    await t.clearCalls();
    const json = await send(t.stack.gateway.graphqlUrl, 'POST', { 'content-type': 'application/json', accept: 'application/json' }, JSON.stringify({ query: ORDER }));
    expect(json.status).toBe(200);
    expect(json.body?.errors).toBeUndefined();
    expect(json.body?.data?.orderPatrimonialReport?.id).toBeTruthy();
    expect(await riskOrders(t)).toBe(1);
    const formPost = await send(t.stack.gateway.graphqlUrl, 'POST', { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, form());
    expect(formPost.status).toBe(403);
    expect(await riskOrders(t)).toBe(1);
  });

  it.each(['x-graphql-csrf', 'apollo-require-preflight', 'graphql-preflight'])(
    'accepts a form post carrying the preflight-forcing header %s (how scripts may still use forms), not without it',
    async (header) => {
      await t.clearCalls();
      const bare = await send(t.stack.gateway.graphqlUrl, 'POST', { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, form());
      expect(bare.status).toBe(403);
      expectCsrfRefusal(bare);
      expect(await riskOrders(t)).toBe(0);
      const res = await send(t.stack.gateway.graphqlUrl, 'POST', { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', [header]: '1' }, form());
      expect(res.status).toBe(200);
      expect(res.body?.errors).toBeUndefined();
      expect(res.body?.data?.orderPatrimonialReport?.id).toBeTruthy();
      expect(await riskOrders(t)).toBe(1);
    },
  );
});

describe('CORS', () => {
  const preflight = (url: string, origin: string) =>
    send(url, 'OPTIONS', {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type, authorization',
    });

  it('grants nothing to any origin by default (no CORS_ORIGINS)', async () => {
    for (const origin of [ATTACKER, LISTED, 'null']) {
      const res = await preflight(t.stack.gateway.graphqlUrl, origin);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      expect(res.headers['access-control-allow-headers']).toBeUndefined();
    }
  });

  it.each([LISTED, OTHER])('with CORS_ORIGINS, allows the listed origin %s (with credentials) and no other', async (origin) => {
    const url = listed.stack.gateway.graphqlUrl;
    const pre = await preflight(url, origin);
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe(origin);
    expect(pre.headers['access-control-allow-credentials']).toBe('true');
    expect(String(pre.headers['access-control-allow-headers']).toLowerCase()).toContain('content-type');
    expect(String(pre.headers['access-control-allow-methods'])).toContain('POST');
    const post = await send(url, 'POST', { 'content-type': 'application/json', origin }, JSON.stringify({ query: '{ __typename }' }));
    expect(post.status).toBe(200);
    expect(post.headers['access-control-allow-origin']).toBe(origin);

    const denied = await preflight(url, ATTACKER);
    expect(denied.headers['access-control-allow-origin']).toBeUndefined();
    expect(denied.headers['access-control-allow-credentials']).toBeUndefined();
    const deniedPost = await send(url, 'POST', { 'content-type': 'application/json', origin: ATTACKER }, JSON.stringify({ query: '{ __typename }' }));
    expect(deniedPost.headers['access-control-allow-origin']).toBeUndefined();
    expect(deniedPost.headers['access-control-allow-credentials']).toBeUndefined();
  });
  it.each(['localhost:3000', '*', 'app.example.com'])('refuses to start with CORS_ORIGINS=%s (not an origin)', async (value) => {
    await expect(startTestStack({ CORS_ORIGINS: value })).rejects.toThrow(/CORS_ORIGINS/);
  });
});
