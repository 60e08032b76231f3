/**
 * GraphiQL as shipped, in a real browser (Debian's chromium, driven by playwright-core; `npm test`
 * installs it with scripts/ensure-chromium.mjs). Every request the page makes is routed here: one
 * leaving loopback fails the test (the page must work offline). A newcomer's first minute: the page
 * arrives compressed, the tab open at load runs with one press of Run, one click switches tabs,
 * the docs explorer opens with one click, and the OrderPatrimonialReport and WatchRequest tabs order
 * a report and watch it move from PROCESSING to COMPLETE (the emulator's control API moves it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { EXAMPLES } from '../gateway/examples.ts';
import { startTestStack, type TestStack } from './support/stack.ts';

const CHROMIUM = '/usr/bin/chromium';

let t: TestStack;
let browser: Browser;
let context: BrowserContext;
/** Requests the page tried to send off the machine (aborted). */
const offLoopback: string[] = [];
/** Every http(s) request the page made. */
const seen: string[] = [];

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

beforeAll(async () => {
  // No skip: without chromium this file fails (npm test installs it first).
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run node scripts/ensure-chromium.mjs (npm test does)`);
  t = await startTestStack();
  // Requests complete only when the test says so (risk/advance).
  await t.control('risk/timing', { completeAfterMs: 0 });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if ((url.protocol === 'http:' || url.protocol === 'https:') && !LOOPBACK.has(url.hostname)) {
      offLoopback.push(url.href);
      await route.abort('blockedbyclient');
      return;
    }
    seen.push(url.href);
    await route.continue();
  });
}, 120_000);

afterAll(async () => {
  await context?.close().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  await t?.close();
});

const activeTab = (page: Page): Promise<string> => page.locator('.graphiql-tab-active .graphiql-tab-button').innerText();
const response = (page: Page): Promise<string> => page.locator('.graphiql-response').first().innerText();
const variables = (page: Page): Promise<string> => page.locator('.graphiql-editor-tool .view-lines').first().innerText();

/** One real click (pointer events at the tab's place on screen) on the tab titled `title`. */
async function openTab(page: Page, title: string): Promise<void> {
  await page.locator(`button.graphiql-tab-button[title="${title}"]`).click();
  expect(await activeTab(page)).toBe(title);
}

async function openGraphiQL(): Promise<Page> {
  const page = await context.newPage();
  const answer = await page.goto(t.stack.gateway.graphqlUrl);
  expect(answer?.status()).toBe(200);
  // Chromium accepts brotli: the 9 MB page travels compressed.
  expect((await answer?.allHeaders())?.['content-encoding']).toBe('br');
  await page.locator('.graphiql-tab').first().waitFor({ timeout: 60_000 });
  // The schema is loaded (introspection answered) before anything runs.
  await page.locator('.graphiql-execute-button').first().waitFor();
  return page;
}

describe('GraphiQL as shipped', () => {
  it('opens offline on the first example, which runs with one press of Run; tabs switch with one click; docs one click away', async () => {
    const page = await openGraphiQL();
    try {
      // Tab titles are the examples' titles (their operation names), in order, the first open.
      expect(await page.locator('.graphiql-tab-button').allInnerTexts()).toEqual(EXAMPLES.map((e) => e.title));
      expect(await activeTab(page)).toBe(EXAMPLES[0].title);
      // Its variables are there.
      await expect.poll(() => variables(page), { timeout: 20_000 }).toMatch(/"vatCode":\s*"12485671007"/);

      await page.locator('.graphiql-execute-button').first().click();
      await expect.poll(() => response(page), { timeout: 30_000 }).toMatch(/"companyName":\s*"/);
      expect(await response(page)).not.toMatch(/"errors"/);

      // One click on another tab switches to it (and shows its own variables, or none).
      await openTab(page, 'LegalForms');
      await page.locator('.graphiql-execute-button').first().click();
      await expect.poll(() => response(page), { timeout: 20_000 }).toMatch(/"legalForms":\s*\[/);
      await openTab(page, 'OwnershipWalk');
      await expect.poll(() => variables(page)).toMatch(/"vatCode":\s*"03456783053"/);

      // The docs explorer: one click on the sidebar's button shows the schema's root types.
      await page.locator('button[aria-label="Show Documentation Explorer"]').click();
      await expect.poll(() => page.locator('.graphiql-doc-explorer').innerText(), { timeout: 20_000 }).toMatch(/Query/);
    } finally {
      await page.close();
    }
    expect(offLoopback).toEqual([]);
    expect(seen.length).toBeGreaterThan(0);
  });

  it('orders a report in one tab and watches it in another: a subscription showing two states', async () => {
    const page = await openGraphiQL();
    try {
      await openTab(page, 'OrderPatrimonialReport');
      await page.locator('.graphiql-execute-button').first().click();
      await expect.poll(() => response(page), { timeout: 30_000 }).toMatch(/"id":\s*"[^"]+"/);
      const id = /"id":\s*"([^"]+)"/.exec(await response(page))![1];

      await openTab(page, 'WatchRequest');
      // Paste the id into the variables, as the tab's comment says.
      await page.locator('.graphiql-editor-tool .view-lines').first().click();
      await page.keyboard.press('ControlOrMeta+A');
      await page.keyboard.press('Delete');
      await expect.poll(() => variables(page)).toBe('');
      await page.keyboard.insertText(JSON.stringify({ id }));
      await expect.poll(() => variables(page)).toBe(JSON.stringify({ id }));
      await page.locator('.graphiql-execute-button').first().click();
      // The latest known state first…
      await expect.poll(() => response(page), { timeout: 30_000 }).toMatch(/"state":\s*"PROCESSING"/);
      // …then the change the emulator makes.
      await t.control('risk/advance', { id });
      await expect.poll(() => response(page), { timeout: 30_000 }).toMatch(/"state":\s*"COMPLETE"/);
      expect(await response(page)).toContain(id);
    } finally {
      await page.close();
    }
    expect(offLoopback).toEqual([]);
  }, 120_000);
});
