/**
 * The scope pre-check per operation (`OPENAPI_PRECHECK=on`): the gateway's estimate finds every
 * endpoint an operation may call and sends their scopes to the subgraphs; at the operation's first
 * call the account guard checks them all, so an operation that needs a scope the token lacks in one
 * area spends nothing in another: FORBIDDEN naming the scope, no call at the emulator.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { scopesFromHeader, scopesHeaderOf } from '../../../subgraphs/runtime/operation.ts';
import { POSTAL } from '../../../subgraphs/postal/upstream.ts';
import { OAUTH } from '../../../subgraphs/account/upstream.ts';

const EMAIL = 'scope-operation@example.com';
const OPERATOR_KEY = 'operator-key-scope-operation-0123';
const APIKEY = 'scope-operation-apikey-0123456789';
const POSTAL_ONLY = '{ postalCode(code: "00136") { code } }';
const POSTAL_AND_COMPANY = '{ postalCode(code: "00136") { code } company(vatCode: "12485671007") { companyName } }';
let t: TestStack;
let token = '';

beforeAll(async () => {
  t = await startTestStack({ OPENAPI_EMAIL: EMAIL, OPENAPI_APIKEY: APIKEY, OPENAPI_PRECHECK: 'on', OPENAPI_MANAGED_TOKEN: 'off', OPENAPI_ACCOUNT_API_KEY: OPERATOR_KEY });
  await t.control('oauth/account', { email: EMAIL, apikey: APIKEY, credit: 5 });
  // Every postal endpoint, no company one.
  const res = await t.gql<{ createToken: { value: string } }>(
    'mutation { createToken(input: { scopes: ["*:cap.openapi.it/*"] }) { value } }',
    {},
    { 'x-openapi-account-key': OPERATOR_KEY },
  );
  expect(res.errors).toBeUndefined();
  token = res.data!.createToken.value;
}, 120_000);
afterAll(async () => {
  await t?.close();
});

it('an operation needing a company scope the token lacks is refused whole: FORBIDDEN naming it, nothing called in either area', async () => {
  await t.clearCalls();
  const res = await t.gql<{ postalCode: unknown; company: unknown }>(POSTAL_AND_COMPANY, {}, { authorization: `Bearer ${token}` });
  expect(res.data?.postalCode ?? null).toBeNull();
  expect(res.data?.company ?? null).toBeNull();
  const codes = (res.errors ?? []).map((e) => e.extensions?.code);
  expect(codes.length).toBeGreaterThan(0);
  expect(new Set(codes)).toEqual(new Set(['FORBIDDEN']));
  // The postal field's own call was allowed: it was refused for the company scope the operation
  // needs (a company's name is the IT-name source's, €0.02), and so was the company field.
  for (const field of ['postalCode', 'company']) {
    expect(res.errors!.find((e) => e.path?.[0] === field)?.message).toContain('the token lacks the scope GET:test.company.openapi.com/IT-name, which this operation needs');
  }
  expect(res.extensions!.cost!.upstreamCalls).toBe(0);
  expect(await t.calls('cap')).toEqual([]);
  expect(await t.calls('company')).toEqual([]);
  // Only the token's scopes were read (once, with the account's credentials).
  expect((await t.calls('oauth')).map((c) => `${c.method} ${c.path}`)).toEqual([`GET /tokens/${token}`]);
});

it('the same token on a postal-only operation works', async () => {
  await t.clearCalls();
  const res = await t.gql<{ postalCode: { code: string } }>(POSTAL_ONLY, {}, { authorization: `Bearer ${token}` });
  expect(res.errors).toBeUndefined();
  expect(res.data!.postalCode.code).toBe('00136');
  expect((await t.calls('cap')).map((c) => c.path)).toEqual(['/cap/00136']);
  expect(await t.calls('company')).toEqual([]);
});

it('the scopes header: production form, once each, without the account’s own calls; read back as scopes only', () => {
  expect(scopesHeaderOf([POSTAL.cap, POSTAL.search, POSTAL.cap, OAUTH.token])).toBe('GET:cap.openapi.it/cap GET:cap.openapi.it/cerca_comuni');
  expect(scopesFromHeader('GET:cap.openapi.it/cap  not-a-scope GET:company.openapi.com/IT-start')).toEqual(['GET:cap.openapi.it/cap', 'GET:company.openapi.com/IT-start']);
  expect(scopesFromHeader(null)).toBeNull();
});
