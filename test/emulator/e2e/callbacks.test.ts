/**
 * The emulator's one callback reader (`readCallback` in `emulator/callbacks.ts`): the forms a client
 * sends (JSON object, JSON text in a form field, PHP-style form fields; headers as an object or as
 * `[{name, value}]`), the vendor's errors, each area's rules; and the areas reading it over HTTP.
 * Every server started here is stopped after its test (`track`).
 */
import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import { callbackValue, readCallback, type CallbackRead, type CallbackRules } from '../../../emulator/callbacks.ts';
import { fail } from '../../../emulator/core.ts';
import { startEmulator, type RunningEmulator } from '../../../emulator/server.ts';
import { Scheduler } from '../../../emulator/scheduler.ts';
import { startReceiver } from '../../support/receiver.ts';
import { track } from '../../support/servers.ts';

type Json = Record<string, unknown>;

const STANDARD: CallbackRules = { form: 'standard', username: 'me@example.com', retry: 'refuse' };
const LEGACY: CallbackRules = { form: 'legacy', retry: 'clamp', missingUrl: () => fail(428, 704, 'callback url required') };

/** The vendor error number of a refused read (or 'ok'). */
const errorOf = (read: CallbackRead): number | 'ok' => ('error' in read ? ((read.error.json as Json).error as number) : 'ok');
const stored = (read: CallbackRead): Json => {
  if ('error' in read) throw new Error(`refused: ${JSON.stringify(read.error.json)}`);
  if (!read.callback) throw new Error('no callback');
  return read.callback;
};

describe('readCallback', () => {
  it('stores the standard form with the vendor defaults', () => {
    expect(stored(readCallback({ callback: { url: 'https://me.example/hook' } }, STANDARD))).toEqual({
      method: 'JSON',
      url: 'https://me.example/hook',
      user_id: '',
      username: 'me@example.com',
      field: 'data',
      headers: {},
      data: {},
      retry: 0,
      scope: null,
      domain: null,
      custom: null,
    });
  });

  it('stores the legacy form (method POST by default; retry and custom only when given, retry clamped)', () => {
    expect(stored(readCallback({ callback: { url: 'http://me.example/h', headers: { 'x-k': 'v' } } }, LEGACY))).toEqual({
      url: 'http://me.example/h',
      method: 'POST',
      field: 'data',
      headers: { 'x-k': 'v' },
      data: {},
    });
    expect(stored(readCallback({ callback: { url: 'http://me.example/h', method: 'json', retry: 8, custom: { a: 1 } } }, LEGACY))).toMatchObject({
      method: 'JSON',
      retry: 5,
      custom: { a: 1 },
    });
    expect(stored(readCallback({ callback: { url: 'http://me.example/h', retry: 1.5 } }, LEGACY)).retry).toBe(0);
  });

  it('takes headers as an object or as [{name, value}]', () => {
    const list = stored(
      readCallback(
        {
          callback: {
            url: 'https://me.example/',
            headers: [
              { name: 'X-Session', value: 'abc' },
              { name: 'X-Other', value: '' },
            ],
          },
        },
        STANDARD,
      ),
    );
    expect(list.headers).toEqual({ 'X-Session': 'abc', 'X-Other': '' });
    expect(stored(readCallback({ callback: { url: 'https://me.example/', headers: { session_id: 's' } } }, STANDARD)).headers).toEqual({ session_id: 's' });
    expect(stored(readCallback({ callback: { url: 'https://me.example/', headers: null } }, STANDARD)).headers).toEqual({});
  });

  it('reads the form-encoded variants: JSON in a field, PHP-style fields, numbers as text', () => {
    const json = readCallback({ callback: JSON.stringify({ url: 'https://me.example/a', method: 'POST', field: 'payload' }) }, STANDARD);
    expect(stored(json)).toMatchObject({ url: 'https://me.example/a', method: 'POST', field: 'payload' });
    const fields = {
      vat: '12485671007',
      'callback[url]': 'https://me.example/b',
      'callback[method]': 'POST',
      'callback[retry]': '3',
      'callback[headers][session_id]': 's1',
      'callback[custom][ref]': '7',
    };
    expect(stored(readCallback(fields, STANDARD))).toMatchObject({ url: 'https://me.example/b', method: 'POST', retry: 3, headers: { session_id: 's1' }, custom: { ref: '7' } });
    const pairs = {
      'callback[url]': 'https://me.example/c',
      'callback[headers][0][name]': 'X-A',
      'callback[headers][0][value]': 'a',
      'callback[headers][1][name]': 'X-B',
      'callback[headers][1][value]': 'b',
    };
    expect(stored(readCallback(pairs, STANDARD)).headers).toEqual({ 'X-A': 'a', 'X-B': 'b' });
    expect(callbackValue({ other: 1 })).toBeUndefined();
    expect(callbackValue(undefined)).toBeUndefined();
  });

  it('answers no callback with null, or with the missing-url answer when required', () => {
    expect(readCallback({}, STANDARD)).toEqual({ callback: null });
    expect(readCallback({ callback: null }, STANDARD)).toEqual({ callback: null });
    expect(readCallback({}, { ...STANDARD, required: true })).toEqual({ error: fail(428, 704, "url not set in 'callback', required") });
    expect(readCallback({ callback: {} }, LEGACY)).toEqual({ error: fail(428, 704, 'callback url required') });
    expect(readCallback({ callback: { url: '  ' } }, { ...LEGACY, missingUrl: () => fail(428, 411, 'callback url required') })).toEqual({
      error: fail(428, 411, 'callback url required'),
    });
    expect(errorOf(readCallback({ callback: 'not json' }, STANDARD))).toBe(704);
  });

  it("refuses a bad callback with the vendor's errors", () => {
    const read = (cb: Json, rules = STANDARD): number | 'ok' => errorOf(readCallback({ callback: { url: 'https://me.example/', ...cb } }, rules));
    expect(read({ url: 'ftp://x' })).toBe(706);
    expect(read({ url: 42 })).toBe(706);
    expect(read({ url: 'http://' })).toBe(704);
    expect(read({ headers: 'x' })).toBe(708);
    expect(read({ headers: [{ value: 'no name' }] })).toBe(708);
    expect(read({ headers: { 'bad name': 'v' } })).toBe(708);
    expect(read({ headers: { 'x-a': 'a\r\nInjected: 1' } })).toBe(708);
    expect(read({ headers: { ['k'.repeat(257)]: 'v' } })).toBe(709);
    expect(read({ headers: { 'x-n': 5 } })).toBe(710);
    expect(read({ headers: [{ name: 'x-n', value: 5 }] })).toBe(710);
    expect(read({ headers: { 'x-big': 'v'.repeat(2100) } })).toBe(711);
    expect(read({ custom: { big: 'x'.repeat(600) } })).toBe(730);
    expect(read({ retry: 6 })).toBe(740);
    expect(read({ retry: -1 })).toBe(740);
    expect(read({ retry: 'two' })).toBe(740);
    expect(read({ retry: 5 })).toBe('ok');
    expect(read({ retry: 8 }, LEGACY)).toBe('ok');
    expect(read({ url: 'ftp://x' }, LEGACY)).toBe(706);
  });
});

