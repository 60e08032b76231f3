/**
 * Money through the gateway: one budget per client operation across every subgraph and entity
 * fetch, the worst-case estimate before spending (and alone, without executing), the tenant's daily
 * budget, money at risk when a paid call's answer is lost, "not found" remembered, and stale data
 * when the upstream fails. The emulator's call log and wallet are the ground truth.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeItalianVat } from '../../../contract/checksums.ts';
import { isRegistered } from '../../../emulator/company/index.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';

const TRASPORTI = '03456783053'; // level 3 of the ALFA group: three company shareholders up to the top
const BETA_SERVIZI = '04123450159'; // two company shareholders
const OPENAPI_SPA = '12485671007';
const NOT_REGISTERED = (() => {
  for (let n = 2000000; ; n++) {
    const vat = makeItalianVat(String(n).padStart(10, '0'));
    if (!isRegistered(vat)) return vat;
  }
})();

/** Walks up `levels` of company shareholders, with a top credit score at each level. */
function walk(vat: string, levels: number): string {
  let inner = 'companyName creditScore(level: TOP) { score }';
  for (let i = 0; i < levels; i++) inner = `companyName creditScore(level: TOP) { score } shareholders { owners { ... on ShareholderCompany { company { ${inner} } } } }`;
  return `{ company(vatCode: "${vat}") { ${inner} } }`;
}

let t: TestStack;
let now = Date.parse('2026-11-23T10:00:00Z');

beforeAll(async () => {
  t = await startTestStack({ OPENAPI_RETRY_BASE_MS: '5', OPENAPI_TIMEOUT_MS: '1500' }, { clock: () => now });
});
afterAll(async () => {
  await t?.close();
});
beforeEach(async () => {
  await t.cold();
  await t.control('faults', {}).catch(() => undefined);
  await fetch(`${t.stack.emulatorUrl}/_emulator/faults`, { method: 'DELETE' });
});

