/**
 * Subscription prices (`OPENAPI_PRECHECK=on`, the account known): a call an active subscription
 * covers is priced at the subscription's price per request and paid from it (the emulator charges
 * the wallet nothing and uses one of its requests); once its requests are used up, the wallet pays
 * the list price again.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestStack, type TestStack } from './support/stack.ts';

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
  const res = await t.gql<{ createToken: { value: string } }>('mutation { createToken(input: { scopes: ["GET:cap.openapi.it/*"] }) { value } }', {}, { 'x-openapi-account-key': OPERATOR_KEY });
  token = res.data!.createToken.value;
}, 60_000);
afterAll(async () => {
  await t?.close();
});

it('two calls inside the subscription at its price, the third from the wallet at the list price', async () => {
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
  const subs = await t.gql<{ account: { subscriptions: Array<{ availableRequests: number }> } }>('{ account { subscriptions { availableRequests } } }', {}, { 'x-openapi-account-key': OPERATOR_KEY });
  expect(subs.data!.account.subscriptions).toEqual([{ availableRequests: 0 }]);
});
