/**
 * Free tiers as the vendor counts them. The account's own calls (HTTP Basic: the account fields,
 * the precheck's reads, token mints) count under the account, whichever caller's token the
 * operation came with; and a call the layer refuses before sending it (here: over the day budget)
 * gives its count back, so `extensions.cost.freeTier` keeps saying what the vendor counted.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack.ts';

const EMAIL = 'free-tiers@example.com';
const APIKEY = 'free-tiers-apikey-0123456789';
const OPERATOR = { 'x-openapi-account-key': 'operator-key-0123456789abcdef' };

interface Cost {
  upstreamCalls: number;
  euro: number;
  freeTier?: Array<{ endpoint: string; period: string; limit: number; used: number; remaining: number }>;
}

let account: TestStack;
let budget: TestStack;
let precheck: TestStack;

beforeAll(async () => {
  account = await startTestStack({ OPENAPI_EMAIL: EMAIL, OPENAPI_APIKEY: APIKEY, OPENAPI_MANAGED_TOKEN: 'off', OPENAPI_ACCOUNT_API_KEY: OPERATOR['x-openapi-account-key'] });
  await account.control('oauth/account', { email: EMAIL, apikey: APIKEY, credit: 5 });
  budget = await startTestStack({ OPENAPI_MAX_EURO_PER_DAY: '0.0005' });
  precheck = await startTestStack({ OPENAPI_EMAIL: EMAIL, OPENAPI_APIKEY: APIKEY, OPENAPI_PRECHECK: 'on', OPENAPI_MANAGED_TOKEN: 'off' });
  await precheck.control('oauth/account', { email: EMAIL, apikey: APIKEY, credit: 5 });
}, 120_000);
afterAll(async () => {
  await account?.close();
  await budget?.close();
  await precheck?.close();
}, 120_000);

it("the account's reads count under the account, whichever caller's token the operation came with", async () => {
  const used: number[] = [];
  for (const token of ['caller-one-token-0000', 'caller-two-token-0000', 'caller-one-token-0000']) {
    const res = await account.gql('{ account { wallet { credit } } }', {}, { ...OPERATOR, authorization: `Bearer ${token}` });
    expect(res.errors).toBeUndefined();
    const tier = (res.extensions!.cost as Cost).freeTier!.find((f) => f.endpoint === 'oauth GET wallet')!;
    used.push(tier.used);
  }
  // One counter (the account's), as the vendor keeps it: 1, 2, 3, not 1, 1, 2 per caller.
  expect(used).toEqual([1, 2, 3]);
});

it("with the precheck on, the tokens of the account share the account's free tier; another account's token keeps its own", async () => {
  const mine = ['account-token-one-0000', 'account-token-two-0000'];
  for (const token of mine) await precheck.control('tokens', { token, owner: EMAIL });
  await precheck.control('tokens', { token: 'other-account-token-0000', owner: 'someone-else@example.com', credit: 1 });
  await precheck.control('oauth/account', { email: EMAIL, apikey: APIKEY, credit: 5 });
  const used: Array<[string, number]> = [];
  let istat = 1001;
  for (const token of [mine[0], mine[1], 'other-account-token-0000', mine[0]]) {
    // A distinct Istat code each time: never a cache hit (postal answers are shared by every tenant).
    const res = await precheck.gql(`{ searchMunicipalities(istatCode: "${istat++}") { istatCode } }`, {}, { authorization: `Bearer ${token}` });
    expect(res.errors).toBeUndefined();
    const tier = (res.extensions!.cost as Cost).freeTier!.find((f) => f.endpoint === 'cap GET cerca_comuni')!;
    used.push([token.slice(0, 13), tier.used]);
  }
  // The account's two tokens: one counter (1, 2, 3); the other account's token: its own (1).
  expect(used).toEqual([
    ['account-token', 1],
    ['account-token', 2],
    ['other-account', 1],
    ['account-token', 3],
  ]);
});

/** `n` distinct searches (distinct Istat codes, none a cache hit) in one operation. */
async function searches(from: number, n: number, token: string) {
  const fields = Array.from({ length: n }, (_, i) => `s${from + i}: searchMunicipalities(istatCode: "${from + i}") { istatCode }`).join(' ');
  return budget.gql(`{ ${fields} }`, {}, { authorization: `Bearer ${token}` });
}

it('a call refused before sending (over the day budget) gives its free-tier count back', async () => {
  const token = await budget.createToken(10);
  for (let i = 0; i < 8; i++) {
    const res = await searches(1 + i * 180, 180, token);
    expect(res.errors).toBeUndefined();
  }
  await budget.clearCalls();
  // The 1,441st is priced (€0.001), over the day's €0.0005: refused, not sent, not counted.
  for (const from of [2001, 2002]) {
    const res = await searches(from, 1, token);
    expect(res.errors?.[0]?.extensions?.code).toBe('COST_LIMIT_EXCEEDED');
    const cost = res.extensions!.cost as Cost;
    expect(cost.upstreamCalls).toBe(0);
    expect(cost.freeTier).toEqual([{ endpoint: 'cap GET cerca_comuni', period: 'day', limit: 1440, used: 1440, remaining: 0 }]);
  }
  expect(await budget.calls('cap')).toEqual([]);
});