describe('the estimate', () => {
  it('refuses a four-level ownership walk with credit scores before any call', async () => {
    const res = await t.gql(walk(TRASPORTI, 3));
    expect(res.errors?.map((e) => e.extensions?.code)).toEqual(['COST_LIMIT_EXCEEDED']);
    expect(res.extensions?.cost?.estimate?.euro).toBeGreaterThan(50);
    expect(await t.calls()).toEqual([]);
  });

  it('refuses 20 root and 20 nested top credit scores (€120 worst case) before any call', async () => {
    const vats = Array.from({ length: 20 }, (_, i) => makeItalianVat(String(3000000 + i).padStart(10, '0')));
    const q = `{ ${vats.map((v, i) => `r${i}: creditScore(vatCode: "${v}", level: TOP) { score } c${i}: company(vatCode: "${v}") { creditScore(level: TOP) { score } }`).join(' ')} }`;
    const res = await t.gql(q);
    expect(res.errors?.map((e) => e.extensions?.code)).toEqual(['COST_LIMIT_EXCEEDED']);
    expect(res.extensions?.cost?.estimate?.euro).toBeGreaterThanOrEqual(120);
    expect(await t.calls()).toEqual([]);
  });

  it('is on every response, never below what was spent', async () => {
    const res = await t.gql(walk(BETA_SERVIZI, 1));
    expect(res.errors).toBeUndefined();
    const cost = res.extensions!.cost!;
    expect(cost.euro).toBeGreaterThan(0);
    expect(cost.estimate!.euro).toBeGreaterThanOrEqual(cost.euro);
    expect(cost.estimate!.breakdown.map((b) => b.field).sort()).toEqual(['Company', 'Company.creditScore']);
    // What the emulator charged is what was reported.
    const charged = (await t.calls()).reduce((sum, c) => sum + c.price, 0);
    expect(cost.euro).toBeCloseTo(charged, 6);
  });

  it('can be asked for alone, without executing (header or request extension)', async () => {
    const byHeader = await t.gql(walk(BETA_SERVIZI, 1), undefined, { 'x-openapi-estimate-only': 'true' });
    expect(byHeader.data ?? null).toBeNull();
    expect(byHeader.errors).toBeUndefined();
    expect(byHeader.extensions?.cost).toMatchObject({ executed: false, upstreamCalls: 0, euro: 0 });
    expect(byHeader.extensions?.cost?.estimate?.euro).toBeGreaterThan(3);
    const res = await fetch(t.stack.gateway.graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: `mutation { orderPatrimonialReport(level: TOP, input: { name: "MARIO", surname: "ROSSI", taxCode: "RSSMRA80A01H501U" }) { id } }`,
        extensions: { cost: { estimateOnly: true } },
      }),
    });
    const body = (await res.json()) as { extensions: { cost: { estimate: { euro: number }; executed: boolean } } };
    expect(body.extensions.cost).toMatchObject({ executed: false, estimate: { euro: 25 } });
    expect(await t.calls()).toEqual([]);
  });

  it('applies the defaults of variables', async () => {
    const vat = makeItalianVat('0400000001');
    const score = await t.gql(`query($l: CreditScoreLevel = TOP) { creditScore(vatCode: "${vat}", level: $l) { score } }`, undefined, { 'x-openapi-estimate-only': '1' });
    expect(score.extensions?.cost?.estimate?.euro).toBe(3);
    const order = await t.gql(
      `mutation($l: PatrimonialLevel = TOP_SUPERVISED) { orderPatrimonialReport(level: $l, input: { name: "MARIO", surname: "ROSSI", taxCode: "RSSMRA80A01H501U" }) { id } }`,
      undefined,
      { 'x-openapi-estimate-only': '1' },
    );
    expect(order.extensions?.cost?.estimate?.euro).toBe(35);
    const skipped = await t.gql(`query($s: Boolean = true) { creditScore(vatCode: "${vat}", level: TOP) @skip(if: $s) { score } }`, undefined, { 'x-openapi-estimate-only': '1' });
    expect(skipped.errors).toBeUndefined();
    expect(skipped.extensions?.cost?.estimate?.euro).toBe(0);
  });

  it('counts paid fields on every search item, and company purchases on at most 25 of them', async () => {
    const res = await t.gql(`{ searchCompanies(filter: { province: "MI" }, limit: 50) { items { companyName creditScore(level: START) { score } } } }`, undefined, {
      'x-openapi-estimate-only': '1',
    });
    // IT-search €0.01 + 50 × €0.50 (search items carry the name: no company purchase)
    expect(res.extensions?.cost?.estimate?.euro).toBe(25.01);
    const actual = await t.gql(`{ searchCompanies(filter: { province: "MI" }, limit: 10) { items { companyName creditScore(level: START) { score } } } }`);
    expect(actual.errors).toBeUndefined();
    expect(actual.extensions!.cost!.euro).toBeLessThanOrEqual(actual.extensions!.cost!.estimate!.euro);
  });

  it('prices paid fields however deeply fragments nest them', async () => {
    let body = Array.from({ length: 20 }, (_, i) => `s${i}: creditScore(vatCode: "${makeItalianVat(String(4500000 + i).padStart(10, '0'))}", level: TOP) { score }`).join(' ');
    for (let i = 0; i < 70; i++) body = `... on Query { ${body} }`;
    const res = await t.gql(`{ ${body} }`);
    expect(res.errors?.map((e) => e.extensions?.code)).toEqual(['COST_LIMIT_EXCEEDED']);
    expect(res.extensions?.cost?.estimate?.euro).toBe(60);
    expect(await t.calls()).toEqual([]);
  });

  it('is zero for free operations and for operations refused before execution', async () => {
    const free = await t.gql(`{ __typename }`);
    expect(free.extensions?.cost).toMatchObject({ euro: 0, estimate: { euro: 0 } });
    const invalid = await t.gql(`{ nope }`);
    expect(invalid.extensions?.cost).toMatchObject({ euro: 0, upstreamCalls: 0, estimate: { euro: 0 } });
  });
});

