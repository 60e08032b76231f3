/**
 * CSRF and CORS in a real browser (Debian's chromium, driven by playwright-core; `npm test` installs
 * it with scripts/ensure-chromium.mjs). An attacker page on another site (`localhost:<port>`, the
 * gateway being on `127.0.0.1:<port>`) tries to order a paid report with the account the gateway
 * uses: an auto-submitted HTML form, a multipart form, a credentialed JSON fetch and a no-cors
 * text/plain fetch. Nothing may be ordered, and the gateway must grant the page no CORS. Controls:
 * with CORS_ORIGINS naming the page's origin the JSON fetch works (so the browser really runs), and
 * the gateway's own GraphiQL page still runs queries (JSON) and graphql-ws.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page, Response } from 'playwright-core';
import { launchChromium } from '../../support/browser.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { CF } from '../../support/risk.ts';

const ORDER = `mutation { orderPatrimonialReport(input: { name: "MARIO", surname: "ROSSI", taxCode: "${CF}" }) { id } }`;

const escapeHtml = (s: string): string => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** An HTML page that posts a form to `action` as soon as it loads, as a malicious page would. */
function autoSubmitForm(action: string, enctype: string, fields: Record<string, string>): string {
  const inputs = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
  return `<!doctype html><html><body><form id="f" method="POST" enctype="${enctype}" action="${escapeHtml(action)}">${inputs}</form>
<script>document.getElementById('f').submit()</script></body></html>`;
}

interface FetchOutcome {
  ok: boolean;
  status?: number;
  type?: string;
  body?: string;
  error?: string;
}

/** Runs `fetch` inside the page (so from the page's origin, with the browser's rules). */
function pageFetch(page: Page, url: string, init: { mode?: 'cors' | 'no-cors'; credentials?: 'include' | 'omit'; contentType: string; body: string }): Promise<FetchOutcome> {
  return page.evaluate(
    async ({ url, init }) => {
      try {
        const res = await fetch(url, {
          method: 'POST',
          mode: init.mode ?? 'cors',
          credentials: init.credentials ?? 'include',
          headers: { 'content-type': init.contentType },
          body: init.body,
        });
        return { ok: true, status: res.status, type: res.type, body: res.type === 'opaque' ? '' : await res.text() };
      } catch (err) {
        return { ok: false, error: String(err) };
      }
    },
    { url, init },
  );
}

let attacker: Server;
let attackerOrigin: string;
const pages = new Map<string, string>();
let t: TestStack; // CORS_ORIGINS unset (the default)
let allowed: TestStack; // CORS_ORIGINS = the attacker page's origin (positive control)
let browser: Browser;
let context: BrowserContext;

