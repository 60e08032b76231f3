/**
 * Every figure the docs quote next to an example operation (upstream calls, euro, estimate) is what
 * the example costs: each marked example of README.md and docs/*.md (see test/support/docs.ts) runs
 * through the gateway against the embedded emulator, as a new caller (an account of its own, every
 * cache empty), and its extensions.cost and the emulator's call log must say exactly what the page says.
 * The unit prices a page lists (`<!-- prices: … -->` beside them) must be the built-in table's.
 */
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PRICE_TABLE, INVOICE_SUBSCRIPTION_PRICES } from '../../../contract/prices.ts';
import { docExamples, docFiles, docPrices, graphqlBlocks, type Figures } from '../../support/docs.ts';
import { startTestStack, type GraphQLResponse, type TestStack } from '../../support/stack.ts';

const files = docFiles();
const examples = docExamples(files);
const prices = docPrices(files);

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack();
  // The emulator's clock stands still: no order completes and calls back (the layer would re-read
  // it), so the call log holds only what each example called.
  await t.control('clock', { mode: 'manual' });
});
afterAll(async () => {
  await t?.close();
});

function expectFigures(res: GraphQLResponse, figures: Figures, calls: number, label: string): void {
  if (figures.code === undefined) expect(res.errors, label).toBeUndefined();
  else
    expect(
      res.errors?.map((e) => e.extensions?.code),
      label,
    ).toEqual([figures.code]);
  const cost = res.extensions?.cost;
  expect(cost, label).toBeDefined();
  if (figures.calls !== undefined) {
    expect(cost?.upstreamCalls, `${label}: upstream calls`).toBe(figures.calls);
    expect(calls, `${label}: calls in the emulator's log`).toBe(figures.calls);
  }
  if (figures.euro !== undefined) expect(cost?.euro, `${label}: euro`).toBeCloseTo(figures.euro, 6);
  if (figures.from !== undefined) expect((cost as { answeredFrom?: string } | undefined)?.answeredFrom, `${label}: answered from`).toBe(figures.from);
  if (figures.estimate !== undefined) expect(cost?.estimate?.euro, `${label}: estimate`).toBeCloseTo(figures.estimate, 6);
}

describe('the figures the docs quote', () => {
  it('has examples with figures in the README and in the docs pages', () => {
    expect(examples.filter((e) => e.file === 'README.md').length).toBeGreaterThanOrEqual(3);
    expect(examples.filter((e) => e.file !== 'README.md').length).toBeGreaterThanOrEqual(3);
    expect(new Set(examples.map((e) => e.name)).size).toBe(examples.length);
    for (const e of examples) expect(e.first.calls !== undefined || e.first.euro !== undefined || e.first.code !== undefined, e.name).toBe(true);
  });

  it('every operation that quotes a price (€) in its comments is a checked example', () => {
    const checked = new Set(examples.map((e) => e.query));
    const unchecked = files.flatMap((f) =>
      graphqlBlocks(f.text)
        .filter((b) => b.includes('€') && !checked.has(b))
        .map((b) => `${f.path}: ${b.split('\n')[0]}`),
    );
    expect(unchecked).toEqual([]);
  });

  it.each(examples.map((e) => [`${e.file} ${e.name}`, e] as const))('%s', async (_label, example) => {
    expect(parse(example.query).definitions).toHaveLength(1);
    const token = await t.createToken(1000);
    const headers = { authorization: `Bearer ${token}`, ...(example.first.estimateOnly ? { 'x-openapi-estimate-only': 'true' } : {}) };
    await t.cold();
    const first = await t.gql(example.query, example.variables, headers);
    if (example.first.estimateOnly) expect(first.extensions?.cost?.executed).toBe(false);
    expectFigures(first, example.first, (await t.calls()).length, `${example.name} (first run)`);
    if (example.again) {
      await t.clearCalls();
      const again = await t.gql(example.query, example.variables, headers);
      expectFigures(again, example.again, (await t.calls()).length, `${example.name} (run again)`);
    }
    if (example.other) {
      await t.clearCalls();
      const other = await t.gql(example.query, example.variables, { authorization: `Bearer ${await t.createToken(1000)}` });
      expectFigures(other, example.other, (await t.calls()).length, `${example.name} (another caller)`);
    }
  });
});

describe('the unit prices the docs quote', () => {
  it('has price lists', () => {
    expect(prices.length).toBeGreaterThanOrEqual(10);
  });

  it.each(prices.map((p) => [`${p.file} ${p.table}: ${p.key}`, p] as const))('%s', (_label, p) => {
    const table: Readonly<Record<string, number>> = p.table === 'prices' ? DEFAULT_PRICE_TABLE : INVOICE_SUBSCRIPTION_PRICES;
    expect(table[p.key], `${p.key} is a key of the ${p.table} table`).toBeDefined();
    expect(table[p.key]).toBe(p.euro);
  });
});
