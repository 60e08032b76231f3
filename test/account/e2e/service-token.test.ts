/**
 * The layer's own token, managed: with the account's credentials and no OPENAPI_TOKEN, the layer
 * mints a token with the scopes of the areas its subgraphs call, renews it before it expires (clocks
 * moved, layer and emulator), and no operation fails across the swap; nothing restarts.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { managedTokenOf, scopesFor } from '../../../subgraphs/upstream/service-token.ts';
import { tokenEndpoints } from '../../../subgraphs/index.ts';

const OPERATOR_KEY = 'operator-key-0123456789abcdef';
let t: TestStack;
let now = Date.now();

beforeAll(async () => {
  // The emulator's built-in account (its default e-mail and API key) is the layer's account here.
  t = await startTestStack(
    { OPENAPI_EMAIL: 'emulator@example.com', OPENAPI_APIKEY: 'emulator-apikey', OPENAPI_MANAGED_TOKEN_TTL_S: '3600', OPENAPI_ACCOUNT_API_KEY: OPERATOR_KEY },
    { clock: () => now },
  );
  now = (await t.clock.manual()).nowMs;
}, 60_000);
afterAll(async () => {
  await t?.close();
});

async function advance(ms: number): Promise<void> {
  await t.clock.advance(ms);
  now += ms;
}

it('mints a token with the scopes of the served areas, renews it before expiry, and no operation fails', async () => {
  const minted = (await t.calls('oauth')).filter((c) => c.method === 'POST' && c.path === '/tokens');
  expect(minted).toHaveLength(1);
  const manager = managedTokenOf(t.stack.upstream)!;
  expect(manager).toBeDefined();

  // Whatever the caller sends, the layer's token pays.
  const tails: string[] = [];
  const query = async (code: string) => {
    await t.clearCalls();
    const res = await t.gql('query ($c: String!) { postalCode(code: $c) { code } }', { c: code }, { authorization: 'Bearer some-caller-token-0000' });
    expect(res.errors).toBeUndefined();
    const call = (await t.calls('cap'))[0];
    tails.push((call as unknown as { token: string }).token);
  };
  await query('00136');
  await advance(3000 * 1000); // not yet due (renewal a tenth of the hour before expiry)
  await query('00137');
  expect(tails[1]).toBe(tails[0]);

  await advance(300 * 1000); // 3,300 s: due, still valid
  await query('00138'); // served by the old token while the new one is minted
  await manager.settled();
  await query('00139');
  expect(tails[2]).toBe(tails[0]);
  expect(tails[3]).not.toBe(tails[0]);

  await advance(600 * 1000); // past the first token's expiry: only the new one is used
  await query('00140');
  expect(tails[4]).toBe(tails[3]);
});

it("the layer's own token cannot be updated, rotated or deleted through the account API (FORBIDDEN, nothing called)", async () => {
  const value = managedTokenOf(t.stack.upstream)!.current();
  await t.clearCalls();
  const operator = { 'x-openapi-account-key': OPERATOR_KEY };
  for (const q of [
    'mutation ($t: String!) { deleteToken(token: $t) }',
    'mutation ($t: String!) { rotateToken(token: $t) { value } }',
    'mutation ($t: String!) { updateToken(token: $t, input: { name: "mine now" }) { name } }',
  ]) {
    const res = await t.gql(q, { t: value }, operator);
    expect(res.errors?.[0]?.extensions?.code, q).toBe('FORBIDDEN');
    expect(JSON.stringify(res)).not.toContain(value);
  }
  expect(await t.calls('oauth')).toEqual([]);
  // Still the layer's, still working.
  expect((await t.gql('{ postalCode(code: "00141") { code } }')).errors).toBeUndefined();
  expect(managedTokenOf(t.stack.upstream)!.current()).toBe(value);
});

it('scopes: each method and endpoint the served subgraphs call, and no other', () => {
  const scopes = scopesFor('emulator', tokenEndpoints(['company', 'postal', 'account']));
  // One scope per method and endpoint the tables name: no wildcard, no other area.
  expect(scopes.some((x) => x.includes('*'))).toBe(false);
  expect(scopes).toContain('GET:test.cap.openapi.it/cerca_comuni');
  expect(scopes).toContain('GET:test.company.openapi.com/IT-start');
  expect(scopes.every((x) => /^[A-Z]+:test\.(cap\.openapi\.it|company\.openapi\.com)\/[^/]+$/.test(x))).toBe(true);
  expect(scopesFor('production', tokenEndpoints(['risk'])).every((x) => x.includes(':risk.openapi.com/'))).toBe(true);
});

it('with credentials the authorization area refuses, the layer still starts, answers UNAUTHENTICATED saying why, and buys nothing', async () => {
  const apikey = 'wrong-apikey-0123456789abcdef';
  const bad = await startTestStack({ OPENAPI_EMAIL: 'nobody@example.com', OPENAPI_APIKEY: apikey });
  try {
    const res = await bad.gql('{ postalCode(code: "00136") { code } }');
    expect(res.errors?.map((e) => e.extensions?.code)).toEqual(['UNAUTHENTICATED']);
    expect(res.errors?.[0]?.message).toMatch(/minting it with OPENAPI_EMAIL and OPENAPI_APIKEY failed/);
    expect(JSON.stringify(res)).not.toContain(apikey);
    expect(await bad.calls('cap')).toEqual([]);
    // Every attempt is one call to the authorization area: the first at start, one per operation since.
    expect((await bad.calls('oauth')).filter((c) => c.method === 'POST' && c.path === '/tokens').length).toBeGreaterThanOrEqual(1);
  } finally {
    await bad.close();
  }
});
