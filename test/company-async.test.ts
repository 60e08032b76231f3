/**
 * Slow company datasets bought by their asynchronous POST variant, through the gateway against the
 * emulator: the layer POSTs once with its signed callback (`/callbacks/company/datasets/…`), the
 * emulator delivers the dataset there, the query answers with no IT-check_id poll, and the dataset
 * is cached under the GET's key (a later read is a cache hit). When the callback is lost, the layer
 * polls IT-check_id (free) for the request it paid for, never buying it twice. Forged callbacks are
 * refused.
 *
 * Completion is driven by the emulator's control API (`company/complete`); timeouts are safety
 * limits only.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Signer } from '../subgraphs/runtime/signing.ts';
import { withSafety } from './support/safety.ts';
import { startTestStack, type GraphQLResponse, type TestStack } from './support/stack.ts';

const LAYER_SECRET = 'company-async-test-secret-0123456789';
const VAT = '12485671007';
const TENANT_B = 'company-async-tenant-b-token';
const MANAGERS = `query($vat: String!) { company(vatCode: $vat) { managers { __typename } } }`;

let t: TestStack;

beforeAll(async () => {
  t = await startTestStack({ LAYER_SECRET, COMPANY_SLOW_CALLBACK_WAIT_MS: '300' });
  await t.control('tokens', { token: TENANT_B, owner: 'company-async-b@example.com' });
  // Requests complete only when the test says so.
  await t.control('company/slow', { ms: 3_600_000 });
});

afterAll(async () => {
  await t?.control('callbacks', { enabled: true }).catch(() => undefined);
  await t?.close();
});

const auth = (token?: string): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {});
const callsOf = async (): Promise<string[]> => (await t.calls('company')).map((c) => `${c.method} ${c.path}`);

/** Resolves once the emulator has answered the layer's POST of the slow tier. */
async function posted(path: string): Promise<void> {
  await withSafety(
    (async () => {
      while (!(await callsOf()).includes(`POST ${path}`)) await new Promise((r) => setTimeout(r, 20));
    })(),
    `POST ${path}`,
    20_000,
  );
}

function expectManagers(res: GraphQLResponse): void {
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  const managers = (res.data as { company: { managers: unknown[] } }).company.managers;
  expect(managers.length).toBeGreaterThan(0);
}

describe('a slow tier bought by POST + callback', () => {
  it('POSTs once, answers from the callback with no IT-check_id poll, and caches the dataset under the GET key', async () => {
    await t.clearCalls();
    const query = t.gql(MANAGERS, { vat: VAT });
    await posted(`/IT-stakeholders/${VAT}`);
    expect(await t.control('company/complete', {})).toEqual({ completed: 1 });
    const res = await withSafety(query, 'answer', 20_000);
    expectManagers(res);
    expect(await callsOf()).toEqual([`POST /IT-stakeholders/${VAT}`]);
    expect(res.extensions?.cost?.euro).toBe(0.5);

    // The GET's key holds the dataset: a cache hit, nothing bought.
    const again = await t.gql(MANAGERS, { vat: VAT });
    expectManagers(again);
    expect(await callsOf()).toEqual([`POST /IT-stakeholders/${VAT}`]);
    expect(again.extensions?.cost?.euro).toBe(0);
  });

  it('polls IT-check_id for the request it paid for when the callback is lost, never buying twice', async () => {
    await t.clearCalls();
    await t.control('callbacks', { enabled: false });
    const query = t.gql(MANAGERS, { vat: VAT }, auth(TENANT_B));
    await posted(`/IT-stakeholders/${VAT}`);
    expect(await t.control('company/complete', {})).toEqual({ completed: 1 });
    const res = await withSafety(query, 'answer', 20_000);
    await t.control('callbacks', { enabled: true });
    expectManagers(res);
    const calls = await callsOf();
    expect(calls).toHaveLength(2);
    expect(calls[0]).toBe(`POST /IT-stakeholders/${VAT}`);
    expect(calls[1]).toMatch(/^GET \/IT-check_id\/[0-9a-f]{24}$/);
    expect(res.extensions?.cost?.euro).toBe(0.5);

    const again = await t.gql(MANAGERS, { vat: VAT }, auth(TENANT_B));
    expectManagers(again);
    expect(await callsOf()).toEqual(calls);
  });

  it('refuses forged and replayed dataset callbacks', async () => {
    const post = async (url: string): Promise<number> => {
      const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ data: { companyDetails: { vatCode: VAT } } }) });
      await res.body.dump();
      return res.statusCode;
    };
    const claims = Buffer.from(JSON.stringify({ n: 'forged-nonce', t: 'someone', e: 'IT-full', i: VAT }), 'utf8').toString('base64url');
    const forged = new Signer(Buffer.from('another-secret-of-sufficient-length')).sign('company-dataset', claims, 3600);
    expect(await post(`${t.url}/callbacks/company/datasets/${forged}`)).toBe(403);
    // Signed with the layer's secret, but for another purpose (a monitor's callback): refused too.
    const other = new Signer(Buffer.from(LAYER_SECRET)).sign('company-callback', claims, 3600);
    expect(await post(`${t.url}/callbacks/company/datasets/${other}`)).toBe(403);
    // A genuine URL is accepted once.
    const genuine = new Signer(Buffer.from(LAYER_SECRET)).sign('company-dataset', claims, 3600);
    expect(await post(`${t.url}/callbacks/company/datasets/${genuine}`)).toBe(200);
    expect(await post(`${t.url}/callbacks/company/datasets/${genuine}`)).toBe(403);
  });
});
