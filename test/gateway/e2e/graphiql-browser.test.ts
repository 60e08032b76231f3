/**
 * GraphiQL as shipped, in a real browser (Debian's chromium, driven by playwright-core; `npm test`
 * installs it with scripts/ensure-chromium.mjs). Every request the page makes is routed here: one
 * leaving loopback fails the test (the page must work offline). A newcomer's first minute: the page
 * arrives compressed, the tab open at load runs with one press of Run, one click switches tabs,
 * the docs explorer opens with one click, and the OrderPatrimonialReport and WatchRequest tabs order
 * a report and watch it move from PROCESSING to COMPLETE (the emulator's control API moves it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium, loopbackOnly } from '../../support/browser.ts';
import { EXAMPLES } from '../../../gateway/examples.ts';
import { renderGraphiQLPage } from '../../../gateway/graphiql.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';

let t: TestStack;
let browser: Browser;
const contexts: BrowserContext[] = [];
/** Requests the page tried to send off the machine (aborted). */
const offLoopback: string[] = [];
/** Every http(s) request the page made. */
const seen: string[] = [];

beforeAll(async () => {
  t = await startTestStack();
  // Requests complete only when the test says so (risk/advance).
  await t.control('risk/timing', { completeAfterMs: 0 });
  browser = await launchChromium();
}, 120_000);

/**
 * A browser context of its own for each page: a first visit (GraphiQL keeps its tabs, editors and
 * operation names in the origin's storage, which pages of one context share). Every request that
 * would leave loopback is refused and recorded.
 */
async function freshContext(): Promise<BrowserContext> {
  // A common laptop width: every tab's title shows whole there (the first test checks).
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  contexts.push(context);
  await loopbackOnly(context, offLoopback, (request) => seen.push(new URL(request.url()).href));
  return context;
}

afterAll(async () => {
  await Promise.all(contexts.map(async (c) => c.close().catch(() => undefined)));
  await browser?.close().catch(() => undefined);
  await t?.close();
});

const activeTab = (page: Page): Promise<string> => page.locator('.graphiql-tab-active .graphiql-tab-button').innerText();
const response = (page: Page): Promise<string> => page.locator('.graphiql-response').first().innerText();
const variables = (page: Page): Promise<string> => page.locator('.graphiql-editor-tool .view-lines').first().innerText();

/**
 * One real click (pointer events at the tab's place on screen) on the tab titled `title`, then waits
 * until GraphiQL has taken in the tab's document. GraphiQL reads a new editor text 100 ms after it
 * changes (a debounce): it stores the text (`graphiql:query`) and, in the same task, the operation
 * Run sends. A Run pressed before that sends the previous tab's operation name with the new
 * document ("Cannot infer operation …"): no person clicks that fast, a test driver does.
 */
async function openTab(page: Page, title: string): Promise<void> {
  await page.locator(`button.graphiql-tab-button[title="${title}"]`).click();
  expect(await activeTab(page)).toBe(title);
  const stored = (): Promise<string> => page.evaluate(() => localStorage.getItem('graphiql:query') ?? '');
  await expect.poll(stored, { timeout: 20_000 }).toMatch(new RegExp(`\\b(query|mutation|subscription)\\s+${title}\\b`));
}

/** Presses Run (once) and waits for the response to match `expected`. */
async function run(page: Page, expected: RegExp, timeout = 30_000): Promise<void> {
  await page.locator('.graphiql-execute-button').first().click();
  await expect.poll(() => response(page), { timeout }).toMatch(expected);
}

