/**
 * Slow company datasets bought by the GET (`COMPANY_SLOW_PURCHASE=get`, the default), through the
 * gateway against the emulator: the vendor's GET waits for the dataset (up to its limit, set small
 * here) and answers 302 → IT-check_id past that. The emulator's clock is manual: a dataset is ready
 * when the test moves it, and the GET's wait ends when the test moves it past the limit.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { registeredVats } from '../../../emulator/company/index.ts';
import { untilInFlight } from '../../support/inflight.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { waitFor } from '../../support/wait.ts';

const MANAGERS = `query($vat: String!) { company(vatCode: $vat) { managers { __typename } } }`;
const LAYER_SECRET = 'test-company-slow-get-secret-0123456789';
/** Distinct cold companies, one set per test. */
const VATS = registeredVats(2400, 8);

let t: TestStack;

beforeAll(async () => {
  // A public URL is known (the callback flow could be used): the GET is still the default.
  t = await startTestStack({ LAYER_SECRET, OPENAPI_RETRY_BASE_MS: '5', OPENAPI_POLL_MIN_MS: '10', OPENAPI_POLL_MAX_MS: '20' });
}, 120_000);
afterAll(async () => {
  await t?.close();
}, 120_000);
beforeEach(async () => {
  await t.clock.manual();
  await t.clearCalls();
});
afterEach(async () => {
  await t.control('company/slow', {});
  await t.clock.real();
});

/** Until `n` GETs of a slow dataset are held by the emulator, waiting for it (a job each on its clock). */
async function untilGetsWait(n = 1): Promise<void> {
  await waitFor(async () => (await t.clock.state()).jobs.filter((j) => j.label.endsWith(' wait')).length >= n, `${n} slow GET(s) waiting on the emulator's clock`, { every: 1 });
}

/** Until the emulator has logged a call matching `pred` (the calls are logged as they are answered). */
async function untilCall(pred: (c: { method: string; path: string; status: number }) => boolean): Promise<void> {
  await waitFor(async () => (await t.calls('company')).some(pred), 'the call in the emulator log', { every: 1 });
}

const summary = async (): Promise<string[]> => (await t.calls('company')).map((c) => `${c.method} ${c.path.replace(/[0-9a-f]{24}$/, '<id>')} ${c.status}`);

