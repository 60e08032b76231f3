/**
 * The company area's endpoints through the gateway against the emulator, with exact upstream call
 * lists: the least-euro planner's examples of issue 8 (calls for one company run in parallel, so
 * the set is asserted, not the order), the fields bought from a single-purpose endpoint only when
 * selected (arguments validated before any call, upstream errors on that field alone), the
 * estimate never below what is spent, and cached sources counted as free.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeItalianVat } from '../../../contract/checksums.ts';
import { isRegistered } from '../../../emulator/company/index.ts';
import { cheapestEndpoint, facetsForPaths } from '../../../subgraphs/company/facets.ts';
import { startTestStack, type GraphQLResponse, type TestStack } from '../../support/stack.ts';

const OPENAPI_SPA = '12485671007';
const CEASED = '05234560158'; // VECCHIA FORNACE: activity ceased on 2021-06-30
const PUBLIC_BODY = '08567891000'; // AZIENDA SPECIALE SERVIZI MUNICIPALI: listed by IT-pa and IT-splitpayment
const NOT_REGISTERED = (() => {
  for (let n = 5000000; ; n++) {
    const vat = makeItalianVat(String(n).padStart(10, '0'));
    if (!isRegistered(vat)) return vat;
  }
})();

let t: TestStack;

beforeAll(async () => {
  t = await startTestStack({ OPENAPI_RETRY_BASE_MS: '5', OPENAPI_TIMEOUT_MS: '1500' });
});
afterAll(async () => {
  await t?.close();
});
beforeEach(async () => {
  await t.cold();
  await fetch(`${t.stack.emulatorUrl}/_emulator/faults`, { method: 'DELETE' });
});

/** The company calls the emulator received, `METHOD /path?query`, sorted (parallel calls have no order). */
const companyCalls = async (): Promise<string[]> => (await t.calls('company')).map((c) => `${c.method} ${c.path}`).sort();

/** What the emulator charged for every call so far. */
const charged = async (): Promise<number> => Math.round((await t.calls()).reduce((sum, c) => sum + c.price, 0) * 1e6) / 1e6;

/** The gateway's estimate of an operation, without executing it. */
async function estimate(query: string): Promise<number> {
  const res = await t.gql(query, undefined, { 'x-openapi-estimate-only': 'true' });
  expect(res.extensions?.cost?.executed).toBe(false);
  return res.extensions!.cost!.estimate!.euro;
}

/** Runs an operation after its estimate; the estimate is never below what was spent. */
async function run<T = Record<string, unknown>>(query: string): Promise<GraphQLResponse<T> & { estimate: number }> {
  const est = await estimate(query);
  expect(await t.calls()).toEqual([]);
  const res = await t.gql<T>(query);
  expect(res.extensions?.cost?.euro).toBeCloseTo(await charged(), 6);
  expect(est).toBeGreaterThanOrEqual(res.extensions!.cost!.euro);
  return { ...res, estimate: est };
}