/** The page as served, or (`raw`) rendered without the one-click workaround, at the same address. */
async function openGraphiQL(opts: { raw?: boolean } = {}): Promise<Page> {
  const page = await (await freshContext()).newPage();
  if (opts.raw) {
    const html = await renderGraphiQLPage({ examples: EXAMPLES, oneClickTabs: false });
    await page.route(t.stack.gateway.graphqlUrl, (route) =>
      route.request().method() === 'GET' ? route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: html }) : route.fallback(),
    );
  }
  const answer = await page.goto(t.stack.gateway.graphqlUrl);
  expect(answer?.status()).toBe(200);
  // Chromium accepts brotli: the 9 MB page travels compressed.
  if (!opts.raw) expect((await answer?.allHeaders())?.['content-encoding']).toBe('br');
  await page.locator('.graphiql-tab').first().waitFor({ timeout: 60_000 });
  // The schema is loaded (introspection answered) before anything runs.
  await page.locator('.graphiql-execute-button').first().waitFor();
  return page;
}

describe('the examples say what is true', () => {
  it('the tabs a comment names exist (a comment names another tab by its title)', () => {
    const titles = new Set(EXAMPLES.map((e) => e.title));
    const named: string[] = [];
    for (const e of EXAMPLES) {
      const comments = e.query
        .split('\n')
        .filter((l) => l.trimStart().startsWith('#'))
        .join(' ');
      for (const [, title] of comments.matchAll(/\b([A-Z][A-Za-z]+) tab\b/g)) {
        expect(titles, `${e.title} names ${title}`).toContain(title);
        named.push(title);
      }
    }
    expect(named.sort()).toEqual(['OrderPatrimonialReport', 'WatchRequest']);
  });

  it('CompanyProfile costs what its comment says, then nothing (cache)', async () => {
    const profile = EXAMPLES.find((e) => e.title === 'CompanyProfile')!;
    await t.clearCalls();
    const first = await t.gql(profile.query, profile.variables);
    expect(first.errors).toBeUndefined();
    // IT-advanced (identity, address, managers, ecofin) and IT-stakeholders (shareholders): €0.65.
    expect((await t.calls()).map((c) => `${c.method} ${c.path} ${c.price}`)).toEqual(['GET /IT-advanced/12485671007 0.15', 'GET /IT-stakeholders/12485671007 0.5']);
    expect(first.extensions?.cost).toMatchObject({ upstreamCalls: 2, euro: 0.65 });
    expect(profile.query).toMatch(/two upstream calls \(IT-advanced, IT-stakeholders: €0\.65\)/);
    await t.clearCalls();
    expect((await t.gql(profile.query, profile.variables)).errors).toBeUndefined();
    expect(await t.calls()).toEqual([]);
  });
});

