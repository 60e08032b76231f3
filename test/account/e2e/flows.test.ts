/**
 * The account through the gateway: the account's credentials as configuration, every field and
 * mutation against the emulator's authorization area, the one wallet the other areas charge, the
 * error log showing an error another area gave, rotation, and the clear errors without credentials
 * or with the account API off. Only an operator uses it: the key `OPENAPI_ACCOUNT_API_KEY` in the
 * `x-openapi-account-key` header, else refused before any call; the layer's own token cannot be
 * changed through it; new tokens get scopes of the layer's areas only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { createResolvers } from '../../../subgraphs/account/resolvers.ts';
import { accountAccess, checkAccess, keyMatches } from '../../../subgraphs/account/access.ts';
import type { SubgraphContext } from '../../../subgraphs/runtime/context.ts';
import type { Obj } from '../../../contract/values.ts';

const EMAIL = 'operator@example.com';
const APIKEY = 'account-e2e-apikey-0123456789';
const OPERATOR_KEY = 'operator-key-0123456789abcdef';
const OPERATOR = { 'x-openapi-account-key': OPERATOR_KEY };
let t: TestStack;

beforeAll(async () => {
  // Callers pass their own tokens through (no managed service token here).
  t = await startTestStack({ OPENAPI_EMAIL: EMAIL, OPENAPI_APIKEY: APIKEY, OPENAPI_MANAGED_TOKEN: 'off', OPENAPI_ACCOUNT_API_KEY: OPERATOR_KEY });
  await t.control('oauth/account', { email: EMAIL, apikey: APIKEY, credit: 20 });
}, 60_000);
afterAll(async () => {
  await t?.close();
});

/** As the operator (the key sent), unless `headers` says otherwise. */
const ok = async <T = Obj>(query: string, variables?: Obj, headers?: Record<string, string>): Promise<T> => {
  const res = await t.gql<T>(query, variables, headers ?? OPERATOR);
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data!;
};

