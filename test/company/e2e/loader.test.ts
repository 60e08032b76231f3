/**
 * The company loader end to end, through the gateway against the embedded emulator: merging the
 * answers of several tiers, keeping what was paid for when another tier fails or is over budget,
 * and using the tiers already cached for a company.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack.ts';

let t: TestStack;

const OPENAPI_SPA = '12485671007';
const BETA_SERVIZI = '04123450159'; // two company shareholders

beforeAll(async () => {
  // A budget of €1: every tier but IT-full fits. No test here waits for a timeout: a generous one keeps a loaded machine from failing the slow tier.
  t = await startTestStack({ OPENAPI_RETRY_BASE_MS: '5', OPENAPI_POLL_MIN_MS: '50', OPENAPI_TIMEOUT_MS: '5000' });
});
afterAll(async () => {
  await t?.close();
});
beforeEach(async () => {
  await t.cold();
  await t.control('company/slow', { ms: 0 });
  await fetch(`${t.stack.emulatorUrl}/_emulator/faults`, { method: 'DELETE' });
});

const companyCalls = async (): Promise<string[]> => (await t.calls('company')).map((c) => `${c.method} ${c.path} ${c.status}`);

type Ecofin = { company: { balanceSheets?: Array<{ year: number }>; ecofin: { turnoverRange: { code: string } | null; turnover: number | null } | null } };

describe('two tiers of one company', () => {
  it('keep the composite tier’s turnover range when IT-advanced arrives after it', async () => {
    const q1 = `{ company(vatCode: "${OPENAPI_SPA}") { ecofin { turnoverRange { code } turnover } } }`;
    const one = await t.gql<Ecofin>(q1);
    expect(one.errors).toBeUndefined();
    const range = one.data?.company.ecofin?.turnoverRange?.code;
    expect(range).toMatch(/\S/);
    // A slow tier, bought by its GET (the default).
    expect(await companyCalls()).toEqual([`GET /IT-marketing/${OPENAPI_SPA} 200`]);

    // The composite answer comes from the cache at once, IT-advanced from upstream after it.
    const q2 = `{ company(vatCode: "${OPENAPI_SPA}") { balanceSheets { year } ecofin { turnoverRange { code } turnover } } }`;
    const two = await t.gql<Ecofin>(q2);
    expect(two.errors).toBeUndefined();
    expect(two.data?.company.balanceSheets?.length).toBeGreaterThan(0);
    expect(two.data?.company.ecofin).toEqual(one.data?.company.ecofin);
    expect(two.extensions?.cost).toMatchObject({ upstreamCalls: 1, cacheHits: 1, euro: 0.15 });
  });

  it('give the same data whichever of IT-advanced and the composite tier answers last', async () => {
    // IT-advanced holds shareholders and dates only in part (no share type, no owner since-dates).
    const q = `{ company(vatCode: "${BETA_SERVIZI}") {
      id
      dates { registrationDate startDate }
      shareholders { percentShare shareType { code } owners { __typename taxCode ... on ShareholderCompany { sinceDate town } } }
    } }`;
    type R = { company: { id: string; shareholders: Array<{ owners: Array<{ sinceDate?: string | null }> }> } };
    const lastOf = async (slowTier: string): Promise<R | null | undefined> => {
      await t.cold();
      await t.control('faults', { area: 'company', pathPrefix: `/${slowTier}/`, hangMs: 300, count: 1 });
      const res = await t.gql<R>(q);
      expect(res.errors).toBeUndefined();
      expect((await companyCalls()).map((c) => c.split('/')[1]).sort()).toEqual(['IT-advanced', 'IT-stakeholders']);
      return res.data;
    };
    const stakeholdersLast = await lastOf('IT-stakeholders');
    const advancedLast = await lastOf('IT-advanced');
    expect(stakeholdersLast?.company.id).toMatch(/^[0-9a-f]{24}$/);
    expect(stakeholdersLast?.company.shareholders.flatMap((s) => s.owners).some((o) => typeof o.sinceDate === 'string')).toBe(true);
    expect(advancedLast).toEqual(stakeholdersLast);
  });
});

describe('a failed or over-budget tier', () => {
  it('does not take away what another tier already bought', async () => {
    await t.control('faults', { area: 'company', pathPrefix: '/IT-stakeholders', status: 404, count: 5 });
    const res = await t.gql<{ a: { id: string } | null; b: unknown }>(
      `{ a: company(vatCode: "${OPENAPI_SPA}") { id } b: company(vatCode: "${OPENAPI_SPA}") { managers { __typename } } }`,
    );
    expect(res.data?.a?.id).toMatch(/^[0-9a-f]{24}$/);
    expect(res.data?.b).toBeNull();
    expect(res.errors?.map((e) => [e.path?.join('.'), e.extensions?.code])).toEqual([['b', 'UPSTREAM_NOT_FOUND']]);
    // One plan for both: IT-name (the id, €0.02) + IT-stakeholders (€0.50), in parallel.
    expect((await companyCalls()).sort()).toEqual([`GET /IT-name/${OPENAPI_SPA} 200`, `GET /IT-stakeholders/${OPENAPI_SPA} 404`]);
    expect(res.extensions?.cost).toMatchObject({ euro: 0.02 });
  });

  it('is retried by a later need of the same company in the operation, unless it was not found', async () => {
    type Walk = {
      a: { address: { town: string } | null } | null;
      b: { shareholders: Array<{ owners: Array<{ taxCode: string; company?: { address: { town: string } | null } | null }> }> };
    };
    const walk = (owner: string) => `{
      a: company(vatCode: "${owner}") { address { town } }
      b: company(vatCode: "${BETA_SERVIZI}") { shareholders { owners { taxCode ... on ShareholderCompany { company { address { town } } } } } }
    }`;
    const probe = await t.gql<Walk>(walk(OPENAPI_SPA));
    const owner = probe.data?.b.shareholders.flatMap((s) => s.owners).find((o) => o.company)?.taxCode;
    expect(owner).toMatch(/^\d{11}$/);
    await t.cold();

    // The owner's first purchase fails (every retry answered 500); the nested hop asks again.
    // The owner's address: IT-address (€0.03).
    await t.control('faults', { area: 'company', pathPrefix: `/IT-address/${owner}`, status: 500, count: 3 });
    const res = await t.gql<Walk>(walk(owner!));
    expect(res.data?.a).toBeNull();
    expect(res.errors?.map((e) => [e.path?.join('.'), e.extensions?.code])).toEqual([['a', 'UPSTREAM_UNAVAILABLE']]);
    const nested = res.data?.b.shareholders.flatMap((s) => s.owners).find((o) => o.taxCode === owner);
    expect(nested?.company?.address?.town).toMatch(/\S/);
    const ownerCalls = (await companyCalls()).filter((c) => c.includes(owner!));
    expect(ownerCalls).toEqual([500, 500, 500, 200].map((s) => `GET /IT-address/${owner} ${s}`));
  });

  it('answers the keys that fit the budget when their union does not', async () => {
    // The day's budget is checked on each paid call (the estimate is checked against the operation's).
    const d = await startTestStack({ OPENAPI_MAX_EURO_PER_DAY: '1' });
    try {
      const res = await d.gql<{ a: { companyName: string } | null; b: unknown }>(
        `{ a: company(vatCode: "${OPENAPI_SPA}") { companyName } b: company(vatCode: "${OPENAPI_SPA}") { ratios { profitability { __typename } } } }`,
      );
      expect(res.data?.a?.companyName).toBe('OPENAPI S.P.A.');
      expect(res.data?.b).toBeNull();
      expect(res.errors?.map((e) => [e.path?.join('.'), e.extensions?.code, e.extensions?.scope])).toEqual([['b', 'COST_LIMIT_EXCEEDED', 'day']]);
      // The union (IT-full €1.50) is over the day's €1; the name alone (IT-name €0.02) fits.
      expect((await d.calls('company')).map((c) => `${c.method} ${c.path} ${c.status}`)).toEqual([`GET /IT-name/${OPENAPI_SPA} 200`]);
      expect(res.extensions?.cost).toMatchObject({ upstreamCalls: 1, euro: 0.02, budget: { day: { limit: 1, committed: 0.02, remaining: 0.98 } } });
    } finally {
      await d.close();
    }
  });
});

describe('tiers already cached', () => {
  it('answer what they cover without buying a cheaper tier', async () => {
    const rich = await t.gql(`{ company(vatCode: "${OPENAPI_SPA}") { managers { __typename } ecofin { turnoverRange { code } } } }`);
    expect(rich.errors).toBeUndefined();
    // managers + turnover range: IT-aml (€0.90) is cheaper than IT-stakeholders + IT-marketing (€1.00).
    expect(await companyCalls()).toEqual([`GET /IT-aml/${OPENAPI_SPA} 200`]);

    const res = await t.gql<{ company: { companyName: string; address: { town: string } } }>(`{ company(vatCode: "${OPENAPI_SPA}") { companyName address { town } } }`);
    expect(res.errors).toBeUndefined();
    expect(res.data?.company.companyName).toMatch(/OPENAPI/);
    expect(res.data?.company.address.town).toMatch(/\S/);
    expect(await companyCalls()).toEqual([`GET /IT-aml/${OPENAPI_SPA} 200`]);
    expect(res.extensions?.cost).toMatchObject({ upstreamCalls: 0, cacheHits: 1, euro: 0 });
  });

  it('are not used when they do not cover the need: the plan is as without them', async () => {
    await t.gql(`{ company(vatCode: "${OPENAPI_SPA}") { companyName } }`);
    await t.clearCalls();
    const res = await t.gql(`{ company(vatCode: "${OPENAPI_SPA}") { companyName managers { __typename } } }`);
    expect(res.errors).toBeUndefined();
    // The cached IT-name holds the name but not the managers: IT-stakeholders alone (one call) holds both.
    expect(await companyCalls()).toEqual([`GET /IT-stakeholders/${OPENAPI_SPA} 200`]);
    expect(res.extensions?.cost).toMatchObject({ upstreamCalls: 1, cacheHits: 0, euro: 0.5 });
  });
});
