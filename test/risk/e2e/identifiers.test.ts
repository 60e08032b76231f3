/**
 * Credit scores by any identifier the service accepts, and the fiscal-code check by GET or POST,
 * through the gateway against the emulator, with the exact upstream calls each query makes.
 *
 * - `creditScore` takes a VAT number, a tax code or an Openapi id (exactly one, validated before
 *   any call), buys one score per identifier and level, and caches it under that identifier.
 * - The `Company` entity is joined on the company subgraph's hidden `lookupCode` (the identifier it
 *   knows without a purchase): a company is scored by it, with no company call.
 * - `verifyFiscalCode(method: POST)` sends the code in a body (never in a URL), one call per code
 *   per query, never cached; GET stays cached.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { companyIdOfVat } from '../../../emulator/company-ids.ts';
import { CF, CF2 } from '../../support/risk.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import type { Obj } from '../../../contract/values.ts';
import { subgraphSchema, undescribed } from '../../support/schema.ts';

const OPENAPI_SPA = '12485671007';
const BETA_SERVIZI = '04123450159';

let t: TestStack;

beforeAll(async () => {
  t = await startTestStack();
});
afterAll(async () => {
  await t?.close();
});
beforeEach(async () => {
  await t.cold();
});

const riskCalls = async (): Promise<string[]> => (await t.calls('risk')).map((c) => `${c.method} ${c.path} ${c.status}`);

async function gql(query: string, variables?: Obj): Promise<Obj> {
  const res = await t.gql<Obj>(query, variables);
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data as Obj;
}

describe('creditScore by VAT number, tax code or Openapi id', () => {
  it('asks the service by the identifier given, one call per identifier and level, cached under it', async () => {
    const id = companyIdOfVat(BETA_SERVIZI);
    const q = `query($id: ID!, $cf: String!) {
      byId: creditScore(id: $id, level: ADVANCED) { vatCode companyId score rating }
      byTax: creditScore(taxCode: $cf) { taxCode vatCode score }
      byVat: creditScore(vatCode: "IT ${OPENAPI_SPA}") { vatCode taxCode score }
      again: creditScore(id: $id, level: ADVANCED) { vatCode }
    }`;
    const data = await gql(q, { id: id.toUpperCase(), cf: CF.toLowerCase() });
    expect(data.byId).toMatchObject({ vatCode: BETA_SERVIZI, companyId: id });
    expect((data.byId as Obj).rating).toMatch(/^([ABC][123]|ND)$/);
    expect(data.byTax).toMatchObject({ taxCode: CF });
    expect((data.byTax as Obj).vatCode).toMatch(/^\d{11}$/);
    expect(data.byVat).toMatchObject({ vatCode: OPENAPI_SPA, taxCode: OPENAPI_SPA, score: 'GREEN' });
    expect(data.again).toEqual({ vatCode: BETA_SERVIZI });
    // The id is lower-cased, the tax code upper-cased, the VAT number compacted: one call each.
    expect((await riskCalls()).sort()).toEqual(
      [`GET /IT-creditscore-advanced/${id} 200`, `GET /IT-creditscore-start/${CF} 200`, `GET /IT-creditscore-start/${OPENAPI_SPA} 200`].sort(),
    );

    // The same identifiers again: all from the cache. Another identifier of a known company is another call.
    await t.clearCalls();
    const res = await t.gql(`query($id: ID!) { a: creditScore(id: $id, level: ADVANCED) { score } b: creditScore(vatCode: "${BETA_SERVIZI}", level: ADVANCED) { score } }`, { id });
    expect(res.errors).toBeUndefined();
    expect(res.extensions?.cost?.cacheHits).toBe(1);
    expect(await riskCalls()).toEqual([`GET /IT-creditscore-advanced/${BETA_SERVIZI} 200`]);
  });

  it('an 11-digit tax code is the same path as the VAT number: one call, shared cache', async () => {
    const data = await gql(`{ a: creditScore(taxCode: "${OPENAPI_SPA}") { vatCode } b: creditScore(vatCode: "${OPENAPI_SPA}") { vatCode } }`);
    expect(data).toEqual({ a: { vatCode: OPENAPI_SPA }, b: { vatCode: OPENAPI_SPA } });
    expect(await riskCalls()).toEqual([`GET /IT-creditscore-start/${OPENAPI_SPA} 200`]);
  });

  it('refuses none, several or a malformed identifier before any call', async () => {
    const cases: Array<[string, string]> = [
      ['{ creditScore { score } }', 'vatCode'],
      [`{ creditScore(vatCode: "${OPENAPI_SPA}", taxCode: "${CF}") { score } }`, 'taxCode'],
      [`{ creditScore(taxCode: "${CF.slice(0, 15)}A") { score } }`, 'taxCode'],
      ['{ creditScore(taxCode: "12485671008") { score } }', 'taxCode'],
      ['{ creditScore(id: "5f00000000000000000000zz") { score } }', 'id'],
      ['{ creditScore(id: "") { score } }', 'id'],
      ['{ creditScore(vatCode: "12485671008") { score } }', 'vatCode'],
    ];
    for (const [query, field] of cases) {
      const res = await t.gql(query);
      expect(
        res.errors?.map((e) => [e.extensions?.code, e.extensions?.field]),
        query,
      ).toEqual([['BAD_USER_INPUT', field]]);
    }
    expect(await riskCalls()).toEqual([]);
  });

  it('the estimate prices the level, whatever the identifier', async () => {
    const only = { 'x-openapi-estimate-only': '1' };
    const top = await t.gql(`{ creditScore(taxCode: "${CF}", level: TOP) { score } }`, undefined, only);
    expect(top.extensions?.cost?.estimate?.euro).toBe(3);
    const byId = await t.gql(`{ creditScore(id: "${companyIdOfVat(OPENAPI_SPA)}", level: ADVANCED) { score } }`, undefined, only);
    expect(byId.extensions?.cost?.estimate?.euro).toBe(1);
    expect(await riskCalls()).toEqual([]);
  });
});

describe("Company.creditScore by the company's lookupCode", () => {
  /** The risk subgraph's own answer for `_entities` representations (what the gateway hands over). */
  async function entities(representations: Obj[]): Promise<Obj> {
    const res = await request(t.stack.subgraphs.graphqlUrl('risk'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Company { lookupCode creditScore { vatCode taxCode companyId score } } } }',
        variables: { r: representations },
      }),
    });
    return (await res.body.json()) as Obj;
  }

  it('is scored by whichever identifier the company subgraph knew: VAT number, tax code or Openapi id', async () => {
    const id = companyIdOfVat(BETA_SERVIZI);
    const out = await entities([
      { __typename: 'Company', lookupCode: CF2 },
      { __typename: 'Company', lookupCode: OPENAPI_SPA },
      { __typename: 'Company', lookupCode: id },
      { __typename: 'Company', lookupCode: 'FR40303265045' },
    ]);
    expect(out.errors).toBeUndefined();
    const list = (out.data as { _entities: Obj[] })._entities;
    expect(list[0]).toMatchObject({ lookupCode: CF2, creditScore: { taxCode: CF2 } });
    expect(list[1]).toMatchObject({ lookupCode: OPENAPI_SPA, creditScore: { vatCode: OPENAPI_SPA, score: 'GREEN' } });
    expect(list[2]).toMatchObject({ lookupCode: id, creditScore: { vatCode: BETA_SERVIZI, companyId: id } });
    expect(list[3]).toEqual({ lookupCode: 'FR40303265045', creditScore: null });
    expect((await riskCalls()).sort()).toEqual(
      [`GET /IT-creditscore-start/${CF2} 200`, `GET /IT-creditscore-start/${OPENAPI_SPA} 200`, `GET /IT-creditscore-start/${id} 200`].sort(),
    );
  });

  it('through the gateway, a company looked up by VAT number, tax code or id is scored without buying company data', async () => {
    const id = companyIdOfVat(BETA_SERVIZI);
    const data = await gql(
      `query($id: ID!) {
      byVat: company(vatCode: "${OPENAPI_SPA}") { vatCode creditScore { vatCode score } }
      byTax: companyByTaxCode(taxCode: "${BETA_SERVIZI}") { taxCode creditScore(level: ADVANCED) { vatCode score } }
      byId: companyById(id: $id) { id creditScore { companyId } }
    }`,
      { id },
    );
    expect(data.byVat).toMatchObject({ vatCode: OPENAPI_SPA, creditScore: { vatCode: OPENAPI_SPA } });
    expect(data.byTax).toMatchObject({ taxCode: BETA_SERVIZI, creditScore: { vatCode: BETA_SERVIZI } });
    expect(data.byId).toMatchObject({ id, creditScore: { companyId: id } });
    expect(await t.calls('company')).toEqual([]);
    expect((await riskCalls()).sort()).toEqual(
      [`GET /IT-creditscore-start/${OPENAPI_SPA} 200`, `GET /IT-creditscore-advanced/${BETA_SERVIZI} 200`, `GET /IT-creditscore-start/${id} 200`].sort(),
    );
  });
});

