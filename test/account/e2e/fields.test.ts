/**
 * Issue 22 (authorization): the vendor fields the account subgraph used to drop, through the gateway
 * against the emulator's authorization area, with exact upstream calls: a callback delivery's
 * domain, active, createdAt, data, custom, headers (values redacted but for plain ones),
 * elapsedTime, attempt, retry, field and method; a subscription's domain, price, createdAt and
 * updatedAt; a token's `stats.ip`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { startReceiver, type Receiver } from '../../support/receiver.ts';
import { mailboxBody } from '../../support/pec.ts';
import { withSafety } from '../../support/safety.ts';
import type { Obj } from '../../../contract/values.ts';

const EMAIL = 'fields22@example.com';
const APIKEY = 'fields22-apikey-0123456789';
const OPERATOR_KEY = 'fields22-operator-0123456789abcdef';
const OPERATOR = { 'x-openapi-account-key': OPERATOR_KEY };
let t: TestStack;
let rx: Receiver;

beforeAll(async () => {
  t = await startTestStack({ OPENAPI_EMAIL: EMAIL, OPENAPI_APIKEY: APIKEY, OPENAPI_MANAGED_TOKEN: 'off', OPENAPI_ACCOUNT_API_KEY: OPERATOR_KEY });
  await t.control('oauth/account', { email: EMAIL, apikey: APIKEY, credit: 20 });
  rx = await startReceiver();
}, 60_000);
afterAll(async () => {
  await rx?.close();
  await t?.close();
});

const ok = async <T = Obj>(query: string, variables?: Obj, headers: Record<string, string> = OPERATOR): Promise<T> => {
  const res = await t.gql<T>(query, variables, headers);
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data!;
};
const oauthCalls = async (): Promise<string[]> => (await t.calls('oauth')).map((c) => `${c.method} ${c.path}`);

describe('callbacks: every field of the vendor Callback', () => {
  it('a delivery read by id carries domain, active, createdAt, data, custom, headers, elapsedTime, attempt, retry, field and method', async () => {
    // A callback the emulator delivers: a mailbox ordered straight from the emulator with a callback
    // to the receiver, then cancelled by the provider (the control API), which fires the callback.
    const token = await t.createToken(10);
    const callback = {
      url: rx.url,
      method: 'JSON',
      field: 'data',
      headers: { Authorization: 'Bearer caller-secret', 'Content-Type': 'application/json' },
      custom: { trackingId: 'abc-123' },
    };
    const res = await request(`${t.stack.emulatorUrl}/pec/pec`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...mailboxBody('fields.twentytwo@legalmail.it', 'STANDARD'), callback }),
    });
    const created = (await res.body.json()) as { data: { id: string } };
    expect(res.statusCode).toBe(200);
    await t.control('pec/cancel', { id: created.data.id });
    const delivery = await withSafety(rx.next(), 'the mailbox callback');
    expect(delivery.headers.authorization).toBe('Bearer caller-secret');

    await t.clearCalls();
    const list = await ok<{ account: { callbacks: Array<Obj & { id: string }> } }>(
      '{ account { callbacks(limit: 5) { id url httpResponseCode startedAt completedAt method attempt data } } }',
    );
    const item = list.account.callbacks.find((c) => c.url === rx.url)!;
    // The list is the vendor's short form: the detail-only fields are null there.
    expect(item).toMatchObject({ httpResponseCode: 200, method: null, attempt: null, data: null });
    expect(item.completedAt).toEqual(expect.any(String));
    expect(await oauthCalls()).toEqual(['GET /callbacks']);

    await t.clearCalls();
    const one = await ok<{ account: { callback: Obj } }>(
      'query ($id: ID!) { account { callback(id: $id) { id url httpResponseCode scope domain active createdAt startedAt completedAt data custom headers { name value } elapsedTime attempt retry field method } } }',
      { id: item.id },
    );
    const cb = one.account.callback;
    expect(cb).toMatchObject({
      id: item.id,
      url: rx.url,
      httpResponseCode: 200,
      scope: 'POST:test.pec.openapi.it/pec',
      domain: 'test.pec.openapi.it',
      active: false,
      custom: { trackingId: 'abc-123' },
      attempt: 1,
      retry: 0,
      field: 'data',
      method: 'JSON',
    });
    expect(cb.createdAt).toEqual(expect.any(String));
    expect(cb.elapsedTime).toEqual(expect.any(Number));
    expect(cb.elapsedTime as number).toBeGreaterThanOrEqual(0);
    // The payload delivered, as the receiver got it, but for the headers of the callback the record echoes.
    const sent = JSON.parse(delivery.body) as { data: { stato: string; callback: { headers: Obj } } };
    expect(sent.data.callback.headers.Authorization).toBe('Bearer caller-secret');
    sent.data.callback.headers.Authorization = '[redacted]';
    expect(cb.data).toEqual(sent);
    expect((cb.data as { data: { stato: string } }).data.stato).toBe('registrazione_annullata');
    // A caller's credential never shows; plain headers do.
    expect(cb.headers).toEqual([
      { name: 'Authorization', value: '[redacted]' },
      { name: 'Content-Type', value: 'application/json' },
    ]);
    expect(JSON.stringify(one)).not.toContain('caller-secret');
    expect(await oauthCalls()).toEqual([`GET /callbacks/${item.id}`]);
    expect((await t.calls('oauth')).every((c) => c.status === 200)).toBe(true);
  });
});

describe('subscriptions and token stats', () => {
  it("a subscription read by id has its domain, price, createdAt and updatedAt; a token's stats list the addresses it was used from", async () => {
    await t.control('oauth/subscribe', { email: EMAIL, scope: 'GET:test.cap.openapi.it/comuni_advance', totalRequests: 1000, pricePerRequest: 0.0066 });
    await t.clearCalls();
    const list = await ok<{ account: { subscriptions: Array<{ id: string; domain: string | null; price: number | null }> } }>('{ account { subscriptions { id domain price } } }');
    // The vendor's list element has neither: null there.
    expect(list.account.subscriptions).toEqual([{ id: expect.any(String), domain: null, price: null }]);
    const id = list.account.subscriptions[0].id;
    const one = await ok<{ account: { subscription: Obj } }>('query ($id: ID!) { account { subscription(id: $id) { id scope domain price createdAt updatedAt } } }', { id });
    expect(one.account.subscription).toEqual({
      id,
      scope: 'GET:test.cap.openapi.it/comuni_advance',
      domain: 'test.cap.openapi.it',
      price: 6.6,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(Number.isNaN(Date.parse(one.account.subscription.createdAt as string))).toBe(false);
    expect(await oauthCalls()).toEqual(['GET /subscriptions', `GET /subscriptions/${id}`]);

    // A token used once through the layer: its stats name the client address the upstream saw.
    const created = await ok<{ createToken: { value: string } }>('mutation { createToken(input: { scopes: ["GET:cap.openapi.it/cerca_comuni"], name: "ip" }) { value } }');
    await ok('{ searchMunicipalities(name: "Campobasso") { name } }', {}, { authorization: `Bearer ${created.createToken.value}` });
    await t.clearCalls();
    const tok = await ok<{ account: { token: { stats: { totalRequests: number; ip: string[] } } } }>(
      'query ($t: String!) { account { token(token: $t) { stats { totalRequests ip } } } }',
      {
        t: created.createToken.value,
      },
    );
    expect(tok.account.token.stats.totalRequests).toBe(1);
    expect(tok.account.token.stats.ip).toHaveLength(1);
    expect(tok.account.token.stats.ip[0]).toMatch(/127\.0\.0\.1|::1/);
    expect(await oauthCalls()).toEqual([`GET /tokens/${created.createToken.value}`]);
  });
});