describe('one budget per operation', () => {
  it('holds across every subgraph and entity fetch of the query plan', async () => {
    // The estimate assumes one owner here, so it passes; BETA SERVIZI has two company owners.
    const s = await startTestStack({ OPENAPI_ESTIMATE_LIST_SIZE: '1', OPENAPI_MAX_EURO_PER_OPERATION: '6.2' });
    try {
      const res = await s.gql(walk(BETA_SERVIZI, 1));
      const cost = res.extensions!.cost!;
      expect(cost.estimate!.euro).toBeLessThanOrEqual(6.2);
      // The root's IT-advanced and score (€3.15) fit; the owners' names come with the root's payload
      // and the hop to the risk subgraph is by lookupCode, so the owners cost no company purchase.
      // One owner's €3 score fits (€6.15), the other's does not (€9.15 > €6.2). With a budget per
      // subgraph request, the risk entity fetch of the two owners (€6) would have fit, and €9.15
      // been spent.
      expect(res.errors?.map((e) => [e.extensions?.code, e.extensions?.scope])).toEqual([['COST_LIMIT_EXCEEDED', 'operation']]);
      const calls = await s.calls();
      expect(calls.filter((c) => c.area === 'company').map((c) => `${c.method} ${c.path}`)).toEqual([`GET /IT-advanced/${BETA_SERVIZI}`]);
      const scores = calls.filter((c) => c.path.startsWith('/IT-creditscore-top/')).map((c) => c.path.split('/')[2]);
      expect(scores).toHaveLength(2);
      expect(scores).toContain(BETA_SERVIZI);
      const charged = calls.reduce((sum, c) => sum + c.price, 0);
      expect(charged).toBeCloseTo(6.15, 6);
      expect(cost.estimate!.euro).toBeGreaterThanOrEqual(charged);
      expect(cost.euro).toBeCloseTo(charged, 6);
      expect(cost.budget?.operation).toMatchObject({ limit: 6.2 });
      expect(cost.budget!.operation.remaining!).toBeCloseTo(6.2 - charged, 6);
    } finally {
      await s.close();
    }
  });
});

describe('the daily budget of a tenant', () => {
  it('holds across operations and says what remains', async () => {
    const s = await startTestStack({ OPENAPI_MAX_EURO_PER_DAY: '1.2' });
    try {
      const a = await s.gql(`{ company(vatCode: "${OPENAPI_SPA}") { creditScore(level: ADVANCED) { score } } }`);
      expect(a.errors).toBeUndefined();
      // The score alone (€1): the company is known by its VAT number, nothing of it is bought.
      expect(a.extensions?.cost?.budget?.day).toEqual({ limit: 1.2, committed: 1, remaining: 0.2 });
      const b = await s.gql(`{ company(vatCode: "${BETA_SERVIZI}") { companyName creditScore(level: START) { score } } }`);
      expect(b.errors?.map((e) => [e.path?.join('.'), e.extensions?.code, e.extensions?.scope])).toEqual([['company.creditScore', 'COST_LIMIT_EXCEEDED', 'day']]);
      // The name (IT-name €0.02) fits, the €0.50 score does not.
      expect(b.extensions?.cost?.budget?.day).toEqual({ limit: 1.2, committed: 1.02, remaining: 0.18 });
      // Another tenant has its own day.
      const other = await s.createToken(100);
      const c = await s.gql(`{ company(vatCode: "${BETA_SERVIZI}") { creditScore(level: START) { score } } }`, undefined, { authorization: `Bearer ${other}` });
      expect(c.errors).toBeUndefined();
      expect(c.extensions?.cost?.budget?.day).toMatchObject({ committed: 0.5, remaining: 0.7 });
    } finally {
      await s.close();
    }
  });
});

