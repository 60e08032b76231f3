/**
 * Bursts: 20 and 200 identical queries of one tenant at the same moment, through the gateway, make
 * exactly one upstream call; one answer reports that call and its euro, every other reports the
 * call as shared (de-duplicated in flight, or a response-cache hit for any that arrived after the
 * first answer) at €0, so the euro reported adds up to what the upstream charged. Only callers with
 * the same credentials share: a caller without the operator's account key never gets the answer
 * of an operator's query in flight.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type GraphQLResponse, type TestStack } from '../../support/stack.ts';
import { untilInFlight } from '../../support/inflight.ts';

/** Sandbox companies, one per burst (each burst starts cold). */
const VATS = { 20: '03456783053', 200: '03456782055' } as const;
const QUERY = `query($vat: String!) { company(vatCode: $vat) { companyName address { town } } }`;

const EMAIL = 'burst-operator@example.com';
const APIKEY = 'burst-apikey-0123456789';
const OPERATOR_KEY = 'burst-operator-key-0123456789';

let t: TestStack;

beforeAll(async () => {
  // A slow upstream, so every operation of a burst arrives while the first one is being answered.
  // The account API needs the operator's key (`x-openapi-account-key`).
  t = await startTestStack(
    { OPENAPI_EMAIL: EMAIL, OPENAPI_APIKEY: APIKEY, OPENAPI_MANAGED_TOKEN: 'off', OPENAPI_ACCOUNT_API_KEY: OPERATOR_KEY },
    { emulator: { latencyMs: { company: 300 } } },
  );
  await t.control('oauth/account', { email: EMAIL, apikey: APIKEY, credit: 20 });
}, 120_000);

afterAll(async () => {
  await t?.close();
});

describe.each([20, 200] as const)('a burst of %i identical queries', (n) => {
  it('makes one upstream call; one answer reports it, the others report it shared', async () => {
    await t.clearCalls();
    const answers: GraphQLResponse[] = await Promise.all(Array.from({ length: n }, () => t.gql(QUERY, { vat: VATS[n] })));
    for (const a of answers) expect(a.errors, JSON.stringify(a.errors)).toBeUndefined();
    expect(new Set(answers.map((a) => JSON.stringify(a.data))).size).toBe(1);

    const upstream = await t.calls();
    expect(upstream).toHaveLength(1);
    const costs = answers.map((a) => a.extensions!.cost! as NonNullable<GraphQLResponse['extensions']>['cost'] & { answeredFrom?: string });
    const payers = costs.filter((c) => c.upstreamCalls > 0);
    expect(payers).toHaveLength(1);
    expect(payers[0].upstreamCalls).toBe(1);
    expect(payers[0].euro).toBeCloseTo(upstream[0].price, 6);
    const shared = costs.filter((c) => c.upstreamCalls === 0);
    expect(shared).toHaveLength(n - 1);
    for (const c of shared) {
      expect(c.euro).toBe(0);
      expect(c.dedupHits + c.cacheHits).toBe(1);
      expect(['in-flight', 'response-cache']).toContain(c.answeredFrom);
    }
  });
});

describe('callers with other credentials', () => {
  it('a caller without the account key, while the operator’s same query is in flight, is refused, not given the wallet', async () => {
    const WALLET = '{ account { wallet { credit } } }';
    await t.control('faults', { area: 'oauth', delayAfterMs: 1_000, count: 1 });
    const operator = t.gql<{ account: { wallet: { credit: number } } }>(WALLET, {}, { 'x-openapi-account-key': OPERATOR_KEY });
    // The operator's call is held upstream: the keyless caller arrives while it is in flight.
    await untilInFlight(t.stack.emulatorUrl!, 'some');
    const keyless = await t.gql(WALLET);
    expect(keyless.data?.account ?? null).toBeNull();
    expect(keyless.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect((await operator).data?.account.wallet.credit).toBe(20);
  });
});
