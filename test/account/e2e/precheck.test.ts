/**
 * Failing earlier with the account's knowledge (`OPENAPI_PRECHECK=on`): a call the token has no
 * scope for is refused with FORBIDDEN naming the scope, and one the wallet cannot pay with
 * PAYMENT_REQUIRED, both before the call is sent (the emulator sees nothing of them).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { scopeGranted, scopeOf } from '../../../contract/scopes.ts';

const EMAIL = 'precheck@example.com';
/** The operator's key of the account API (`x-openapi-account-key`). */
const OPERATOR_KEY = 'operator-key-0123456789abcdef';
const APIKEY = 'precheck-apikey-0123456789';
let t: TestStack;
let token = '';

beforeAll(async () => {
  t = await startTestStack({ OPENAPI_EMAIL: EMAIL, OPENAPI_APIKEY: APIKEY, OPENAPI_PRECHECK: 'on', OPENAPI_MANAGED_TOKEN: 'off', OPENAPI_ACCOUNT_API_KEY: OPERATOR_KEY });
  await t.control('oauth/account', { email: EMAIL, apikey: APIKEY, credit: 0.05 });
  const res = await t.gql<{ createToken: { value: string } }>(
    'mutation { createToken(input: { scopes: ["GET:cap.openapi.it/cerca_comuni", "GET:cap.openapi.it/comuni_base"] }) { value } }',
    {},
    { 'x-openapi-account-key': OPERATOR_KEY },
  );
  token = res.data!.createToken.value;
}, 60_000);
afterAll(async () => {
  await t?.close();
});

it('a call outside the token scopes is refused with FORBIDDEN naming the scope, before any call', async () => {
  await t.clearCalls();
  const res = await t.gql('{ postalCode(code: "00136") { code } }', {}, { authorization: `Bearer ${token}` });
  expect(res.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  expect(res.errors?.[0]?.message).toContain('GET:test.cap.openapi.it/cap');
  expect(await t.calls('cap')).toEqual([]);
  // the token's scopes were read once, with the account's credentials
  expect((await t.calls('oauth')).map((c) => `${c.method} ${c.path}`)).toEqual([`GET /tokens/${token}`]);
  const again = await t.gql('{ postalCode(code: "00137") { code } }', {}, { authorization: `Bearer ${token}` });
  expect(again.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  expect(await t.calls('oauth')).toHaveLength(1);
});

it('an operation whose estimate the wallet cannot cover is refused with PAYMENT_REQUIRED, before any call', async () => {
  await t.clearCalls();
  const bearer = { authorization: `Bearer ${token}` };
  const first = await t.gql<{ municipality: { postalCodes: string[] } }>('{ municipality(istatCode: "058091") { postalCodes } }', {}, bearer);
  expect(first.errors).toBeUndefined();
  expect(first.extensions!.cost!.euro).toBe(0.04);
  // €0.01 left, less than the operation's estimate (€0.041: the search and comuni_base): refused before any call
  const second = await t.gql<unknown>('{ municipality(istatCode: "070006") { postalCodes } }', {}, bearer);
  expect(second.errors?.[0]?.extensions?.code).toBe('PAYMENT_REQUIRED');
  expect(second.extensions!.cost!.estimate!.euro).toBe(0.041);
  expect(second.extensions!.cost!.upstreamCalls).toBe(0);
  expect((await t.calls('cap')).map((c) => c.path)).toEqual(['/cerca_comuni', '/comuni_base/58091']);
  expect(await t.credit(token)).toBe(0.01);
});

it('a token the account does not own is not checked (its scopes and wallet are not the layer to read)', async () => {
  const other = await t.createToken(5);
  await t.clearCalls();
  const res = await t.gql('{ postalCode(code: "00138") { code } }', {}, { authorization: `Bearer ${other}` });
  expect(res.errors).toBeUndefined();
  expect((await t.calls('cap')).map((c) => c.path)).toEqual(['/cap/00138']);
});

it('scopes as the vendor writes them', () => {
  expect(scopeOf('emulator', 'cap', 'GET', '/cap/00136')).toBe('GET:test.cap.openapi.it/cap');
  expect(scopeOf('production', 'company', 'GET', '/IT-start/1')).toBe('GET:company.openapi.com/IT-start');
  expect(scopeGranted(['*:test.cap.openapi.it/*'], 'GET:test.cap.openapi.it/cap')).toBe(true);
  expect(scopeGranted(['GET:test.cap.openapi.it/cerca_comuni'], 'GET:test.cap.openapi.it/cap')).toBe(false);
  expect(scopeGranted(['POST:test.cap.openapi.it/cap'], 'GET:test.cap.openapi.it/cap')).toBe(false);
  expect(scopeGranted(['GET:*.openapi.it/*'], 'GET:test.cap.openapi.it/cap')).toBe(true);
});

it('a scope given to the token through the account API is seen at once (its cached scopes forgotten)', async () => {
  const CODE = '{ postalCode(code: "00141") { code } }';
  const bearer = { authorization: `Bearer ${token}` };
  expect((await t.gql(CODE, {}, bearer)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  const upd = await t.gql(
    'mutation ($t: String!) { updateToken(token: $t, input: { scopes: ["GET:cap.openapi.it/cerca_comuni", "GET:cap.openapi.it/comuni_base", "GET:cap.openapi.it/cap"] }) { scopes } }',
    { t: token },
    { 'x-openapi-account-key': OPERATOR_KEY },
  );
  expect(upd.errors).toBeUndefined();
  await t.clearCalls();
  // Past the scope check now (the wallet's €0.01 then refuses the €0.04 call).
  const res = await t.gql(CODE, {}, bearer);
  expect(res.errors?.[0]?.extensions?.code).toBe('PAYMENT_REQUIRED');
  // The scopes read again once; nothing sent to the postal area.
  expect((await t.calls('oauth')).map((c) => `${c.method} ${c.path}`)).toEqual([`GET /tokens/${token}`]);
  expect(await t.calls('cap')).toEqual([]);
});