describe('parallel purchases for one company', () => {
  it('are each admitted by the ledger before they are sent', async () => {
    // The day's budget is checked on each paid call. The profile's plan is IT-stakeholders (€0.50)
    // + IT-advanced (€0.15), sent in parallel: €0.65 against €0.60, so one of them is refused
    // before it leaves, and no more than the budget is spent.
    const s = await startTestStack({ OPENAPI_MAX_EURO_PER_DAY: '0.6' });
    try {
      const res = await s.gql(`{ company(vatCode: "${OPENAPI_SPA}") { companyName managers { __typename } shareholders { percentShare } ecofin { turnover } } }`);
      expect(res.data?.company ?? null).toBeNull();
      expect(res.errors?.map((e) => [e.path?.join('.'), e.extensions?.code, e.extensions?.scope])).toEqual([['company', 'COST_LIMIT_EXCEEDED', 'day']]);
      const calls = await s.calls('company');
      expect(calls).toHaveLength(1);
      expect([`/IT-stakeholders/${OPENAPI_SPA}`, `/IT-advanced/${OPENAPI_SPA}`]).toContain(calls[0].path);
      const charged = calls.reduce((sum, c) => sum + c.price, 0);
      expect(charged).toBeLessThanOrEqual(0.6);
      expect(res.extensions?.cost?.euro).toBeCloseTo(charged, 6);
      expect(res.extensions?.cost?.budget?.day).toEqual({ limit: 0.6, committed: charged, remaining: Math.round((0.6 - charged) * 1e4) / 1e4 });
    } finally {
      await s.close();
    }
  });
});

describe('money at risk', () => {
  it('reports a paid read whose answer was lost, and the wallet agrees', async () => {
    const token = await t.createToken(100);
    // The name is bought from IT-name (€0.02): carried out and charged upstream, its answer comes
    // after the layer gave up.
    await t.control('faults', { area: 'company', pathPrefix: `/IT-name/${OPENAPI_SPA}`, delayAfterMs: 2500, count: 1 });
    const res = await t.gql(`{ company(vatCode: "${OPENAPI_SPA}") { companyName } }`, undefined, { authorization: `Bearer ${token}` });
    expect(res.errors).toBeUndefined(); // the retry answered
    const cost = res.extensions!.cost!;
    expect(cost).toMatchObject({ upstreamCalls: 2, euro: 0.02, atRisk: 0.02 });
    expect(cost.calls.filter((c) => c.atRisk)).toEqual([expect.objectContaining({ status: 0, euro: 0, atRisk: 0.02 })]);
    // Once the emulator has finished the lost call, the wallet shows both charges.
    await expect.poll(async () => (await t.calls('company')).length, { timeout: 5000 }).toBe(2);
    expect(100 - (await t.credit(token))).toBeCloseTo(cost.euro + cost.atRisk!, 6);
  });

  it('reports a paid read whose connection was reset after the upstream charged', async () => {
    const token = await t.createToken(100);
    await t.control('faults', { area: 'company', pathPrefix: `/IT-name/${OPENAPI_SPA}`, reset: true, count: 1 });
    const res = await t.gql(`{ company(vatCode: "${OPENAPI_SPA}") { companyName } }`, undefined, { authorization: `Bearer ${token}` });
    expect(res.errors).toBeUndefined();
    expect(res.extensions?.cost).toMatchObject({ upstreamCalls: 2, euro: 0.02, atRisk: 0.02 });
    expect(100 - (await t.credit(token))).toBeCloseTo(0.04, 6);
  });
});

