/**
 * Settings come from the env given to `startStack`, never from `process.env` behind it. Here
 * `process.env` holds poisoned values (an unreadable price file, a bureau path that does not exist,
 * a 1-byte PDF limit) before any module of the layer is loaded, and stacks started with their own
 * env must not see them.
 *
 * Prices are per process (`contract/prices.ts`: the cost meter, the estimate and the emulator's
 * wallet share one table, set by `configurePrices(env)` when a stack or a service starts): stacks
 * started one after the other with different `OPENAPI_PRICES` each report their own euro.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'prices-'));
const poisoned = join(dir, 'poisoned.json');
writeFileSync(poisoned, 'this is not JSON');
const fileA = join(dir, 'a.json');
writeFileSync(fileA, JSON.stringify({ 'risk GET IT-creditscore-start': 0.11 }));
const fileB = join(dir, 'b.json');
writeFileSync(fileB, JSON.stringify({ 'risk GET IT-creditscore-start': 0.22 }));

// Before the layer's modules load (they are imported below, dynamically): a module reading
// process.env at import time would pick these up.
vi.stubEnv('OPENAPI_PRICES', poisoned);
vi.stubEnv('RISK_BUREAU_PATH', '/IT-nowhere');
vi.stubEnv('RISK_MAX_PDF_BYTES', '1');

const { startTestStack } = await import('../../support/stack.ts');
const { bureauInput, PDF } = await import('../../support/risk.ts');
const { configurePrices, DEFAULT_PRICE_TABLE, loadPrices, priceOf } = await import('../../../contract/prices.ts');
const { loadUpstreamConfig, upstreamPath } = await import('../../../subgraphs/upstream/config.ts');
type TestStack = Awaited<ReturnType<typeof startTestStack>>;

afterAll(() => {
  vi.unstubAllEnvs();
  configurePrices({});
  rmSync(dir, { recursive: true, force: true });
});

const VAT = '03456781057';
const SCORE = `query { creditScore(vatCode: "${VAT}", level: START) { vatCode } }`;
const ORDER_BUREAU = `mutation($input: PersonBureauInput!) { orderPersonBureauReport(input: $input) { id } }`;
const UPLOAD = `mutation($id: ID!, $file: String!) { uploadSignedDelegation(id: $id, signedDelegationFile: $file) { id } }`;
const pdfBytes = Buffer.from(PDF, 'base64').length;

async function scoreEuro(t: TestStack): Promise<{ euro: number | undefined; wallet: number[] }> {
  await t.clearCalls();
  const res = await t.gql(SCORE);
  expect(res.errors).toBeUndefined();
  return { euro: res.extensions?.cost?.euro, wallet: (await t.calls('risk')).map((c) => c.price) };
}

describe('prices', () => {
  it('come from the env given, per process; process.env is not read', () => {
    expect(loadPrices({ OPENAPI_PRICES: fileA })['risk GET IT-creditscore-start']).toBe(0.11);
    expect(loadPrices({})).toBe(DEFAULT_PRICE_TABLE);
    expect(() => loadPrices({ OPENAPI_PRICES: poisoned })).toThrow(/OPENAPI_PRICES: cannot read/);
    expect(priceOf('risk', 'GET', `/IT-creditscore-start/${VAT}`)).toBe(DEFAULT_PRICE_TABLE['risk GET IT-creditscore-start']);
    configurePrices({ OPENAPI_PRICES: fileB });
    expect(priceOf('risk', 'GET', `/IT-creditscore-start/${VAT}`)).toBe(0.22);
    // a bad file leaves the table as it was
    expect(() => configurePrices({ OPENAPI_PRICES: poisoned })).toThrow();
    expect(priceOf('risk', 'GET', `/IT-creditscore-start/${VAT}`)).toBe(0.22);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    configurePrices({});
    expect(warn.mock.calls[0]?.[0]).toMatch(/prices are per process/);
    warn.mockRestore();
    expect(priceOf('risk', 'GET', `/IT-creditscore-start/${VAT}`)).toBe(DEFAULT_PRICE_TABLE['risk GET IT-creditscore-start']);
  });

  it('two stacks started with different OPENAPI_PRICES report different euro for the same call', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const a = await startTestStack({ OPENAPI_PRICES: fileA });
      try {
        expect(await scoreEuro(a)).toEqual({ euro: 0.11, wallet: [0.11] });
      } finally {
        await a.close();
      }
      const b = await startTestStack({ OPENAPI_PRICES: fileB });
      try {
        expect(await scoreEuro(b)).toEqual({ euro: 0.22, wallet: [0.22] });
      } finally {
        await b.close();
      }
      const dflt = await startTestStack({});
      try {
        const euro = DEFAULT_PRICE_TABLE['risk GET IT-creditscore-start'];
        expect(await scoreEuro(dflt)).toEqual({ euro, wallet: [euro] });
      } finally {
        await dflt.close();
      }
    } finally {
      warn.mockRestore();
    }
  });
});

describe('risk settings', () => {
  it('RISK_BUREAU_PATH renames the path sent, and nothing else', () => {
    const config = loadUpstreamConfig({ OPENAPI_ENV: 'sandbox', RISK_BUREAU_PATH: 'IT-crif-persona/' });
    expect(config.pathAliases).toEqual({ risk: { 'IT-bureau-persona': 'IT-crif-persona' } });
    expect(upstreamPath(config, 'risk', '/IT-bureau-persona/abc/delega')).toBe('/IT-crif-persona/abc/delega');
    expect(upstreamPath(config, 'risk', '/IT-bureau-personas')).toBe('/IT-bureau-personas');
    expect(upstreamPath(config, 'company', '/IT-bureau-persona')).toBe('/IT-bureau-persona');
    expect(loadUpstreamConfig({ OPENAPI_ENV: 'sandbox' }).pathAliases).toEqual({});
    expect(() => loadUpstreamConfig({ OPENAPI_ENV: 'sandbox', RISK_BUREAU_PATH: '/a/b' })).toThrow(/RISK_BUREAU_PATH/);
  });

  describe('of the env given to the stack', () => {
    let t: TestStack;
    beforeAll(async () => {
      t = await startTestStack({ RISK_BUREAU_PATH: '/IT-crif-persona', RISK_MAX_PDF_BYTES: String(pdfBytes + 16) });
    });
    afterAll(async () => {
      await t?.close();
    });

    it('the bureau order goes to RISK_BUREAU_PATH, priced as the bureau', async () => {
      await t.clearCalls();
      const res = await t.gql<{ orderPersonBureauReport: { id: string } }>(ORDER_BUREAU, { input: bureauInput() });
      expect(res.errors).toBeUndefined();
      const calls = await t.calls('risk');
      expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual(['POST /IT-crif-persona']);
      expect(res.extensions?.cost?.euro).toBe(DEFAULT_PRICE_TABLE['risk POST IT-bureau-persona']);
      expect(calls[0]?.price).toBe(DEFAULT_PRICE_TABLE['risk POST IT-bureau-persona']);
    });

    it('RISK_MAX_PDF_BYTES of the env is the upload limit (process.env says 1 byte)', async () => {
      await t.clearCalls();
      const big = Buffer.concat([Buffer.from(PDF, 'base64'), Buffer.alloc(64)]).toString('base64');
      const refused = await t.gql(UPLOAD, { id: '6477280f496e98e849017aa7', file: big });
      expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'signedDelegationFile' });
      expect(refused.errors?.[0]?.message).toMatch(/larger/);
      const small = await t.gql(UPLOAD, { id: '6477280f496e98e849017aa7', file: PDF });
      // the PDF passes the check: the (unknown) request is what is refused, upstream
      expect(small.errors?.[0]?.extensions?.code).not.toBe('BAD_USER_INPUT');
      expect(await t.calls()).not.toEqual([]);
    });
  });
});
