/**
 * The GraphiQL cost panel in a real browser (Debian's chromium, driven by playwright-core, as in
 * graphiql-browser.test.ts; every request leaving loopback fails the test). A person types a paid
 * query: the panel shows its estimate, the endpoints it may call and what the cache saves, and
 * nothing is called upstream (the emulator's call log stays empty) however long they edit. Run: the
 * panel shows the actual cost beside the estimate, the budget left for an operation and for the
 * day, and today's spending in its chart, all matching what the emulator charged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, loopbackOnly } from '../../support/browser.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';

const BETA_SERVIZI = '04123450159';
const PAID = `query PaidProfile { company(vatCode: "${BETA_SERVIZI}") { companyName } }`;

let t: TestStack;
let browser: Browser;
const offLoopback: string[] = [];
/** The estimate-only requests the page made. */
const estimates: string[] = [];

beforeAll(async () => {
  t = await startTestStack({ OPENAPI_MAX_EURO_PER_OPERATION: '20', OPENAPI_MAX_EURO_PER_DAY: '40' });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await t?.close();
});

async function openPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  await loopbackOnly(context, offLoopback, (request) => {
    if (request.headers()['x-openapi-estimate-only'] === 'true') estimates.push(request.postData() ?? '');
  });
  const page = await context.newPage();
  expect((await page.goto(t.stack.gateway.graphqlUrl))?.status()).toBe(200);
  await page.locator('.graphiql-execute-button').first().waitFor({ timeout: 60_000 });
  return page;
}

const text = (page: Page, selector: string): Promise<string> =>
  page
    .locator(selector)
    .first()
    .innerText({ timeout: 1_000 })
    .catch(() => '');
const euroIn = (s: string): number => Number(/€([\d.]+)/.exec(s)?.[1] ?? NaN);

describe('the cost panel', () => {
  it('prices a paid query as it is typed, with no upstream call; after Run, shows the actual cost beside it and the budgets left', async () => {
    const page = await openPage();
    try {
      // The € button prices the tab open at load (CompanyProfile, with its variables) with the panel closed…
      await expect.poll(() => text(page, '#openapi-cost-badge'), { timeout: 30_000 }).toMatch(/^€\d/);
      // …and opens the panel with one click.
      await page.locator('button[aria-label="Show Cost"]').click();
      await expect.poll(() => text(page, '#openapi-cost-estimate'), { timeout: 30_000 }).toBe(await text(page, '#openapi-cost-badge'));
      await expect.poll(() => text(page, '#openapi-cost-spending'), { timeout: 30_000 }).toMatch(/Today/);

      // The caller's token in the headers pane: estimates, the cache and spending are now its own.
      const token = await t.createToken(100);
      await page.getByRole('button', { name: 'Headers' }).click();
      await page.locator('.graphiql-editor-tool .view-lines >> visible=true').first().click();
      await page.keyboard.insertText(JSON.stringify({ authorization: `Bearer ${token}` }));
      await expect.poll(() => text(page, '[data-cost="today"]'), { timeout: 20_000 }).toMatch(/^Today\s+€0\.00/);

      // Type a paid query in place of the example.
      await t.clearCalls();
      estimates.length = 0;
      await page.locator('.graphiql-query-editor .view-lines').first().click();
      await page.keyboard.press('ControlOrMeta+A');
      await page.keyboard.press('Delete');
      await page.keyboard.insertText(PAID);
      await expect.poll(() => page.evaluate(() => localStorage.getItem('graphiql:query') ?? ''), { timeout: 20_000 }).toBe(PAID);
      // The figure for this query: its one company endpoint, nothing cached for this caller yet.
      await expect.poll(() => text(page, '#openapi-cost-endpoints'), { timeout: 20_000 }).toMatch(/^company GET /);
      const direct = await t.gql(PAID, undefined, { 'x-openapi-estimate-only': 'true' });
      const expected = direct.extensions!.cost!.estimate!.euro;
      expect(expected).toBeGreaterThan(0);
      await expect.poll(async () => euroIn(await text(page, '#openapi-cost-estimate')), { timeout: 20_000 }).toBeCloseTo(expected, 2);
      expect(await text(page, '[data-cost="after-cache"]')).toMatch(/€/);
      expect(euroIn(await text(page, '#openapi-cost-badge'))).toBeCloseTo(expected, 2);
      // Run nothing: nothing was called upstream, and typing the query asked a few estimates, not one per key.
      expect(await t.calls()).toEqual([]);
      expect(estimates.length).toBeGreaterThan(0);
      expect(estimates.length).toBeLessThanOrEqual(3);
      expect(estimates.some((b) => b.includes('PaidProfile'))).toBe(true);
      expect(await text(page, '#openapi-cost-run')).toMatch(/Nothing run yet/);

      // Typed key by key, the estimate is asked once the typing pauses, not once per key.
      estimates.length = 0;
      const typed = ' # typed key by key';
      await page.keyboard.type(typed, { delay: 20 });
      await expect.poll(() => page.evaluate(() => localStorage.getItem('graphiql:query') ?? ''), { timeout: 20_000 }).toBe(PAID + typed);
      await expect.poll(() => estimates.some((b) => b.includes('typed key by key')), { timeout: 20_000 }).toBe(true);
      expect(estimates.length).toBeLessThan(typed.length / 2);
      expect(await t.calls()).toEqual([]);

      // Run: the actual cost beside the estimate, as the emulator charged it.
      await page.locator('.graphiql-execute-button').first().click();
      await expect.poll(() => page.locator('.graphiql-response').first().innerText(), { timeout: 30_000 }).toMatch(/"companyName"/);
      const charged = (await t.calls()).reduce((sum, c) => sum + c.price, 0);
      expect(charged).toBeGreaterThan(0);
      await expect.poll(async () => euroIn(await text(page, '#openapi-cost-actual')), { timeout: 20_000 }).toBeCloseTo(charged, 2);
      expect(euroIn(await text(page, '#openapi-cost-run-estimate'))).toBeCloseTo(expected, 2);
      expect(await text(page, '[data-cost="calls"]')).toMatch(/Upstream calls\s+1/);
      expect(await text(page, '[data-cost="budget-operation"]')).toMatch(new RegExp(`€${(20 - charged).toFixed(2)} of €20\\.00`));
      expect(await text(page, '[data-cost="budget-day"]')).toMatch(new RegExp(`€${(40 - charged).toFixed(2)} of €40\\.00`));
      // The token's wallet lost what the panel says, and its spending today is that, in the chart too.
      expect(100 - (await t.credit(token))).toBeCloseTo(charged, 6);
      await expect.poll(async () => euroIn(await text(page, '[data-cost="today"]')), { timeout: 20_000 }).toBeCloseTo(charged, 2);
      expect(await page.locator('#openapi-cost-chart rect').count()).toBeGreaterThan(0);
      expect(await text(page, '#openapi-cost-spending [data-area="company"]')).toMatch(/company €/);

      // Priced again after the run: the cache now answers this caller's query whole.
      await expect.poll(() => text(page, '[data-cost="saves"]'), { timeout: 20_000 }).toMatch(/Cached for you/);
      expect(euroIn(await text(page, '[data-cost="after-cache"]'))).toBe(0);
      expect((await t.calls()).length).toBe(1);
      expect(offLoopback).toEqual([]);
      if (process.env.COST_PANEL_SCREENSHOT) await page.screenshot({ path: process.env.COST_PANEL_SCREENSHOT });
    } finally {
      await page.context().close();
    }
  }, 180_000);
});