describe('the least total euro that covers the need', () => {
  it('profile (identity, address, managers, shareholders, ecofin): IT-stakeholders + IT-advanced, €0.65 instead of IT-aml €0.90', async () => {
    const q = `{ company(vatCode: "${OPENAPI_SPA}") {
      companyName vatCode taxCode
      address { streetName zipCode town }
      managers { __typename roles { role { code } } }
      shareholders { percentShare owners { taxCode } }
      ecofin { turnover netWorth shareCapital }
    } }`;
    const res = await run<{ company: { companyName: string; managers: unknown[]; shareholders: unknown[]; ecofin: { turnover: number | null } } }>(q);
    expect(res.errors).toBeUndefined();
    // In parallel: the set, not the order.
    expect((await companyCalls()).sort()).toEqual([`GET /IT-advanced/${OPENAPI_SPA}`, `GET /IT-stakeholders/${OPENAPI_SPA}`]);
    expect(res.extensions?.cost).toMatchObject({ upstreamCalls: 2, euro: 0.65 });
    expect(res.estimate).toBe(0.65);
    // The single tier the old rule bought.
    expect(cheapestEndpoint(facetsForPaths(['companyName', 'vatCode', 'taxCode', 'address.streetName', 'managers.roles', 'shareholders.percentShare', 'ecofin.turnover']))).toBe(
      'IT-aml',
    );
    expect(res.data?.company.managers.length).toBeGreaterThan(0);
    expect(res.data?.company.shareholders.length).toBeGreaterThan(0);
    expect(typeof res.data?.company.ecofin.turnover).toBe('number');
  });

  it('status + managers: IT-start + IT-stakeholders, €0.55 instead of IT-full €1.50', async () => {
    // IT-full is the one tier holding both; the business status is also IT-start's (€0.05).
    const q = `{ company(vatCode: "${OPENAPI_SPA}") { activityStatus rawActivityStatus managers { __typename } } }`;
    const res = await run<{ company: { activityStatus: string; managers: unknown[] } }>(q);
    expect(res.errors).toBeUndefined();
    // In parallel: the set, not the order.
    expect((await companyCalls()).sort()).toEqual([`GET /IT-stakeholders/${OPENAPI_SPA}`, `GET /IT-start/${OPENAPI_SPA}`]);
    expect(res.extensions?.cost).toMatchObject({ upstreamCalls: 2, euro: 0.55 });
    expect(res.estimate).toBe(0.55);
    expect(cheapestEndpoint(facetsForPaths(['activityStatus', 'managers']))).toBe('IT-full');
    expect(res.data?.company.activityStatus).toBe('A'); // attiva
    expect(res.data?.company.managers.length).toBeGreaterThan(0);
  });

  it('a cached source is free: a second query asking a superset buys only the rest', async () => {
    const first = await t.gql(`{ company(vatCode: "${OPENAPI_SPA}") { companyName address { town } } }`);
    expect(first.errors).toBeUndefined();
    expect(await companyCalls()).toEqual([`GET /IT-address/${OPENAPI_SPA}`]);
    await t.clearCalls();
    // The PEC and its history: IT-pec (€0.03); name and address come from the cached IT-address.
    const second = await t.gql<{ company: { pec: string; pecHistory: unknown[] } }>(
      `{ company(vatCode: "${OPENAPI_SPA}") { companyName address { town zipCode } pec pecHistory { pec recordedAt } } }`,
    );
    expect(second.errors).toBeUndefined();
    expect(await companyCalls()).toEqual([`GET /IT-pec/${OPENAPI_SPA}`]);
    expect(second.extensions?.cost).toMatchObject({ upstreamCalls: 1, cacheHits: 1, euro: 0.03 });
    expect(second.data?.company.pec).toMatch(/@/);
    expect(Array.isArray(second.data?.company.pecHistory)).toBe(true);

    // The profile, then the profile and the status: IT-advanced (cached) holds the status.
    await t.gql(`{ company(vatCode: "${OPENAPI_SPA}") { managers { __typename } ecofin { turnover } } }`);
    await t.clearCalls();
    const third = await t.gql(`{ company(vatCode: "${OPENAPI_SPA}") { managers { __typename } ecofin { turnover } activityStatus sdiCode } }`);
    expect(third.errors).toBeUndefined();
    expect(await companyCalls()).toEqual([]);
    expect(third.extensions?.cost).toMatchObject({ upstreamCalls: 0, euro: 0 });
  });
});

