/**
 * Spend you can see: `Query.spending` through the gateway, per tenant (the caller's token) and
 * upstream area, today and this month, against the budgets. The emulator's wallets and call log are
 * the ground truth: after a few paid operations of two callers, each one's spending matches what its
 * wallet lost, to the cent, area by area.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { DEFAULT_TOKEN } from '../../../emulator/server.ts';

const BETA_SERVIZI = '04123450159';
const OPENAPI_SPA = '12485671007';

const SPENDING = `{ spending { tenant today { period total byArea { area euro } } month { period total byArea { area euro } } days { period total }
  budgets { operation day dayCommitted dayRemaining } } }`;

interface Period {
  period: string;
  total: number;
  byArea: Array<{ area: string; euro: number }>;
}
interface SpendingAnswer {
  spending: {
    tenant: string;
    today: Period;
    month: Period;
    days: Array<{ period: string; total: number }>;
    budgets: { operation: number | null; day: number | null; dayCommitted: number; dayRemaining: number | null };
  };
}

let t: TestStack;

beforeAll(async () => {
  t = await startTestStack({ OPENAPI_MAX_EURO_PER_DAY: '40', OPENAPI_MAX_EURO_PER_OPERATION: '20' });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

/** Euro each area charged to a token's wallet, from the emulator's call log (its calls carry the token's last 4 characters). */
async function chargedByArea(token: string): Promise<Record<string, number>> {
  const calls = (await (await fetch(`${t.stack.emulatorUrl}/_emulator/calls`)).json()) as Array<{ area: string; price: number; token: string | null }>;
  const out: Record<string, number> = {};
  for (const c of calls) if (c.token === `…${token.slice(-4)}` && c.price > 0) out[c.area] = Math.round(((out[c.area] ?? 0) + c.price) * 10000) / 10000;
  return out;
}

const cents = (n: number): number => Math.round(n * 100);

describe('spending through the gateway', () => {
  it("matches each caller's wallet to the cent, per area, today and this month", async () => {
    const tokens = [await t.createToken(100), await t.createToken(100)];
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    const [a, b] = tokens;
    // Caller A: company data and credit scores (two areas); caller B: one company only.
    for (const q of [
      `{ company(vatCode: "${BETA_SERVIZI}") { companyName } }`,
      `{ creditScore(vatCode: "${BETA_SERVIZI}", level: START) { score } }`,
      `{ company(vatCode: "${OPENAPI_SPA}") { companyName creditScore(level: ADVANCED) { score } } }`,
    ]) {
      const res = await t.gql(q, undefined, bearer(a));
      expect(res.errors).toBeUndefined();
      expect(res.extensions?.cost?.euro).toBeGreaterThan(0);
    }
    expect((await t.gql(`{ company(vatCode: "${OPENAPI_SPA}") { companyName } }`, undefined, bearer(b))).errors).toBeUndefined();

    const read = async (token: string) => {
      const res = await t.gql<SpendingAnswer>(SPENDING, undefined, bearer(token));
      expect(res.errors).toBeUndefined();
      // Reading the ledger costs nothing.
      expect(res.extensions?.cost).toMatchObject({ upstreamCalls: 0, euro: 0 });
      return res.data!.spending;
    };
    for (const token of tokens) {
      const s = await read(token);
      const lost = 100 - (await t.credit(token));
      expect(lost).toBeGreaterThan(0);
      expect(cents(s.today.total)).toBe(cents(lost));
      expect(cents(s.month.total)).toBe(cents(lost));
      const charged = await chargedByArea(token);
      expect(Object.fromEntries(s.today.byArea.map((x) => [x.area, cents(x.euro)]))).toEqual(Object.fromEntries(Object.entries(charged).map(([k, v]) => [k, cents(v)])));
      expect(s.month.byArea).toEqual(s.today.byArea);
      expect(s.days).toEqual([{ period: s.today.period, total: s.today.total }]);
      expect(s.month.period).toBe(s.today.period.slice(0, 7));
      expect(s.budgets).toEqual({ operation: 20, day: 40, dayCommitted: s.today.total, dayRemaining: Math.round((40 - s.today.total) * 10000) / 10000 });
    }
    const [sa, sb] = [await read(a), await read(b)];
    expect(sa.tenant).not.toBe(sb.tenant);
    expect(sa.today.byArea.map((x) => x.area).sort()).toEqual(['company', 'risk']);
    expect(sb.today.byArea.map((x) => x.area)).toEqual(['company']);
  });
});

describe('spending of the layer’s own token', () => {
  it('is the operator’s to read: every caller of a service token shares its tenant', async () => {
    const key = 'spending-operator-key-0123456789';
    const svc = await startTestStack({ OPENAPI_TOKEN: DEFAULT_TOKEN, OPENAPI_MANAGED_TOKEN: 'off', OPENAPI_ACCOUNT_API_KEY: key });
    try {
      const query = '{ spending { tenant today { total } } }';
      const refused = await svc.gql(query);
      expect(refused.data).toBeNull();
      expect(refused.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      // A caller's own token changes nothing here: the service token is used for everyone.
      const asCaller = await svc.gql(query, {}, { authorization: `Bearer ${await svc.createToken(10)}` });
      expect(asCaller.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      const operator = await svc.gql<{ spending: { tenant: string } }>(query, {}, { 'x-openapi-account-key': key });
      expect(operator.errors).toBeUndefined();
      expect(operator.data?.spending.tenant).toMatch(/\S/);
      // An operation's own settlement stays readable by whoever holds its id (unguessable).
      const cost = await svc.gql<{ operationCost: { settled: boolean } }>('query($id: ID!) { operationCost(id: $id) { settled } }', { id: 'no-such-operation' });
      expect(cost.data?.operationCost.settled).toBe(true);
      expect(await svc.calls()).toEqual([]);
    } finally {
      await svc.close();
    }
  });
});