describe('a slow dataset bought by the GET', () => {
  it('is bought once by the GET when it is ready within the vendor wait: no POST, no poll', async () => {
    const vat = VATS[0];
    await t.control('company/slow', { ms: 300 });
    const profile = t.gql(MANAGERS, { vat });
    await untilGetsWait();
    await t.clock.advance(300);
    const res = await profile;
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    expect(await summary()).toEqual([`GET /IT-stakeholders/${vat} 200`]);
    expect(res.extensions?.cost).toMatchObject({ upstreamCalls: 1, euro: 0.5 });
    // Cached: the next profile buys nothing.
    expect((await t.gql(MANAGERS, { vat })).extensions?.cost).toMatchObject({ upstreamCalls: 0, euro: 0 });
    expect(await t.calls('company')).toHaveLength(1);
  });

  it('past the wait, follows the 302 by IT-check_id polls (free): bought once, even by a profile asked meanwhile', async () => {
    const vat = VATS[1];
    await t.control('company/slow', { ms: 5000, waitMs: 1000 });
    const first = t.gql(MANAGERS, { vat });
    await untilGetsWait();
    await t.clock.advance(1000);
    await untilCall((c) => c.path === `/IT-stakeholders/${vat}` && c.status === 302);
    await untilCall((c) => c.path.startsWith('/IT-check_id/'));
    // A second profile while the dataset is still pending joins the paid request.
    const second = t.gql(MANAGERS, { vat });
    await t.clock.advance(4000);
    const [a, b] = await Promise.all([first, second]);
    expect(a.errors, JSON.stringify(a.errors)).toBeUndefined();
    expect(b.errors, JSON.stringify(b.errors)).toBeUndefined();
    expect(b.data).toEqual(a.data);
    const calls = await summary();
    expect(calls[0]).toBe(`GET /IT-stakeholders/${vat} 302`);
    expect(calls.filter((c) => c.includes('/IT-stakeholders/'))).toEqual([`GET /IT-stakeholders/${vat} 302`]);
    expect(calls.slice(1).every((c) => c.startsWith('GET /IT-check_id/<id> 200'))).toBe(true);
    expect(calls.filter((c) => c.startsWith('POST'))).toEqual([]);
    expect(a.extensions!.cost!.euro + b.extensions!.cost!.euro).toBeCloseTo(0.5, 6);
  });

  it('20 concurrent identical cold profiles buy it once', async () => {
    const vat = VATS[2];
    await t.control('company/slow', { ms: 300 });
    const profiles = Array.from({ length: 20 }, () => t.gql(MANAGERS, { vat }));
    await untilGetsWait();
    await t.clock.advance(300);
    const answers = await Promise.all(profiles);
    for (const res of answers) expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    expect(await summary()).toEqual([`GET /IT-stakeholders/${vat} 200`]);
    expect(answers.reduce((sum, r) => sum + (r.extensions?.cost?.euro ?? 0), 0)).toBeCloseTo(0.5, 6);
  });

  it('20 concurrent identical cold profiles past the wait buy it once, then poll the one request', async () => {
    const vat = VATS[3];
    await t.control('company/slow', { ms: 2000, waitMs: 1000 });
    const profiles = Array.from({ length: 20 }, () => t.gql(MANAGERS, { vat }));
    await untilGetsWait();
    await t.clock.advance(1000);
    await untilCall((c) => c.path.startsWith('/IT-check_id/'));
    await t.clock.advance(1000);
    const answers = await Promise.all(profiles);
    for (const res of answers) expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    const calls = await summary();
    expect(calls.filter((c) => !c.startsWith('GET /IT-check_id/<id> 200'))).toEqual([`GET /IT-stakeholders/${vat} 302`]);
    expect(new Set((await t.calls('company')).filter((c) => c.path.startsWith('/IT-check_id/')).map((c) => c.path)).size).toBe(1);
  });
});

describe('a slow GET left unanswered', () => {
  it.each([
    ['its connection reset after the vendor ran it', { reset: true }],
    ['a 504 from a proxy', { status: 504 }],
  ] as const)('is not sent again (it may have bought the dataset), its price said at risk: %s', async (_what, fault) => {
    // A forced timeout shorter than the slow GET's own does not cut it short (the vendor holds it up to 30 s).
    const p = await startTestStack({ OPENAPI_RETRY_BASE_MS: '5', OPENAPI_TIMEOUT_MS: '300' });
    try {
      const vat = VATS[4];
      await p.control('faults', { area: 'company', pathPrefix: '/IT-stakeholders/', count: 1, ...fault });
      const res = await p.gql(MANAGERS, { vat });
      expect(res.errors?.length).toBe(1);
      expect(res.errors?.[0]?.extensions).toMatchObject({ outcome: 'unknown', atRisk: 0.5 });
      expect(JSON.stringify(res.extensions?.cost)).toMatch(/"atRisk":0\.5\b/);
      await untilInFlight(p.stack.emulatorUrl!, 'none');
      expect((await p.calls('company')).filter((c) => c.path.startsWith('/IT-stakeholders/'))).toHaveLength(1);
      // Marked sent before it left, the mark kept after no answer: asked again, it is not bought again.
      const again = await p.gql(MANAGERS, { vat });
      expect(again.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_PENDING', outcome: 'unknown' });
      expect(again.extensions?.cost).toMatchObject({ upstreamCalls: 0, euro: 0, atRisk: 0 });
      expect((await p.calls('company')).filter((c) => c.path.startsWith('/IT-stakeholders/'))).toHaveLength(1);
    } finally {
      await p.close();
    }
  });
});