describe('verifyFiscalCode by GET or POST', () => {
  it('POST sends the code in a body: one call per code per query, never cached', async () => {
    const q = `query($m: FiscalCodeCheckMethod!) { a: verifyFiscalCode(taxCode: "${CF.toLowerCase()}", method: $m) { taxCode valid } b: verifyFiscalCode(taxCode: "${CF}", method: $m) { valid } }`;
    const data = await gql(q, { m: 'POST' });
    expect(data).toEqual({ a: { taxCode: CF, valid: true }, b: { valid: true } });
    expect(await riskCalls()).toEqual(['POST /IT-verifica_cf 200']);
    await gql(q, { m: 'POST' });
    expect(await riskCalls()).toEqual(['POST /IT-verifica_cf 200', 'POST /IT-verifica_cf 200']);
    // No call carried the code in its URL.
    expect((await t.calls('risk')).some((c) => c.path.includes(CF))).toBe(false);
  });

  it('GET (the default) puts it in the path and caches the answer', async () => {
    const q = `{ verifyFiscalCode(taxCode: "${CF2}") { taxCode valid } }`;
    expect(await gql(q)).toEqual({ verifyFiscalCode: { taxCode: CF2, valid: true } });
    expect(await gql(q)).toEqual({ verifyFiscalCode: { taxCode: CF2, valid: true } });
    expect(await riskCalls()).toEqual([`GET /IT-verifica_cf/${CF2} 200`]);
  });

  it('validates before any call, for both methods, and the estimate prices both', async () => {
    for (const m of ['GET', 'POST']) {
      const res = await t.gql(`{ verifyFiscalCode(taxCode: "RSSMRA80A01H501X", method: ${m}) { valid } }`);
      expect(res.errors?.map((e) => e.extensions?.code)).toEqual(['BAD_USER_INPUT']);
      const est = await t.gql(`{ verifyFiscalCode(taxCode: "${CF}", method: ${m}) { valid } }`, undefined, { 'x-openapi-estimate-only': '1' });
      expect(est.extensions?.cost?.estimate?.euro).toBe(0.05);
    }
    expect(await riskCalls()).toEqual([]);
  });
});

describe('risk schema', () => {
  it('describes every type, field, argument, enum value and input field', () => {
    expect(undescribed(subgraphSchema('risk'))).toEqual([]);
  });
});
