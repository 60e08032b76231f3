/**
 * Subscription prices (`OPENAPI_PRECHECK=on`, the account known): a call an active subscription
 * covers is priced at the subscription's price per request and paid from it (the emulator charges
 * the wallet nothing and uses one of its requests); once its requests are used up, the wallet pays
 * the list price again. A call answered without a charge gives its subscription request back.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack.ts';

const EMAIL = 'subscriber@example.com';
/** The operator's key of the account API (`x-openapi-account-key`). */
const OPERATOR_KEY = 'operator-key-0123456789abcdef';
const APIKEY = 'subscriber-apikey-0123456789';
let t: TestStack;
let token = '';

beforeAll(async () => {
  t = await startTestStack({ OPENAPI_EMAIL: EMAIL, OPENAPI_APIKEY: APIKEY, OPENAPI_PRECHECK: 'on', OPENAPI_MANAGED_TOKEN: 'off', OPENAPI_ACCOUNT_API_KEY: OPERATOR_KEY });
  await t.control('oauth/account', { email: EMAIL, apikey: APIKEY, credit: 1 });
  await t.control('oauth/subscribe', { email: EMAIL, scope: 'GET:test.cap.openapi.it/comuni_base', totalRequests: 2, pricePerRequest: 0.006 });
  await t.control('oauth/subscribe', { email: EMAIL, scope: 'GET:test.cap.openapi.it/cap', totalRequests: 1, pricePerRequest: 0.005 });
  const res = await t.gql<{ createToken: { value: string } }>(
    'mutation { createToken(input: { scopes: ["GET:cap.openapi.it/*"] }) { value } }',
    {},
    { 'x-openapi-account-key': OPERATOR_KEY },
  );
  token = res.data!.createToken.value;
}, 60_000);
afterAll(async () => {
  await t?.close();
});

it('two calls inside the subscription at its price, the third from the wallet at the list price', async () => {
  await t.clearCalls();
  // Not charged (no such postal code, 404): the subscription's request taken for it is given back,
  // so the next one is still the subscription's.
  const code = async (c: string) => (await t.gql('query ($c: String!) { postalCode(code: $c) { code } }', { c }, { authorization: `Bearer ${token}` })).extensions!.cost!.euro;
  expect(await code('99999')).toBe(0);
  expect(await code('00136')).toBe(0.005);
  expect((await t.calls('cap')).map((c) => [c.path, c.status, c.price])).toEqual([
    ['/cap/99999', 404, 0],
    ['/cap/00136', 200, 0],
  ]);
  await t.clearCalls();
  const costs: number[] = [];
  for (const istat of ['070006', '001272', '015146']) {
    const res = await t.gql('query ($i: String!) { municipality(istatCode: $i) { postalCodes } }', { i: istat }, { authorization: `Bearer ${token}` });
    expect(res.errors).toBeUndefined();
    costs.push(res.extensions!.cost!.euro);
  }
  expect(costs).toEqual([0.006, 0.006, 0.04]);
  // the emulator: the subscription paid the first two, the wallet the third
  expect((await t.calls('cap')).filter((c) => c.path.startsWith('/comuni_base')).map((c) => c.price)).toEqual([0, 0, 0.04]);
  expect(await t.credit(token)).toBe(0.96);
  const subs = await t.gql<{ account: { subscriptions: Array<{ availableRequests: number }> } }>(
    '{ account { subscriptions { availableRequests } } }',
    {},
    { 'x-openapi-account-key': OPERATOR_KEY },
  );
  expect(subs.data!.account.subscriptions).toEqual([{ availableRequests: 0 }, { availableRequests: 0 }]);
});
