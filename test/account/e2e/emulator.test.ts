/**
 * The emulator's authorization area as the vendor's OAuth v2: Basic auth with an account's e-mail
 * and API key, tokens (create, list, read, update, delete, rotate with the refresh token), scopes,
 * the one wallet every area charges with its transactions, subscriptions, stats and the error log
 * fed by other areas' errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startEmulator, type RunningEmulator } from '../../../emulator/server.ts';

let emu: RunningEmulator;
const EMAIL = 'ops@example.com';
let APIKEY = '';

beforeAll(async () => {
  emu = await startEmulator();
  const res = await request(`${emu.url}/_emulator/oauth/account`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: EMAIL, credit: 50 }),
  });
  APIKEY = ((await res.body.json()) as { apikey: string }).apikey;
});
afterAll(async () => {
  await emu?.close();
});

const basic = (email = EMAIL, key = APIKEY) => `Basic ${Buffer.from(`${email}:${key}`).toString('base64')}`;

async function call(method: string, path: string, auth: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await request(`${emu.url}${path}`, {
    method: method as 'GET',
    headers: { authorization: auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

describe('authorization area (emulator)', () => {
  it('refuses a wrong API key with 401/140', async () => {
    const r = await call('GET', '/oauth/wallet', basic(EMAIL, 'nope'));
    expect(r).toEqual({ status: 401, json: { success: false, message: 'Unauthorized', error: 140, data: null } });
  });

  it('tokens: create, use, the shared wallet and its transactions, the error log, update, rotate, delete', async () => {
    const bad = await call('POST', '/oauth/tokens', basic(), { scopes: [] });
    expect(bad.json).toMatchObject({ error: 70 });
    const unknown = await call('POST', '/oauth/tokens', basic(), { scopes: ['GET:company.openapi.com/nothing-here'] });
    expect(unknown).toMatchObject({ status: 422, json: { error: 90 } });

    const created = await call('POST', '/oauth/tokens', basic(), { scopes: ['GET:cap.openapi.it/comuni_base', 'GET:test.cap.openapi.it/cap'], name: 'layer', ttl: 3600 });
    expect(created.status).toBe(200);
    const token = created.json.token as string;
    expect(created.json).toMatchObject({ name: 'layer', scopes: ['GET:test.cap.openapi.it/comuni_base', 'GET:test.cap.openapi.it/cap'] });
    expect(Date.parse(created.json.expireAt as string) - Date.parse(created.json.createdAt as string)).toBe(3600_000);

    // the token spends from the account's wallet
    expect((await call('GET', '/cap/comuni_base/58091', `Bearer ${token}`)).status).toBe(200);
    const wallet = await call('GET', '/oauth/wallet', basic());
    expect((wallet.json.data as { credit: number }).credit).toBe(49.96);
    const tx = (await call('GET', '/oauth/wallet/transactions', basic())).json.data as Array<{ amount: number; description: string }>;
    expect(tx[0]).toMatchObject({ amount: -0.04, description: 'API usage - test.cap.openapi.it' });
    expect(tx.at(-1)).toMatchObject({ amount: 50, description: 'Wallet recharge' });

    // an error in another area lands in the account's error log
    expect((await call('GET', '/cap/comuni_base/999999', `Bearer ${token}`)).status).toBe(404);
    const errors = (await call('GET', '/oauth/errors', basic())).json.data as Array<Record<string, unknown>>;
    expect(errors[0]).toMatchObject({ scope: 'GET:test.cap.openapi.it/comuni_base', domain: 'test.cap.openapi.it', httpResponseCode: 404, errorCode: 404 });
    // a scope the token lacks: 401 Wrong Token, logged too
    expect((await call('GET', '/cap/regioni', `Bearer ${token}`)).status).toBe(401);

    const stats = (await call('GET', `/oauth/stats?date=${new Date().toISOString().slice(0, 7)}`, basic())).json.data as Record<string, number>;
    expect(stats).toMatchObject({ walletRequests: 1, walletAmount: 0.04 });
    expect(stats.errorRequests).toBeGreaterThanOrEqual(2);
    expect((await call('GET', '/oauth/stats?date=2026/01', basic())).json).toMatchObject({ error: 240 });
    const detail = await call('GET', `/oauth/tokens/${token}`, basic());
    expect(detail.json.stats).toMatchObject({ totalRequests: 3, walletRequests: 1, errorRequests: 2, walletAmount: 0.04 });

    const updated = await call('PATCH', `/oauth/tokens/${token}`, basic(), { name: 'renamed', scopes: ['GET:test.cap.openapi.it/*'] });
    expect(updated.json).toMatchObject({ name: 'renamed', scopes: ['GET:test.cap.openapi.it/*'] });
    expect((await call('GET', '/cap/regioni', `Bearer ${token}`)).status).toBe(200);

    // rotation: the refresh token as bearer, empty body; the old token stops working
    const rotated = await call('PATCH', `/oauth/tokens/${token}`, `Bearer ${created.json.refreshToken as string}`, {});
    expect(rotated.status).toBe(200);
    const fresh = rotated.json.token as string;
    expect(fresh).not.toBe(token);
    expect(rotated.json).toMatchObject({ name: 'renamed', scopes: ['GET:test.cap.openapi.it/*'] });
    expect((await call('GET', '/cap/regioni', `Bearer ${token}`)).status).toBe(401);
    expect((await call('GET', '/cap/regioni', `Bearer ${fresh}`)).status).toBe(200);
    expect((await call('PATCH', `/oauth/tokens/${fresh}`, 'Bearer not-a-refresh-token', {})).json).toMatchObject({ error: 130 });

    const list = (await call('GET', '/oauth/tokens', basic())).json.data as Array<{ token: string }>;
    expect(list.map((t) => t.token)).toEqual([fresh]);
    expect((await call('DELETE', `/oauth/tokens/${fresh}`, basic())).json).toMatchObject({ message: 'Deleted' });
    expect((await call('GET', `/oauth/tokens/${fresh}`, basic())).json).toMatchObject({ error: 120 });
    expect((await call('GET', '/cap/regioni', `Bearer ${fresh}`)).status).toBe(401);
  });

  it('scopes with their price and free tier; subscriptions', async () => {
    const scopes = (await call('GET', '/oauth/scopes', basic())).json.data as Array<{ id: string; scope: string }>;
    const cerca = scopes.find((s) => s.scope === 'GET:test.cap.openapi.it/cerca_comuni')!;
    expect(cerca).toMatchObject({ method: 'GET', endpoint: 'cerca_comuni', domain: 'test.cap.openapi.it', enabled: true });
    const d = (await call('GET', `/oauth/scopes/${cerca.id}`, basic())).json.data as Record<string, unknown>;
    expect(d).toMatchObject({ freeLimits: { dayLimit: 1440 }, prices: { cerca_comuni: 0.001 } });
    expect((await call('GET', '/oauth/scopes/000000000000000000000000', basic())).json).toMatchObject({ error: 10 });

    await request(`${emu.url}/_emulator/oauth/subscribe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: EMAIL, scope: 'GET:test.cap.openapi.it/comuni_advance', totalRequests: 1000, pricePerRequest: 0.0066 }),
    });
    const subs = (await call('GET', '/oauth/subscriptions', basic())).json.data as Array<{ id: string; availableRequests: string }>;
    expect(subs).toHaveLength(1);
    expect(subs[0].availableRequests).toBe('1000');
    const one = (await call('GET', `/oauth/subscriptions/${subs[0].id}`, basic())).json.data as Record<string, unknown>;
    expect(one).toMatchObject({ pricePerRequest: 0.0066, type: 'monthly', totalRequests: '1000' });
    expect((await call('GET', '/oauth/subscriptions/nope', basic())).json).toMatchObject({ error: 220 });
  });
});

describe('OAuth v1 paths (what the vendor SDKs call), on the same accounts', () => {
  it('token at the root, list by scope, read, renew with PUT, delete, credit and counters', async () => {
    const bad = await call('POST', '/oauth/token', basic(), { ttl: 60 });
    expect(bad).toEqual({ status: 406, json: { success: false, message: 'missing scopes', error: 110, data: null } });
    const created = await call('POST', '/oauth/token', basic(), { scopes: ['GET:cap.openapi.it/*'], ttl: 86_400 });
    expect(created.status).toBe(200);
    expect(created.json).toMatchObject({ scopes: ['GET:test.cap.openapi.it/*'], success: true, message: '', error: null });
    expect(created.json.data).toBeUndefined();
    const token = created.json.token as string;
    expect((await call('GET', '/cap/regioni', `Bearer ${token}`)).status).toBe(200);

    const listed = await call('GET', '/oauth/token?scope=GET:cap.openapi.it/*', basic());
    expect((listed.json.data as Array<{ token: string }>).map((t) => t.token)).toEqual([token]);
    expect((await call('GET', '/oauth/token?scope=GET:company.openapi.com/IT-start', basic())).status).toBe(204);
    expect((await call('GET', `/oauth/token/${token}`, basic())).json.data).toMatchObject({ token, scopes: ['GET:test.cap.openapi.it/*'] });
    expect((await call('GET', '/oauth/token/unknown-token-123', basic())).json).toMatchObject({ error: 125, message: 'Wrong Token' });

    const expire = Math.floor(Date.now() / 1000) + 3600;
    const renewed = await call('PUT', `/oauth/token/${token}`, basic(), { scopes: ['GET:cap.openapi.it/*'], expire });
    expect((renewed.json.data as { expire: number }).expire).toBe(expire);
    expect((await call('PUT', `/oauth/token/${token}`, basic(), { scopes: ['GET:cap.openapi.it/*'] })).json).toMatchObject({ error: 310 });

    const credit = (await call('GET', '/oauth/credit', basic())).json.data as { credit: number };
    expect(credit.credit).toBe(((await call('GET', '/oauth/wallet', basic())).json.data as { credit: number }).credit);
    const today = async () =>
      ((await call('GET', `/oauth/counters/day/${new Date().toISOString().slice(0, 10)}`, basic())).json.data as Record<string, { counter: number }>)['GET:cap.openapi.it/regioni']
        .counter;
    const before = await today();
    await call('GET', '/cap/regioni', `Bearer ${token}`);
    expect(await today()).toBe(before + 1);
    expect((await call('GET', '/oauth/counters/total', basic())).json.data).toHaveProperty(['GET:cap.openapi.it/regioni']);
    expect((await call('GET', '/oauth/counters/day/2026-1-1', basic())).json).toMatchObject({ error: 610 });

    expect((await call('DELETE', `/oauth/token/${token}`, basic())).json).toEqual({ message: '1 deleted token', success: true, error: null });
    expect((await call('DELETE', `/oauth/token/${token}`, basic())).json).toMatchObject({ error: 170 });
    expect((await call('GET', '/cap/regioni', `Bearer ${token}`)).status).toBe(401);
  });
});
