/**
 * The real browser of the browser tests: Debian's chromium (`npm test` installs it with
 * scripts/ensure-chromium.mjs), driven by playwright-core, headless, with a fresh temporary profile
 * per launch and nothing of its own on the network (no background updates, sync or QUIC).
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Request } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Chromium, launched; a missing one fails the test file (no skip). */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run node scripts/ensure-chromium.mjs (npm test does)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Routes every request of `context`: one leaving loopback is aborted and its URL pushed to
 * `offLoopback` (the page must work offline; the test asserts the list stays empty); the others are
 * shown to `onRequest`, then sent.
 */
export async function loopbackOnly(context: BrowserContext, offLoopback: string[], onRequest?: (request: Request) => void): Promise<void> {
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if ((url.protocol === 'http:' || url.protocol === 'https:') && !LOOPBACK.has(url.hostname)) {
      offLoopback.push(url.href);
      await route.abort('blockedbyclient');
      return;
    }
    onRequest?.(route.request());
    await route.continue();
  });
}