// ---------------------------------------------------------------- over HTTP

const started = track();

async function post(emu: RunningEmulator, path: string, body: Json | URLSearchParams): Promise<{ status: number; json: Json }> {
  const form = body instanceof URLSearchParams;
  const res = await request(`${emu.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${emu.tokens.defaultToken}`, 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json' },
    body: form ? body.toString() : JSON.stringify(body),
  });
  return { status: res.statusCode, json: (await res.body.json()) as Json };
}

describe('the areas read callbacks with it', () => {
  it('company: a form-encoded request with PHP-style callback fields and [{name, value}] headers is delivered as asked', async () => {
    const hook = await startReceiver();
    started(hook);
    const emu = await startEmulator({ scheduler: new Scheduler({ mode: 'manual' }) });
    started(emu);
    const form = new URLSearchParams({
      'callback[url]': `${hook.origin}/company`,
      'callback[method]': 'POST',
      'callback[field]': 'payload',
      'callback[headers][0][name]': 'X-Session',
      'callback[headers][0][value]': 'abc',
    });
    const created = await post(emu, '/company/IT-full/12485671007', form);
    expect(created.status).toBe(200);
    expect(created.json.data).toMatchObject({ state: 'PENDING' });
    expect(hook.deliveries).toHaveLength(0);
    await emu.scheduler.advance(100); // the company's asyncMs, on the (manual) emulator clock
    await hook.arrived(1);
    expect(hook.deliveries[0]).toMatchObject({ path: '/company', headers: { 'x-session': 'abc', 'content-type': 'application/x-www-form-urlencoded' } });
    expect(JSON.parse(new URLSearchParams(hook.deliveries[0].body).get('payload') ?? '{}')).toHaveProperty('data.companyDetails.vatCode', '12485671007');
    // The company's rule: more than 5 retries is refused.
    expect((await post(emu, '/company/IT-full/12485671007', { callback: { url: hook.url, retry: 8 } })).json).toMatchObject({ error: 740 });
    expect(
      (await post(emu, '/company/monitor', { code: '12485671007', dataset: 'IT-name', callback: { url: hook.url, headers: [{ name: 'X-A', value: 'a' }] } })).json.data,
    ).toMatchObject({
      callback: { url: hook.url, headers: { 'X-A': 'a' }, username: 'emulator@example.com' },
    });
  });

  it("risk: headers as a list are stored as an object, the layer's 8 retries are lowered to 5, and a bad url is refused", async () => {
    const emu = await startEmulator();
    started(emu);
    const neg = await post(emu, '/risk/IT-negativita', { cf_piva: '12485671007', callback: { url: 'https://me.example/neg', headers: [{ name: 'X-A', value: 'a' }], retry: 8 } });
    expect((neg.json.data as Json).callback).toMatchObject({ method: 'JSON', headers: { 'X-A': 'a' }, retry: 5, username: '' });
    expect((await post(emu, '/risk/IT-negativita', { cf_piva: '12485671007', callback: { method: 'JSON' } })).json).toMatchObject({ error: 411 });
    expect((await post(emu, '/risk/IT-creditscore-top-monitor', { code: '12485671007', callback: {} })).json).toMatchObject({ error: 704, message: 'callback url required' });
    expect((await post(emu, '/risk/IT-creditscore-top-monitor', { code: '12485671007', callback: { url: 'javascript:alert(1)' } })).json).toMatchObject({ error: 706 });
    const form = new URLSearchParams({ code: '12485671007', callback: JSON.stringify({ url: 'https://me.example/mon', headers: { 'x-k': 'v' } }) });
    expect(((await post(emu, '/risk/IT-creditscore-top-monitor', form)).json.data as Json).callback).toMatchObject({ url: 'https://me.example/mon', headers: { 'x-k': 'v' } });
  });
});