describe('GraphiQL as shipped', () => {
  it('opens offline on the first example, which runs with one press of Run; tabs switch with one click; docs one click away', async () => {
    const page = await openGraphiQL();
    try {
      // Tab titles are the examples' titles (their operation names), in order, the first open.
      expect(await page.locator('.graphiql-tab-button').allInnerTexts()).toEqual(EXAMPLES.map((e) => e.title));
      // …each whole, in one row that needs no scrolling at 1,440 px (none cut at the strip's edge).
      const strip = await page.locator('.graphiql-tabs').evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth, right: el.getBoundingClientRect().right }));
      expect(strip.scroll).toBeLessThanOrEqual(strip.client);
      const rights = await page.locator('.graphiql-tab').evaluateAll((tabs) => tabs.map((t) => t.getBoundingClientRect().right));
      expect(Math.max(...rights)).toBeLessThanOrEqual(strip.right);
      const cut = await page.locator('.graphiql-tab-button').evaluateAll((buttons) => buttons.filter((b) => b.scrollWidth > b.clientWidth).map((b) => b.textContent));
      expect(cut).toEqual([]);
      expect(await activeTab(page)).toBe(EXAMPLES[0].title);
      // Its variables are there.
      await expect.poll(() => variables(page), { timeout: 20_000 }).toMatch(/"vatCode":\s*"12485671007"/);

      await run(page, /"companyName":\s*"/);
      expect(await response(page)).not.toMatch(/"errors"/);

      // One click on another tab switches to it (and shows its own variables, or none); it runs too.
      await openTab(page, 'LegalForms');
      await expect.poll(() => page.locator('.graphiql-query-editor .view-lines').first().innerText(), { timeout: 20_000 }).toMatch(/query\s+LegalForms/);
      await run(page, /"legalForms":\s*\[/);
      expect(await response(page)).not.toMatch(/"errors"/);
      await openTab(page, 'OwnershipWalk');
      await expect.poll(() => variables(page), { timeout: 20_000 }).toMatch(/"vatCode":\s*"03456783053"/);

      // The docs explorer: one click on the sidebar's button shows the schema's root types.
      await page.locator('button[aria-label="Show Documentation Explorer"]').click();
      await expect.poll(() => page.locator('.graphiql-doc-explorer').innerText(), { timeout: 20_000 }).toMatch(/Query/);
    } finally {
      await page.close();
    }
    expect(offLoopback).toEqual([]);
    expect(seen.length).toBeGreaterThan(0);
  });

  it('without the workaround the first click on a tab misses (which is why it is there)', async () => {
    const page = await openGraphiQL({ raw: true });
    try {
      const before = await activeTab(page);
      const other = before === 'LegalForms' ? 'Search' : 'LegalForms';
      await page.locator(`button.graphiql-tab-button[title="${other}"]`).click();
      expect(await activeTab(page)).toBe(before);
    } finally {
      await page.close();
    }
  });

  it('a reload keeps the tabs as they were: none added', async () => {
    const page = await openGraphiQL();
    try {
      // A first visit (a browser context of its own: empty storage). Clearing the storage of an open
      // page and reloading raced GraphiQL's own deferred write of its editors (an "<untitled>" tab
      // came back now and then).
      expect(await page.locator('.graphiql-tab-button').allInnerTexts()).toEqual(EXAMPLES.map((e) => e.title));
      await openTab(page, 'LegalForms');
      // GraphiQL writes the open tab's editors to its storage a moment after a switch; a reload comes later.
      const stored = (): Promise<string> => page.evaluate(() => `${localStorage.getItem('graphiql:query') ?? ''}|${localStorage.getItem('graphiql:variables') ?? ''}`);
      await expect.poll(stored, { timeout: 20_000 }).toMatch(/query LegalForms[\s\S]*\|$/);
      // …and its tab state (which tabs, which one is open), which the reload restores.
      const tabState = (): Promise<string> =>
        page.evaluate(() => {
          const state = JSON.parse(localStorage.getItem('graphiql:tabState') ?? '{}') as { tabs?: Array<{ query?: string | null }>; activeTabIndex?: number };
          return `${state.tabs?.length ?? 0}|${state.tabs?.[state.activeTabIndex ?? -1]?.query ?? ''}`;
        });
      await expect.poll(tabState, { timeout: 20_000 }).toMatch(new RegExp(`^${EXAMPLES.length}\\|[\\s\\S]*query LegalForms`));
      await page.reload();
      await page.locator('.graphiql-tab').first().waitFor({ timeout: 60_000 });
      expect(await page.locator('.graphiql-tab-button').allInnerTexts()).toEqual(EXAMPLES.map((e) => e.title));
      expect(await activeTab(page)).toBe('LegalForms');
    } finally {
      await page.close();
    }
  }, 120_000);

  it('orders a report in one tab and watches it in another: a subscription showing two states', async () => {
    const page = await openGraphiQL();
    try {
      await openTab(page, 'OrderPatrimonialReport');
      await run(page, /"id":\s*"[^"]+"/);
      const id = /"id":\s*"([^"]+)"/.exec(await response(page))![1];

      await openTab(page, 'WatchRequest');
      // Paste the id into the variables, as the tab's comment says.
      await page.locator('.graphiql-editor-tool .view-lines').first().click();
      await page.keyboard.press('ControlOrMeta+A');
      await page.keyboard.press('Delete');
      await expect.poll(() => variables(page), { timeout: 20_000 }).toBe('');
      await page.keyboard.insertText(JSON.stringify({ id }));
      await expect.poll(() => variables(page), { timeout: 20_000 }).toBe(JSON.stringify({ id }));
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