beforeAll(async () => {
  attacker = createServer((req, res) => {
    const html = pages.get((req.url ?? '/').split('?')[0]) ?? '<!doctype html><title>attacker</title>';
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  // `localhost` and `127.0.0.1` are different sites: the page is cross-site to the gateway.
  attackerOrigin = `http://localhost:${(attacker.address() as AddressInfo).port}`;
  [t, allowed] = await Promise.all([startTestStack(), startTestStack({ CORS_ORIGINS: attackerOrigin })]);
  // A non-persistent launch: Playwright gives the browser a fresh, temporary profile.
  browser = await launchChromium();
  context = await browser.newContext();
}, 120_000);

afterAll(async () => {
  await context?.close().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  await Promise.all([t?.close(), allowed?.close()]);
  if (attacker) await new Promise<void>((resolve) => attacker.close(() => resolve()));
});

/** POSTs to the risk area (paid orders) the emulator received. */
async function riskOrders(stack: TestStack): Promise<number> {
  return (await stack.calls('risk')).filter((c) => c.method === 'POST').length;
}

function expectNoCorsGrant(res: Response): void {
  const headers = res.headers();
  expect.soft(headers['access-control-allow-origin']).toBeUndefined();
  expect.soft(headers['access-control-allow-credentials']).toBeUndefined();
}

describe('a page on another site', () => {
  // Soft assertions: without the fix, every way in is reported, not just the first.
  it('cannot order a report with forms, fetch or a WebSocket, and gets no CORS grant', async () => {
    const gateway = t.stack.gateway.graphqlUrl;
    await t.clearCalls();
    const page = await context.newPage();
    const seen: Response[] = [];
    page.on('response', (r) => {
      if (r.url() === gateway) seen.push(r);
    });
    try {
      // (a) a plain HTML form, auto-submitted on load.
      pages.set('/form', autoSubmitForm(gateway, 'application/x-www-form-urlencoded', { query: ORDER }));
      const formAnswer = page.waitForResponse((r) => r.url() === gateway && r.request().method() === 'POST');
      await page.goto(`${attackerOrigin}/form`);
      const a = await formAnswer;
      expect.soft(a.request().headers()['content-type']).toMatch(/^application\/x-www-form-urlencoded/);
      expect.soft(a.request().headers()['origin']).toBe(attackerOrigin);
      expect.soft(a.status()).toBe(403);
      expect.soft(await a.text()).toMatch(/CSRF/);
      expectNoCorsGrant(a);

      // (b) a multipart form (the GraphQL multipart request shape: operations + map).
      pages.set('/multipart', autoSubmitForm(gateway, 'multipart/form-data', { operations: JSON.stringify({ query: ORDER }), map: '{}' }));
      const multipartAnswer = page.waitForResponse((r) => r.url() === gateway && r.request().method() === 'POST');
      await page.goto(`${attackerOrigin}/multipart`);
      const b = await multipartAnswer;
      expect.soft(b.request().headers()['content-type']).toMatch(/^multipart\/form-data/);
      expect.soft(b.status()).toBe(403);
      expectNoCorsGrant(b);

      // (c) fetch with credentials and JSON: the preflight gets no grant, so the POST is never sent.
      await page.goto(`${attackerOrigin}/blank`);
      const before = seen.length;
      const c = await pageFetch(page, gateway, { credentials: 'include', contentType: 'application/json', body: JSON.stringify({ query: ORDER }) });
      expect.soft(c.ok).toBe(false);
      expect.soft(c.error).toMatch(/TypeError|Failed to fetch/);
      expect
        .soft(
          seen
            .slice(before)
            .filter((r) => r.request().method() === 'POST')
            .map((r) => r.status()),
        )
        .toEqual([]);

      // (d) a no-cors text/plain fetch (needs no preflight; the answer is opaque to the page).
      const noCorsAnswer = page.waitForResponse((r) => r.url() === gateway && r.request().method() === 'POST');
      const d = await pageFetch(page, gateway, { mode: 'no-cors', contentType: 'text/plain', body: JSON.stringify({ query: ORDER }) });
      expect.soft(d).toMatchObject({ ok: true, type: 'opaque', status: 0 });
      const dAnswer = await noCorsAnswer;
      expect.soft(dAnswer.status()).toBe(403);
      expectNoCorsGrant(dAnswer);

      // (e) a WebSocket (browsers apply no CORS to it): the handshake from another site is refused.
      const e = await page.evaluate(
        async ([url, query]) =>
          new Promise<string>((resolve) => {
            const ws = new WebSocket(url, 'graphql-transport-ws');
            ws.onerror = () => resolve('refused');
            ws.onopen = () => ws.send(JSON.stringify({ type: 'connection_init', payload: {} }));
            ws.onmessage = (event) => {
              const msg = JSON.parse(String(event.data)) as { type: string };
              if (msg.type === 'connection_ack') ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query } }));
              else resolve(msg.type);
            };
          }),
        [gateway.replace(/^http/, 'ws'), ORDER] as const,
      );
      expect.soft(e).toBe('refused');
    } finally {
      await page.close();
    }
    // Nothing was bought: no POST reached the risk area (nor anything else upstream).
    expect.soft(await riskOrders(t)).toBe(0);
    expect.soft(await t.calls()).toEqual([]);
  });

  it('with CORS_ORIGINS naming it, may run the JSON fetch (control: the browser really sends it), but still no form post', async () => {
    const gateway = allowed.stack.gateway.graphqlUrl;
    await allowed.clearCalls();
    const page = await context.newPage();
    try {
      await page.goto(`${attackerOrigin}/blank`);
      const c = await pageFetch(page, gateway, { credentials: 'include', contentType: 'application/json', body: JSON.stringify({ query: ORDER }) });
      expect(c.ok).toBe(true);
      expect(c.status).toBe(200);
      const body = JSON.parse(c.body ?? '{}') as { data?: { orderPatrimonialReport?: { id?: string } }; errors?: unknown };
      expect(body.errors).toBeUndefined();
      expect(body.data?.orderPatrimonialReport?.id).toBeTruthy();
      expect(await riskOrders(allowed)).toBe(1);

      // CORS does not open the door to forms: they still need the preflight-forcing header.
      pages.set('/form-allowed', autoSubmitForm(gateway, 'application/x-www-form-urlencoded', { query: ORDER }));
      const formAnswer = page.waitForResponse((r) => r.url() === gateway && r.request().method() === 'POST');
      await page.goto(`${attackerOrigin}/form-allowed`);
      expect((await formAnswer).status()).toBe(403);
      expect(await riskOrders(allowed)).toBe(1);
    } finally {
      await page.close();
    }
  });
});

describe("the gateway's own GraphiQL page", () => {
  it('still runs a query (JSON post) and graphql-ws', async () => {
    const page = await context.newPage();
    try {
      await page.goto(t.stack.gateway.graphqlUrl);
      // The LegalForms example tab (one without variables), run with GraphiQL's own button.
      // (A DOM click: GraphiQL's draggable tab strip swallows a synthetic pointer click in headless mode.)
      await page.locator('button.graphiql-tab-button[title="LegalForms"]').dispatchEvent('click', undefined, { timeout: 20_000 });
      await page.locator('.graphiql-execute-button').first().click();
      await expect.poll(() => page.locator('.graphiql-response').first().innerText(), { timeout: 20_000 }).toMatch(/"legalForms":\s*\[\s*\{\s*"code":\s*"AA"/);
      expect(await page.locator('.graphiql-response').first().innerText()).not.toMatch(/"errors"/);

      // graphql-ws from the page, as GraphiQL's subscriptions do.
      const wsUrl = t.stack.gateway.wsUrl;
      const result = await page.evaluate(
        (url) =>
          new Promise<string>((resolve, reject) => {
            const ws = new WebSocket(url, 'graphql-transport-ws');
            const timer = setTimeout(() => reject(new Error('graphql-ws timed out')), 10_000);
            ws.onerror = () => reject(new Error('graphql-ws error'));
            ws.onopen = () => ws.send(JSON.stringify({ type: 'connection_init', payload: {} }));
            ws.onmessage = (event) => {
              const msg = JSON.parse(String(event.data)) as { type: string; payload?: unknown };
              if (msg.type === 'connection_ack') ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: '{ __typename }' } }));
              if (msg.type === 'next' || msg.type === 'error') {
                clearTimeout(timer);
                ws.close();
                resolve(JSON.stringify(msg.payload));
              }
            };
          }),
        wsUrl,
      );
      expect(JSON.parse(result)).toMatchObject({ data: { __typename: 'Query' } });
    } finally {
      await page.close();
    }
  });
});
