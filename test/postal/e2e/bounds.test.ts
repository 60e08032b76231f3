/**
 * The postal estimate bounds what a query spends: `searchMunicipalities` returns a page of at most
 * `limit` (1–50, default 20) from `offset`, sliced before any municipality's fields are bought, and
 * the estimate counts `limit` of them; a postal code's places are estimated at the most distinct
 * municipalities any postal code serves (24060: 44). Large queries, cold: estimate ≥ euro spent.
 * And completion is case-folded before it searches (one cached search for any casing).
 */
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack.ts';

let t: TestStack;
let bearer: Record<string, string>;

beforeAll(async () => {
  t = await startTestStack({ OPENAPI_MAX_EURO_PER_OPERATION: '100', OPENAPI_MAX_EURO_PER_DAY: '1000' });
  bearer = { authorization: `Bearer ${await t.createToken(500)}` };
}, 60_000);
afterAll(async () => {
  await t?.close();
});
beforeEach(async () => {
  await t.cold();
});

type Page = { searchMunicipalities: Array<{ istatCode: string; name: string; details: { population: number | null } | null }> };

it('a region search is one page of `limit`, its estimate covers what it spends', async () => {
  const res = await t.gql<Page>('{ searchMunicipalities(region: "Lombardia", limit: 50) { istatCode name details { population } } }', {}, bearer);
  expect(res.errors).toBeUndefined();
  expect(res.data!.searchMunicipalities).toHaveLength(50);
  const cost = res.extensions!.cost!;
  // One search and one comuni_advance per municipality of the page, never one beyond it.
  const calls = await t.calls('cap');
  expect(calls.filter((c) => c.path === '/cerca_comuni')).toHaveLength(1);
  expect(calls.filter((c) => c.path.startsWith('/comuni_advance/'))).toHaveLength(50);
  expect(cost.euro).toBeGreaterThan(2);
  expect(cost.estimate!.euro).toBeGreaterThanOrEqual(cost.euro);
});

it('the default page is 20; offset pages on without overlap; bad bounds are refused before any call', async () => {
  const first = await t.gql<Page>('{ searchMunicipalities(region: "Lombardia") { istatCode } }', {}, bearer);
  const second = await t.gql<Page>('{ searchMunicipalities(region: "Lombardia", offset: 20) { istatCode } }', {}, bearer);
  const both = await t.gql<Page>('{ searchMunicipalities(region: "Lombardia", limit: 40) { istatCode } }', {}, bearer);
  const a = first.data!.searchMunicipalities.map((m) => m.istatCode);
  const b = second.data!.searchMunicipalities.map((m) => m.istatCode);
  expect(a).toHaveLength(20);
  expect(b).toHaveLength(20);
  expect([...a, ...b]).toEqual(both.data!.searchMunicipalities.map((m) => m.istatCode));
  // One search answered all three (the same cached cerca_comuni).
  expect((await t.calls('cap')).map((c) => c.path)).toEqual(['/cerca_comuni']);
  const last = await t.gql<Page>('{ searchMunicipalities(region: "Lombardia", offset: 1500, limit: 50) { istatCode } }', {}, bearer);
  // The last page (Lombardia's ~1,500 municipalities, living and suppressed): fewer than `limit`.
  expect(last.data!.searchMunicipalities.length).toBeGreaterThan(0);
  expect(last.data!.searchMunicipalities.length).toBeLessThan(50);
  await t.clearCalls();
  for (const args of ['limit: 51', 'limit: 0', 'offset: -1']) {
    const res = await t.gql(`{ searchMunicipalities(region: "Lombardia", ${args}) { istatCode } }`, {}, bearer);
    expect(res.errors?.[0]?.extensions?.code, args).toBe('BAD_USER_INPUT');
  }
  expect(await t.calls('cap')).toEqual([]);
});

it('postal code 24060 (44 municipalities): its estimate covers what it spends', async () => {
  const res = await t.gql<{ postalCode: { places: Array<{ municipality: { name: string; details: unknown } }> } }>(
    '{ postalCode(code: "24060") { places { municipality { name details { population } } } } }',
    {},
    bearer,
  );
  expect(res.errors).toBeUndefined();
  expect(res.data!.postalCode.places).toHaveLength(44);
  const cost = res.extensions!.cost!;
  expect((await t.calls('cap')).filter((c) => c.path.startsWith('/comuni_advance/'))).toHaveLength(44);
  expect(cost.estimate!.euro).toBeGreaterThanOrEqual(cost.euro);
});

it('completion is case-folded before searching: ROMA, Roma and roma make one call', async () => {
  const names: string[][] = [];
  for (const prefix of ['ROMA', 'Roma', 'roma', 'rOmA']) {
    const res = await t.gql<{ completeMunicipality: Array<{ name: string }> }>('query ($p: String!) { completeMunicipality(prefix: $p) { name } }', { p: prefix }, bearer);
    expect(res.errors).toBeUndefined();
    names.push(res.data!.completeMunicipality.map((m) => m.name));
  }
  expect(names[0]).toContain('Roma');
  for (const n of names) expect(n).toEqual(names[0]);
  expect((await t.calls('cap')).map((c) => c.path)).toEqual(['/cerca_comuni']);
});
