/**
 * What the GraphiQL cost panel reads before Run: an estimate-only answer (`x-openapi-estimate-only`)
 * lists the endpoints the operation may call with their prices and cache lifetimes, and says what
 * the cache would save this caller: nothing before the caller's first run, all of it once the
 * caller's answer is in the response cache. Asking makes no upstream call.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack.ts';

const BETA_SERVIZI = '04123450159';
const QUERY = `query Profile($vat: String!) { company(vatCode: $vat) { companyName } }`;

interface Detail {
  euro: number;
  endpoints: Array<{ endpoint: string; area: string; euro: number; cacheSeconds: number }>;
  cache: { answered: boolean; saves: number; afterCache: number };
}

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack();
}, 120_000);
afterAll(async () => {
  await t?.close();
});

it('lists the endpoints and what the cache saves this caller, with no upstream call', async () => {
  const token = await t.createToken(50);
  const headers = { authorization: `Bearer ${token}` };
  const estimate = async (): Promise<Detail> => {
    const res = await t.gql(QUERY, { vat: BETA_SERVIZI }, { ...headers, 'x-openapi-estimate-only': 'true' });
    expect(res.data ?? null).toBeNull();
    return res.extensions?.cost?.estimate as unknown as Detail;
  };
  await t.clearCalls();
  const before = await estimate();
  expect(before.euro).toBeGreaterThan(0);
  expect(before.endpoints.length).toBeGreaterThan(0);
  expect(before.endpoints.every((e) => e.area === 'company' && e.endpoint.startsWith('company GET '))).toBe(true);
  expect(before.endpoints.some((e) => e.euro > 0 && e.cacheSeconds > 0)).toBe(true);
  expect(before.cache).toEqual({ answered: false, saves: 0, afterCache: before.euro });
  expect(await t.calls()).toEqual([]);

  const run = await t.gql(QUERY, { vat: BETA_SERVIZI }, headers);
  expect(run.errors).toBeUndefined();
  expect(run.extensions?.cost?.euro).toBeGreaterThan(0);
  const paid = (await t.calls()).length;

  const after = await estimate();
  expect(after.cache).toEqual({ answered: true, saves: before.euro, afterCache: 0 });
  // Another caller's cache is not this one's.
  const other = await t.gql(QUERY, { vat: BETA_SERVIZI }, { authorization: `Bearer ${await t.createToken(50)}`, 'x-openapi-estimate-only': 'true' });
  expect((other.extensions?.cost?.estimate as unknown as Detail).cache.answered).toBe(false);
  expect((await t.calls()).length).toBe(paid);
});
