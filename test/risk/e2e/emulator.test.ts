/**
 * The emulator server features the risk tests rely on: a fault that lets the handler run and
 * delays only its answer ("created upstream, answer lost"), and a call log that never reveals a
 * short token whole.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startEmulator, type CallRecord, type RunningEmulator } from '../../../emulator/server.ts';
import { CF } from '../../support/risk.ts';
import { waitFor } from '../../support/wait.ts';

let emu: RunningEmulator;

beforeAll(async () => {
  emu = await startEmulator();
});

afterAll(async () => {
  await emu?.close();
});

async function control(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<unknown> {
  const res = await request(`${emu.url}/_emulator/${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return res.body.json();
}

async function call(method: 'GET' | 'POST', path: string, token: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const res = await request(`${emu.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.statusCode, body: await res.body.json() };
}

describe('delayAfterMs fault', () => {
  it('runs the handler (the request exists and is charged) and answers later', async () => {
    const token = emu.tokens.create({ credit: 100 }).token;
    const fault = (await control('POST', 'faults', { area: 'risk', pathPrefix: '/IT-report-persona', delayAfterMs: 3000, count: 1 })) as { delayAfterMs: number };
    expect(fault.delayAfterMs).toBe(3000);
    const started = Date.now();
    let answered = false;
    const pending = call('POST', '/risk/IT-report-persona', token, { name: 'Mario', surname: 'Rossi', taxCode: CF }).finally(() => (answered = true));
    pending.catch(() => undefined);
    // Before the answer: the request is already listed, and the wallet charged.
    const listed = await waitFor(
      async () => {
        const data = ((await call('GET', '/risk/IT-report-persona', token)).body as { data: unknown[] }).data;
        return data.length > 0 && data;
      },
      'the request listed before its answer',
      { deadline: 2_000, every: 5 },
    );
    expect(answered).toBe(false);
    expect(listed).toHaveLength(1);
    expect(emu.tokens.get(token)!.credit).toBeLessThan(100);
    const answer = await pending;
    expect(Date.now() - started).toBeGreaterThanOrEqual(2950);
    expect(answer.status).toBe(200);
    // Used up: the next call answers at once (well before another 3 s).
    const t0 = Date.now();
    await call('GET', '/risk/IT-report-persona', token);
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('is refused without a status, hangMs or delayAfterMs', async () => {
    const res = await request(`${emu.url}/_emulator/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ area: 'risk' }) });
    expect(res.statusCode).toBe(400);
    await res.body.dump();
  });
});

describe('call log', () => {
  it('keeps only "…" for a short token, and "…" plus the last 4 characters of a long one', async () => {
    const short = emu.tokens.create({ token: 'abc123' }).token;
    const long = emu.tokens.create({ token: 'a-long-token-value-9876' }).token;
    await control('DELETE', 'calls');
    await call('GET', `/risk/IT-verifica_cf/${CF}`, short);
    await call('GET', `/risk/IT-verifica_cf/${CF}`, long);
    const calls = (await control('GET', 'calls?area=risk')) as CallRecord[];
    expect(calls.map((c) => c.token)).toEqual(['…', '…9876']);
    expect(JSON.stringify(calls)).not.toContain('abc123');
  });
});