describe('not found', () => {
  it('is remembered for the tenant, not bought again', async () => {
    const q = `{ company(vatCode: "${NOT_REGISTERED}") { companyName } }`;
    const first = await t.gql(q);
    expect(first.errors?.map((e) => e.extensions?.code)).toEqual(['UPSTREAM_NOT_FOUND']);
    const second = await t.gql(q);
    expect(second.errors?.map((e) => e.extensions?.code)).toEqual(['UPSTREAM_NOT_FOUND']);
    expect(second.extensions?.cost).toMatchObject({ upstreamCalls: 0, cacheHits: 1, euro: 0 });
    expect(await t.calls('company')).toHaveLength(1);
    // Another tenant asks the register itself.
    const other = await t.createToken(10);
    await t.gql(q, undefined, { authorization: `Bearer ${other}` });
    expect(await t.calls('company')).toHaveLength(2);
    // After the configured time (600 s by default) it is asked again.
    now += 601_000;
    await t.gql(q);
    expect(await t.calls('company')).toHaveLength(3);
  });
});

describe('slow datasets', () => {
  it('are never bought twice when the polls fail: the next query resumes the one paid for', async () => {
    // Polling mode (GET, 302 → IT-check_id), where the polls can fail.
    const p = await startTestStack({ OPENAPI_RETRY_BASE_MS: '5', OPENAPI_TIMEOUT_MS: '1500', COMPANY_SLOW_PURCHASE: 'poll' });
    try {
      // Not ready within the GET's wait (0 here): 302 at once, then the polls.
      await p.control('company/slow', { ms: 1500, waitMs: 0 });
      // managers + turnover: IT-stakeholders (slow) + IT-advanced, €0.65.
      const q = `{ company(vatCode: "${BETA_SERVIZI}") { managers { __typename } ecofin { turnover } } }`;
      // Every poll of the first query fails (the check id answers 503 on each attempt).
      await p.control('faults', { area: 'company', pathPrefix: '/IT-check_id/', status: 503, count: 3 });
      const first = await p.gql(q);
      expect(first.errors?.map((e) => e.extensions?.code)).toEqual(['UPSTREAM_UNAVAILABLE']);
      const second = await p.gql(q);
      expect(second.errors).toBeUndefined();
      const calls = await p.calls('company');
      expect(calls.filter((c) => c.path.startsWith('/IT-stakeholders/'))).toHaveLength(1);
      expect(calls.filter((c) => c.path.startsWith('/IT-advanced/'))).toHaveLength(1);
      expect(first.extensions!.cost!.euro + second.extensions!.cost!.euro).toBeCloseTo(0.65, 6);
    } finally {
      await p.close();
    }
  });
});

describe('stale answers', () => {
  it('answer from the expired copy when the upstream fails, and say so', async () => {
    const q = `{ company(vatCode: "${OPENAPI_SPA}") { companyName address { town } } }`;
    const fresh = await t.gql<{ company: { companyName: string } }>(q);
    expect(fresh.errors).toBeUndefined();
    now += 25 * 3600_000; // past IT-address's day of freshness, within the default day of staleness
    await t.control('faults', { area: 'company', pathPrefix: '/IT-address/', status: 503, count: 3 });
    const stale = await t.gql<{ company: { companyName: string } }>(q);
    expect(stale.errors).toBeUndefined();
    expect(stale.data).toEqual(fresh.data);
    expect(stale.extensions?.cost).toMatchObject({ upstreamCalls: 3, staleHits: 1, euro: 0 });
    expect(stale.extensions?.cost?.calls.map((c) => c.source)).toContain('stale');
    expect(stale.extensions?.warnings?.map((w) => w.code)).toEqual(['STALE_DATA']);
  });

  it('are not used past the maximum staleness', async () => {
    const q = `{ company(vatCode: "${OPENAPI_SPA}") { companyName } }`;
    expect((await t.gql(q)).errors).toBeUndefined();
    now += 49 * 3600_000;
    await t.control('faults', { area: 'company', pathPrefix: '/IT-name/', status: 503, count: 3 });
    const res = await t.gql(q);
    expect(res.errors?.map((e) => e.extensions?.code)).toEqual(['UPSTREAM_UNAVAILABLE']);
    expect(res.extensions?.warnings).toBeUndefined();
  });
});