describe('account through the gateway', () => {
  it('tokens made here spend from the account wallet; the error log shows another area error; rotation; deletion', async () => {
    const before = await ok<{ account: { email: string; wallet: { credit: number }; scopes: Array<{ scope: string }> } }>(
      '{ account { email wallet { credit } scopes { scope } } }',
    );
    expect(before.account.email).toBe(EMAIL);
    expect(before.account.wallet.credit).toBe(20);
    expect(before.account.scopes.map((s) => s.scope)).toContain('GET:test.cap.openapi.it/comuni_base');

    const created = await ok<{ createToken: { value: string; token: { hint: string; name: string; scopes: string[] } } }>(
      'mutation { createToken(input: { scopes: ["GET:cap.openapi.it/cerca_comuni", "GET:cap.openapi.it/comuni_base"], name: "frontend", ttl: 86400 }) { value token { hint name scopes } } }',
    );
    const value = created.createToken.value;
    expect(created.createToken.token).toEqual({
      hint: `…${value.slice(-4)}`,
      name: 'frontend',
      scopes: ['GET:test.cap.openapi.it/cerca_comuni', 'GET:test.cap.openapi.it/comuni_base'],
    });

    // The new token, passed through by a caller, is charged to the account's wallet.
    const bearer = { authorization: `Bearer ${value}` };
    await ok('{ municipality(istatCode: "058091") { postalCodes } }', {}, bearer);
    // A scope it lacks: the postal area refuses it (401 Wrong Token), and the account's error log says so.
    const refused = await t.gql('{ postalCode(code: "00136") { code } }', {}, bearer);
    expect(refused.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');

    const after = await ok<{
      account: {
        wallet: { credit: number };
        transactions: Array<{ amount: number; description: string }>;
        errors: Array<Obj>;
        tokens: Array<{ hint: string; stats: Obj }>;
        stats: Obj;
      };
    }>(
      '{ account { wallet { credit } transactions(limit: 2) { amount description } errors(limit: 1) { scope domain httpResponseCode errorCode message } tokens { hint stats { totalRequests errorRequests walletAmount } } stats { errorRequests walletAmount } } }',
    );
    expect(after.account.wallet.credit).toBe(19.96);
    expect(after.account.transactions[0]).toEqual({ amount: -0.04, description: 'API usage - test.cap.openapi.it' });
    expect(after.account.errors[0]).toEqual({ scope: 'GET:test.cap.openapi.it/cap', domain: 'test.cap.openapi.it', httpResponseCode: 401, errorCode: 125, message: 'Wrong Token' });
    expect(after.account.tokens.find((x) => x.hint === `…${value.slice(-4)}`)!.stats).toEqual({ totalRequests: 3, errorRequests: 1, walletAmount: 0.04 });
    expect(after.account.stats).toMatchObject({ walletAmount: 0.04 });

    const updated = await ok<{ updateToken: { scopes: string[]; name: string } }>(
      'mutation ($t: String!) { updateToken(token: $t, input: { scopes: ["GET:cap.openapi.it/*"], name: "frontend-2" }) { scopes name } }',
      { t: value },
    );
    expect(updated.updateToken).toEqual({ scopes: ['GET:test.cap.openapi.it/*'], name: 'frontend-2' });
    await ok('{ postalCode(code: "00136") { code } }', {}, bearer);

    const rotated = await ok<{ rotateToken: { value: string; token: { name: string; scopes: string[] } } }>(
      'mutation ($t: String!) { rotateToken(token: $t) { value token { name scopes } } }',
      { t: value },
    );
    expect(rotated.rotateToken.value).not.toBe(value);
    expect(rotated.rotateToken.token).toEqual({ name: 'frontend-2', scopes: ['GET:test.cap.openapi.it/*'] });
    await t.stack.upstream.clearCache();
    expect((await t.gql('{ postalCode(code: "00137") { code } }', {}, bearer)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    await ok('{ postalCode(code: "00137") { code } }', {}, { authorization: `Bearer ${rotated.rotateToken.value}` });
    // rotation: a read of the token (for its refresh token) with Basic, then the PATCH with the refresh token
    const oauth = (await t.calls('oauth')).map((c) => `${c.method} ${c.path.replace(value, '{old}')}`);
    expect(oauth.slice(-2)).toEqual(['GET /tokens/{old}', 'PATCH /tokens/{old}']);

    expect((await ok<{ deleteToken: boolean }>('mutation ($t: String!) { deleteToken(token: $t) }', { t: rotated.rotateToken.value })).deleteToken).toBe(true);
    expect((await ok<{ deleteToken: boolean }>('mutation ($t: String!) { deleteToken(token: $t) }', { t: rotated.rotateToken.value })).deleteToken).toBe(false);
    expect((await ok<{ account: { token: unknown } }>('query ($t: String!) { account { token(token: $t) { hint } } }', { t: rotated.rotateToken.value })).account.token).toBeNull();
  });

  it('subscriptions, scope detail with price and free tier, stats by domain, IPs, callbacks', async () => {
    await t.control('oauth/subscribe', { email: EMAIL, scope: 'GET:test.cap.openapi.it/comuni_advance', totalRequests: 1000, pricePerRequest: 0.0066 });
    const d = await ok<{
      account: {
        subscriptions: Array<Obj & { id: string }>;
        scopes: Array<{ id: string; scope: string }>;
        statsByDomain: Array<{ domain: string }>;
        ips: string[];
        callbacks: unknown[];
      };
    }>('{ account { subscriptions { id scope availableRequests active } scopes { id scope } statsByDomain { domain } ips callbacks { id } } }');
    expect(d.account.subscriptions).toEqual([{ id: expect.any(String), scope: 'GET:test.cap.openapi.it/comuni_advance', availableRequests: 1000, active: true }]);
    const sub = await ok<{ account: { subscription: Obj } }>('query ($id: ID!) { account { subscription(id: $id) { totalRequests pricePerRequest type autorenew } } }', {
      id: d.account.subscriptions[0].id,
    });
    expect(sub.account.subscription).toEqual({ totalRequests: 1000, pricePerRequest: 0.0066, type: 'monthly', autorenew: true });
    const cerca = d.account.scopes.find((s) => s.scope === 'GET:test.cap.openapi.it/cerca_comuni')!;
    const scope = await ok<{ account: { scope: Obj } }>('query ($id: ID!) { account { scope(id: $id) { freeDayLimit prices { name euro } } } }', { id: cerca.id });
    expect(scope.account.scope).toEqual({ freeDayLimit: 1440, prices: [{ name: 'cerca_comuni', euro: 0.001 }] });
    expect(d.account.statsByDomain.map((x) => x.domain)).toEqual(expect.arrayContaining(['test.cap.openapi.it', 'test.oauth.openapi.com']));
    expect(d.account.ips.length).toBeGreaterThan(0);
    expect(Array.isArray(d.account.callbacks)).toBe(true);
    expect((await ok<{ account: { callback: unknown } }>('{ account { callback(id: "000000000000000000000000") { id } } }')).account.callback).toBeNull();
    const dom = await ok<{ account: { domainStats: { scopes: Array<{ scope: string }> } } }>(
      '{ account { domainStats(domain: "test.cap.openapi.it") { totalRequests scopes { scope totalRequests } } } }',
    );
    expect(dom.account.domainStats.scopes.map((s) => s.scope)).toContain('GET:test.cap.openapi.it/comuni_base');
  });

  it('bad input is refused before any call', async () => {
    await t.clearCalls();
    for (const q of [
      '{ account { stats(date: "2026/01") { totalRequests } } }',
      '{ account { tokens(limit: 500) { hint } } }',
      'mutation { createToken(input: { scopes: ["company.openapi.com"] }) { value } }',
      'mutation { updateToken(token: "abcdefgh1234", input: {}) { name } }',
    ]) {
      expect((await t.gql(q, {}, OPERATOR)).errors?.[0]?.extensions?.code, q).toBe('BAD_USER_INPUT');
    }
    expect(await t.calls('oauth')).toEqual([]);
  });
});

describe('the operator key', () => {
  const QUERIES = [
    '{ account { email wallet { credit } ips transactions { amount } } }',
    'mutation { createToken(input: { scopes: ["*:*/*"] }) { value } }',
    'mutation { deleteToken(token: "abcdefgh12345678") }',
    'mutation { rotateToken(token: "abcdefgh12345678") { value } }',
  ];

  it('without it, or with a wrong one, every account field and mutation is UNAUTHENTICATED, nothing called', async () => {
    await t.clearCalls();
    for (const q of QUERIES) {
      const variants: Array<Record<string, string>> = [{}, { 'x-openapi-account-key': 'not-the-operator-key-0000' }, { 'x-openapi-account-key': '' }];
      for (const headers of variants) {
        const res = await t.gql(q, {}, headers);
        expect(res.errors?.[0]?.extensions?.code, `${q} ${JSON.stringify(headers)}`).toBe('UNAUTHENTICATED');
        expect(res.data?.account ?? null).toBeNull();
      }
    }
    expect(await t.calls()).toEqual([]);
  });

  it("with it, the account answers; createToken gives scopes of the layer's areas only", async () => {
    const res = await ok<{ account: { email: string } }>('{ account { email } }');
    expect(res.account.email).toBe(EMAIL);
    await t.clearCalls();
    for (const scopes of [
      '"*:*/*"',
      '"GET:*/*"',
      '"*:oauth.openapi.com/*"',
      '"*:test.oauth.openapi.com/tokens"',
      '"GET:*.openapi.it/*"',
      '"GET:cap.openapi.it/cap", "POST:example.com/x"',
    ]) {
      const refused = await t.gql(`mutation { createToken(input: { scopes: [${scopes}] }) { value } }`, {}, OPERATOR);
      expect(refused.errors?.[0]?.extensions?.code, scopes).toBe('BAD_USER_INPUT');
    }
    const updated = await t.gql('mutation { updateToken(token: "abcdefgh12345678", input: { scopes: ["*:*/*"] }) { name } }', {}, OPERATOR);
    expect(updated.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(await t.calls('oauth')).toEqual([]);
    const made = await ok<{ createToken: { token: { scopes: string[] } } }>(
      'mutation { createToken(input: { scopes: ["*:cap.openapi.it/*", "GET:test.company.openapi.com/IT-start"] }) { token { scopes } } }',
    );
    expect(made.createToken.token.scopes).toEqual(['*:test.cap.openapi.it/*', 'GET:test.company.openapi.com/IT-start']);
  });
});

describe('configuration', () => {
  const ctx = (credentials: { email: string; apikey: string } | null, key?: string) =>
    ({ upstream: { config: { accountCredentials: credentials } }, headers: new Headers(key ? { 'x-openapi-account-key': key } : {}) }) as unknown as SubgraphContext;
  const account = (env: NodeJS.ProcessEnv, c: SubgraphContext) => {
    const q = createResolvers({ access: accountAccess(env), servedAreas: [] }).Query as { account: (p: unknown, a: unknown, c: SubgraphContext) => unknown };
    try {
      q.account({}, {}, c);
      return null;
    } catch (err) {
      return err as { extensions?: { code?: string }; message: string };
    }
  };
  const KEY = { OPENAPI_ACCOUNT_API_KEY: OPERATOR_KEY };

  it('without credentials the account fields answer a clear error; off, FORBIDDEN', () => {
    expect(account({}, ctx(null))).toMatchObject({ extensions: { code: 'ACCOUNT_NOT_CONFIGURED' }, message: expect.stringContaining('OPENAPI_EMAIL and OPENAPI_APIKEY') });
    expect(account({ ...KEY, OPENAPI_ACCOUNT_API: 'off' }, ctx({ email: 'a@b.c', apikey: 'k' }, OPERATOR_KEY))).toMatchObject({ extensions: { code: 'FORBIDDEN' } });
    expect(account(KEY, ctx({ email: 'a@b.c', apikey: 'k' }, OPERATOR_KEY))).toBeNull();
  });

  it("without a key configured: open only with the emulator's built-in account, else FORBIDDEN naming the variable", () => {
    expect(accountAccess({})).toEqual({ mode: 'open' });
    expect(accountAccess({ OPENAPI_ENV: 'emulator', OPENAPI_ACCOUNT_API: 'on' })).toEqual({ mode: 'open' });
    expect(accountAccess({ OPENAPI_ENV: 'emulator', OPENAPI_EMAIL: 'a@b.c', OPENAPI_APIKEY: 'k' })).toEqual({ mode: 'unconfigured' });
    expect(accountAccess({ OPENAPI_ENV: 'production' })).toEqual({ mode: 'unconfigured' });
    expect(accountAccess({ OPENAPI_ENV: 'production', OPENAPI_ACCOUNT_API: 'on' })).toEqual({ mode: 'unconfigured' });
    expect(accountAccess({ OPENAPI_ACCOUNT_API: 'off' })).toEqual({ mode: 'off' });
    expect(account({ OPENAPI_ENV: 'production' }, ctx({ email: 'a@b.c', apikey: 'k' }))).toMatchObject({
      extensions: { code: 'FORBIDDEN' },
      message: expect.stringContaining('OPENAPI_ACCOUNT_API_KEY'),
    });
    // A key configured is required even with the emulator's built-in account.
    expect(() => checkAccess(accountAccess(KEY), null)).toThrow(/x-openapi-account-key/);
    expect(() => accountAccess({ OPENAPI_ACCOUNT_API_KEY: 'short' })).toThrow(/16 characters/);
    expect(keyMatches(OPERATOR_KEY, OPERATOR_KEY)).toBe(true);
    expect(keyMatches(OPERATOR_KEY, `${OPERATOR_KEY}x`)).toBe(false);
    expect(keyMatches(OPERATOR_KEY, null)).toBe(false);
  });
});