describe('single-purpose endpoints, bought only when asked', () => {
  /** Each field, the company it is read for, the one call it makes, and its price. */
  const CASES: Array<{ field: string; vat: string; call: string; euro: number; check: (v: unknown) => void }> = [
    {
      field: 'pecHistory { pec recordedAt }',
      vat: OPENAPI_SPA,
      call: `GET /IT-pec/${OPENAPI_SPA}`,
      euro: 0.03,
      check: (v) => expect(Array.isArray(v)).toBe(true),
    },
    {
      field: 'sdiCode',
      vat: OPENAPI_SPA,
      call: `GET /IT-sdicode/${OPENAPI_SPA}`,
      euro: 0.03,
      check: (v) => expect(v).toMatch(/^[A-Z0-9]{6,7}$/),
    },
    {
      field: 'vatGroup { participates isLeader registryOk }',
      vat: OPENAPI_SPA,
      call: `GET /IT-vatgroup/${OPENAPI_SPA}`,
      euro: 0.02,
      check: (v) => expect(v).toMatchObject({ registryOk: expect.any(Boolean) }),
    },
    {
      field: 'beneficialOwners { name surname taxCode roles { code type } }',
      vat: OPENAPI_SPA,
      call: `GET /IT-ubo/${OPENAPI_SPA}`,
      euro: 0.9,
      check: (v) => {
        expect(Array.isArray(v)).toBe(true);
        expect((v as Array<{ taxCode: string }>)[0]?.taxCode).toMatch(/^[A-Z0-9]{16}$/);
      },
    },
    {
      field: 'publicAdministration { companyName vatCode paId }',
      vat: PUBLIC_BODY,
      call: `GET /IT-pa/${PUBLIC_BODY}`,
      euro: 0.02,
      check: (v) => expect(v).toMatchObject({ companyName: 'AZIENDA SPECIALE SERVIZI MUNICIPALI', vatCode: PUBLIC_BODY }),
    },
    {
      field: 'splitPayment { companyName taxCode startDate }',
      vat: PUBLIC_BODY,
      call: `GET /IT-splitpayment/${PUBLIC_BODY}`,
      euro: 0.02,
      check: (v) => expect(v).toMatchObject({ companyName: 'AZIENDA SPECIALE SERVIZI MUNICIPALI' }),
    },
    {
      field: 'isCeased',
      vat: CEASED,
      call: `GET /IT-closed/${CEASED}`,
      euro: 0.02,
      check: (v) => expect(v).toBe(true),
    },
    {
      field: `vatGroupTaxCodeCheck(taxCode: "${OPENAPI_SPA}") { taxCodeConsistent taxCodePresent members }`,
      vat: OPENAPI_SPA,
      call: `GET /IT-vatgroup/${OPENAPI_SPA}`,
      euro: 0.02,
      check: (v) => expect(v).toEqual({ taxCodeConsistent: true, taxCodePresent: true, members: [] }),
    },
  ];

  for (const c of CASES) {
    const name = c.field.split(/[ ({]/)[0];
    it(`${name}: one call of its endpoint when selected, none otherwise; estimate ≥ spent`, async () => {
      const res = await run<{ company: Record<string, unknown> }>(`{ company(vatCode: "${c.vat}") { vatCode ${c.field} } }`);
      expect(res.errors).toBeUndefined();
      expect(await companyCalls()).toEqual([c.call]);
      expect(res.extensions?.cost).toMatchObject({ upstreamCalls: 1, euro: c.euro });
      c.check(res.data?.company[name]);

      // Not selected: its endpoint is not called (the name alone is IT-name's).
      await t.clearCalls();
      const without = await t.gql(`{ company(vatCode: "${c.vat}") { vatCode companyName } }`);
      expect(without.errors).toBeUndefined();
      expect(await companyCalls()).toEqual([`GET /IT-name/${c.vat}`]);
    });
  }

  it('isCeased(onDate): the date goes to IT-closed; a cessation after it does not count', async () => {
    const res = await run<{ company: { before: boolean; after: boolean; ever: boolean } }>(
      `{ company(vatCode: "${CEASED}") { before: isCeased(onDate: "2020-01-01") after: isCeased(onDate: "2022-01-01") ever: isCeased } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.company).toEqual({ before: false, after: true, ever: true });
    expect((await t.calls('company')).map((c) => c.path).sort()).toEqual([`/IT-closed/${CEASED}`, `/IT-closed/${CEASED}`, `/IT-closed/${CEASED}`]);
    expect(res.extensions?.cost?.euro).toBeCloseTo(0.06, 6);
  });

  it('a company not listed by IT-pa or IT-splitpayment: null, no error', async () => {
    const res = await run<{ company: { publicAdministration: unknown; splitPayment: unknown } }>(
      `{ company(vatCode: "${OPENAPI_SPA}") { vatCode publicAdministration { companyName } splitPayment { companyName } } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.company).toEqual({ vatCode: OPENAPI_SPA, publicAdministration: null, splitPayment: null });
    expect(await companyCalls()).toEqual([`GET /IT-pa/${OPENAPI_SPA}`, `GET /IT-splitpayment/${OPENAPI_SPA}`]);
    // A 404 is not charged.
    expect(res.extensions?.cost?.euro).toBe(0);
  });

  it('refuses bad arguments with BAD_USER_INPUT before any call', async () => {
    for (const q of [
      `{ company(vatCode: "${OPENAPI_SPA}") { companyName isCeased(onDate: "2020-13-45") } }`,
      `{ company(vatCode: "${OPENAPI_SPA}") { companyName isCeased(onDate: "yesterday") } }`,
      `{ company(vatCode: "${OPENAPI_SPA}") { companyName vatGroupTaxCodeCheck(taxCode: "RSSMRA80A01H501X") { taxCodePresent } } }`,
      `{ company(vatCode: "${OPENAPI_SPA}") { managers { __typename } vatGroupTaxCodeCheck(taxCode: "123") { taxCodePresent } } }`,
      // however deep: a nested company's field, a fragment, a variable
      `{ company(vatCode: "${OPENAPI_SPA}") { managers { ... on ManagerCompany { company { ...C } } } } } fragment C on Company { isCeased(onDate: "2021-02-30") }`,
      // the monitor order (a paid POST) is not made either
      `mutation { createCompanyMonitor(input: { code: "${OPENAPI_SPA}", dataset: IT_START }) { id company { isCeased(onDate: "1.1.2020") } } }`,
    ]) {
      const res = await t.gql(q);
      expect(
        res.errors?.map((e) => e.extensions?.code),
        q,
      ).toEqual(['BAD_USER_INPUT']);
      expect(res.errors?.[0]?.message, q).toMatch(/^(onDate|taxCode) /);
      expect(await t.calls(), q).toEqual([]);
    }
    const withVariable = await t.gql(`query($d: String) { company(vatCode: "${OPENAPI_SPA}") { companyName isCeased(onDate: $d) } }`, { d: 'soon' });
    expect(withVariable.errors?.map((e) => e.extensions?.code)).toEqual(['BAD_USER_INPUT']);
    expect(await t.calls()).toEqual([]);
  });

  it('an upstream error fails that field alone (IT-ubo 417), the company and its other fields resolve', async () => {
    await t.control('faults', { area: 'company', pathPrefix: `/IT-ubo/${OPENAPI_SPA}`, status: 417, count: 5 });
    const res = await t.gql<{ company: { companyName: string; isCeased: boolean; beneficialOwners: unknown } }>(
      `{ company(vatCode: "${OPENAPI_SPA}") { companyName isCeased beneficialOwners { taxCode } } }`,
    );
    expect(res.data?.company).toEqual({ companyName: 'OPENAPI S.P.A.', isCeased: false, beneficialOwners: null });
    expect(res.errors?.map((e) => [e.path?.join('.'), e.extensions?.code])).toEqual([['company.beneficialOwners', 'UPSTREAM_UNAVAILABLE']]);
    expect(res.errors?.[0]?.extensions).toMatchObject({ upstream: { status: 417, endpoint: 'IT-ubo' } });
    const calls = await companyCalls();
    expect(calls.filter((c) => !c.startsWith('GET /IT-ubo/'))).toEqual([`GET /IT-closed/${OPENAPI_SPA}`, `GET /IT-name/${OPENAPI_SPA}`]);
    expect(calls.filter((c) => c.startsWith('GET /IT-ubo/')).length).toBeGreaterThanOrEqual(1);
    // Nothing charged for the refused IT-ubo.
    expect(res.extensions?.cost?.euro).toBeCloseTo(0.04, 6);
  });

  it('a company the register does not know: each selected field reports not found, without other calls', async () => {
    const res = await t.gql<{ company: { isCeased: unknown; beneficialOwners: unknown } | null }>(
      `{ company(vatCode: "${NOT_REGISTERED}") { vatCode isCeased beneficialOwners { taxCode } } }`,
    );
    expect(res.data?.company).toEqual({ vatCode: NOT_REGISTERED, isCeased: null, beneficialOwners: null });
    expect(res.errors?.map((e) => [e.path?.join('.'), e.extensions?.code]).sort()).toEqual([
      ['company.beneficialOwners', 'UPSTREAM_NOT_FOUND'],
      ['company.isCeased', 'UPSTREAM_NOT_FOUND'],
    ]);
    expect(await companyCalls()).toEqual([`GET /IT-closed/${NOT_REGISTERED}`, `GET /IT-ubo/${NOT_REGISTERED}`]);
  });

  it('a company known by an identifier the endpoint does not take: the VAT number is learnt first, and the estimate counts it', async () => {
    const byVat = await t.gql<{ company: { id: string } }>(`{ company(vatCode: "${PUBLIC_BODY}") { id } }`);
    const id = byVat.data!.company.id;
    await t.cold();
    // IT-pa and IT-splitpayment take a VAT number or tax code, not the Openapi id: IT-name (€0.02) first.
    const res = await run<{ companyById: { publicAdministration: { vatCode: string }; splitPayment: unknown } }>(
      `{ companyById(id: "${id}") { publicAdministration { vatCode } splitPayment { companyName } } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(await companyCalls()).toEqual([`GET /IT-name/${id}`, `GET /IT-pa/${PUBLIC_BODY}`, `GET /IT-splitpayment/${PUBLIC_BODY}`]);
    expect(res.extensions?.cost?.euro).toBeCloseTo(0.06, 6);
    expect(res.estimate).toBeCloseTo(0.06, 6);
    expect(res.data?.companyById.publicAdministration.vatCode).toBe(PUBLIC_BODY);

    // IT-vatgroup takes a VAT number or an id, not a tax code.
    await t.cold();
    const byTax = await run(`{ companyByTaxCode(taxCode: "${OPENAPI_SPA}") { vatGroupTaxCodeCheck(taxCode: "${OPENAPI_SPA}") { taxCodePresent } } }`);
    expect(byTax.errors).toBeUndefined();
    expect(await companyCalls()).toEqual([`GET /IT-name/${OPENAPI_SPA}`, `GET /IT-vatgroup/${OPENAPI_SPA}`]);
    expect(byTax.estimate).toBeCloseTo(0.04, 6);
  });

  it('two fields of the same endpoint and arguments in one operation: one call', async () => {
    const res = await t.gql(`{ a: company(vatCode: "${CEASED}") { isCeased } b: company(vatCode: "${CEASED}") { x: isCeased y: isCeased } }`);
    expect(res.errors).toBeUndefined();
    expect(await companyCalls()).toEqual([`GET /IT-closed/${CEASED}`]);
  });
});
