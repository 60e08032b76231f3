/**
 * The managed token is minted with the scopes the layer calls that the account has enabled
 * (`GET /scopes`): one scope the vendor does not know never fails the whole mint; what is dropped is
 * logged, with scopes only (no secret). Unit test on a recording upstream.
 */
import { afterEach, expect, it, vi } from 'vitest';
import { MemoryLogWriter } from '@graphql-hive/logger';
import { logLevelOfEnv, logTo, setLogLevel } from '../../../platform/log.ts';
import { graceMsFor, ManagedServiceToken } from '../../../subgraphs/upstream/service-token.ts';
import { tokenHoldMs } from '../../../subgraphs/index.ts';
import type { Endpoint } from '../../../subgraphs/upstream/endpoint.ts';
import type { CallOptions, Upstream } from '../../../subgraphs/upstream/upstream.ts';

const WANTED = ['GET:test.cap.openapi.it/cap', 'GET:test.cap.openapi.it/provincia', 'GET:test.cap.openapi.it/dug'];

/** An upstream answering GET /scopes with `enabled` (or failing) and recording the POST /tokens bodies. */
function upstream(scopes: () => unknown): { upstream: Upstream; minted: unknown[] } {
  const minted: unknown[] = [];
  const call = (_ctx: unknown, ep: Endpoint, opts: CallOptions = {}): Promise<unknown> => {
    if (ep.method === 'GET' && ep.path === '/scopes') return Promise.resolve(scopes());
    if (ep.method === 'POST' && ep.path === '/tokens') {
      minted.push((opts.body as { scopes: unknown }).scopes);
      return Promise.resolve({ token: `minted-token-${minted.length}-abcdef`, expireAt: new Date(Date.now() + 3600_000).toISOString() });
    }
    return Promise.resolve(null);
  };
  return { upstream: { call } as unknown as Upstream, minted };
}

afterEach(() => vi.restoreAllMocks());

it('mints with the enabled scopes only and logs what it dropped (scopes, no token)', async () => {
  const memory = new MemoryLogWriter();
  logTo(memory);
  setLogLevel('warn');
  const u = upstream(() => [
    { scope: 'GET:test.cap.openapi.it/cap', enabled: true },
    { scope: 'GET:test.cap.openapi.it/provincia', enabled: false },
    { scope: 'POST:test.company.openapi.com/IT-full', enabled: true },
  ]);
  const m = new ManagedServiceToken(u.upstream, WANTED, 'someone@example.com');
  try {
    await m.start();
  } finally {
    logTo(null);
    setLogLevel(logLevelOfEnv(process.env));
  }
  expect(u.minted).toEqual([['GET:test.cap.openapi.it/cap']]);
  expect(m.current()).toBe('minted-token-1-abcdef');
  const logged = JSON.stringify(memory.logs);
  expect(logged).toContain('"dropped":["GET:test.cap.openapi.it/provincia","GET:test.cap.openapi.it/dug"]');
  expect(logged).not.toContain('minted-token');
  await m.close();
});

it('a wildcard scope of the account grants what it covers; an unreadable list mints every scope wanted', async () => {
  const wild = upstream(() => ['GET:test.cap.openapi.it/*']);
  const a = new ManagedServiceToken(wild.upstream, WANTED, 'someone@example.com');
  await a.start();
  expect(wild.minted).toEqual([WANTED]);
  await a.close();

  vi.spyOn(console, 'warn').mockImplementation(() => undefined);
  const failing = upstream(() => {
    throw new Error('authorization area down');
  });
  const b = new ManagedServiceToken(failing.upstream, WANTED, 'someone@example.com');
  await b.start();
  expect(failing.minted).toEqual([WANTED]);
  await b.close();
});

it('a replaced token stays valid two minutes, longer than any area holds its value (a slow company purchase waiting for its callback)', () => {
  expect(graceMsFor(tokenHoldMs({}))).toBe(120_000);
  expect(graceMsFor(tokenHoldMs({ COMPANY_SLOW_CALLBACK_WAIT_MS: '600000' }))).toBe(720_000);
  expect(graceMsFor(tokenHoldMs({ COMPANY_SLOW_CALLBACK_WAIT_MS: 'soon' }))).toBe(120_000);
});
