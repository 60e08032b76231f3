/**
 * The emulator's job scheduler (`emulator/scheduler.ts`): ordering, cancel, the manual clock and its
 * advance, real mode on an injected timer source and on Node's timers; and the clock control API
 * (`/_emulator/clock`) driving the risk and company areas' work. Every server started here is
 * stopped after its test (`track`).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import { Scheduler, type TimerSource } from '../../../emulator/scheduler.ts';
import { startEmulator, type RunningEmulator } from '../../../emulator/server.ts';
import { createCompanyModule } from '../../../emulator/company/index.ts';
import { createRiskModule } from '../../../emulator/risk/index.ts';
import { nextTurn, waitFor } from '../../support/wait.ts';
import { track } from '../../support/servers.ts';

type Json = Record<string, unknown>;

const T0 = Date.UTC(2030, 0, 1);

/** A hand-driven time source and timer source. */
function fakeTime(start = T0): { now: () => number; timers: TimerSource; armed: () => Array<{ at: number }>; tick: (ms: number) => void } {
  let now = start;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  return {
    now: () => now,
    timers: {
      setTimeout(fn, ms) {
        const id = ++seq;
        timers.set(id, { at: now + ms, fn });
        return id;
      },
      clearTimeout(handle) {
        timers.delete(handle as number);
      },
    },
    armed: () => [...timers.values()].map(({ at }) => ({ at })),
    /** Moves the source's time, firing the timers that fall due. */
    tick(ms) {
      const until = now + ms;
      for (;;) {
        const due = [...timers.entries()].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        timers.delete(due[0]);
        now = Math.max(now, due[1].at);
        due[1].fn();
      }
      now = until;
    },
  };
}

describe('scheduler', () => {
  it('runs jobs in order of due time, ties in the order scheduled, each seeing its own time', async () => {
    const s = new Scheduler({ mode: 'manual', now: () => T0 });
    const seen: Array<[string, number]> = [];
    const job = (name: string) => () => void seen.push([name, s.now()]);
    s.schedule(T0 + 300, job('c'));
    s.schedule(T0 + 100, job('a'));
    s.schedule(T0 + 200, job('b1'));
    s.schedule(T0 + 200, job('b2'));
    s.after(1000, job('late'));
    expect(s.pending().map((p) => p.at - T0)).toEqual([100, 200, 200, 300, 1000]);
    expect(await s.advance(300)).toBe(4);
    expect(seen).toEqual([
      ['a', T0 + 100],
      ['b1', T0 + 200],
      ['b2', T0 + 200],
      ['c', T0 + 300],
    ]);
    expect(s.now()).toBe(T0 + 300);
    expect(s.pending()).toHaveLength(1);
  });

  it('runs a job that another schedules within the advanced span, and awaits what jobs return', async () => {
    const s = new Scheduler({ mode: 'manual', now: () => T0 });
    const seen: number[] = [];
    let settled = false;
    const tick = (): void => {
      seen.push(s.now() - T0);
      if (seen.length < 3) s.after(100, tick);
    };
    s.after(100, tick);
    s.after(50, () => nextTurn().then(() => (settled = true)));
    expect(await s.advance(1000)).toBe(4);
    expect(seen).toEqual([100, 200, 300]);
    expect(settled).toBe(true);
    expect(s.now()).toBe(T0 + 1000);
  });

  it('cancels jobs by id', async () => {
    const s = new Scheduler({ mode: 'manual', now: () => T0 });
    const ran: string[] = [];
    const a = s.after(10, () => void ran.push('a'));
    const b = s.after(20, () => void ran.push('b'));
    expect(a).not.toBe(b);
    expect(s.has(a)).toBe(true);
    expect(s.cancel(a)).toBe(true);
    expect(s.cancel(a)).toBe(false);
    expect(s.has(a)).toBe(false);
    expect(s.pending().map((p) => p.id)).toEqual([b]);
    await s.advance(100);
    expect(ran).toEqual(['b']);
    expect(s.cancel(b)).toBe(false);
    // Many cancellations (a risk timing change re-arms everything) leave nothing behind.
    const ids = Array.from({ length: 500 }, (_, i) => s.after(i + 1, () => void ran.push('x')));
    for (const id of ids) s.cancel(id);
    expect(s.pending()).toEqual([]);
    await s.advance(10_000);
    expect(ran).toEqual(['b']);
  });

  it('manual mode: the clock stands still and nothing fires until time is moved', async () => {
    const time = fakeTime();
    const s = new Scheduler({ mode: 'manual', now: time.now, timers: time.timers });
    const frozen = s.now();
    let ran = 0;
    s.after(5, () => void ran++);
    s.schedule(frozen - 1000, () => void ran++); // already due: waits for runDue / advance too
    expect(time.armed()).toEqual([]); // no timer: the source's time passing fires nothing
    time.tick(40);
    s.catchUp();
    expect(ran).toBe(0);
    expect(s.now()).toBe(frozen);
    expect(await s.runDue()).toBe(1);
    expect(ran).toBe(1);
    expect(await s.advance(4)).toBe(0);
    expect(await s.advance(1)).toBe(1);
    expect(ran).toBe(2);
    expect(s.now()).toBe(frozen + 5);
    await expect(s.advance(-1)).rejects.toThrow(RangeError);
  });

  it('real mode: one timer for the earliest job, moved by advance, cleared in manual mode', async () => {
    const time = fakeTime();
    const s = new Scheduler({ now: time.now, timers: time.timers });
    const ran: string[] = [];
    s.after(1000, () => void ran.push('a'));
    s.after(500, () => void ran.push('b'));
    expect(time.armed()).toEqual([{ at: T0 + 500 }]);
    time.tick(499);
    expect(ran).toEqual([]);
    time.tick(1);
    expect(ran).toEqual(['b']);
    expect(time.armed()).toEqual([{ at: T0 + 1000 }]);
    // advance moves the emulated time ahead of the source: the timer follows.
    await s.advance(200);
    expect(s.now()).toBe(T0 + 700);
    expect(time.armed()).toEqual([{ at: T0 + 800 }]);
    // manual: no timer; time stands at 700 + whatever the source moved before the switch.
    s.setMode('manual');
    expect(time.armed()).toEqual([]);
    time.tick(10_000);
    expect(ran).toEqual(['b']);
    expect(s.now()).toBe(T0 + 700);
    // real again: time flows on from where it stood.
    s.setMode('real');
    expect(s.now()).toBe(T0 + 700);
    expect(time.armed()).toEqual([{ at: T0 + 10_500 + 300 }]);
    time.tick(300);
    expect(ran).toEqual(['b', 'a']);
    expect(time.armed()).toEqual([]);
  });

  it('real mode: a wait longer than a Node timer can hold re-arms on the way', () => {
    const time = fakeTime();
    const s = new Scheduler({ now: time.now, timers: time.timers });
    let ran = false;
    const year = 365 * 24 * 3600 * 1000;
    s.after(year, () => void (ran = true));
    expect(time.armed()).toEqual([{ at: T0 + 2_147_483_647 }]);
    time.tick(2_147_483_647);
    expect(ran).toBe(false);
    time.tick(year - 2_147_483_647);
    expect(ran).toBe(true);
  });

  it('real mode on Node timers: jobs fire by themselves; catchUp runs what a late timer has not', async () => {
    const s = new Scheduler();
    let fired = 0;
    s.after(20, () => void fired++);
    await waitFor(() => fired === 1, 'the job to fire on a Node timer', { deadline: 5_000 });
    expect(fired).toBe(1);
    s.schedule(s.now() - 1, () => void fired++);
    s.catchUp();
    expect(fired).toBe(2);
    s.after(10, () => void fired++);
    s.close();
    expect(s.pending()).toEqual([]);
    // Not synchronisation: real time passes the closed scheduler's job, which must not fire (Node timers are the subject here).
    await new Promise((r) => setTimeout(r, 40));
    expect(fired).toBe(2);
  });

  it('reports a failing job and runs the others', async () => {
    const errors: string[] = [];
    const s = new Scheduler({ mode: 'manual', now: () => T0, onError: (_err, label) => void errors.push(label) });
    const ran: string[] = [];
    s.after(
      1,
      () => {
        throw new Error('boom');
      },
      'throws',
    );
    s.after(2, () => Promise.reject(new Error('late boom')), 'rejects');
    s.after(3, () => void ran.push('ok'));
    expect(await s.advance(3)).toBe(3);
    expect(ran).toEqual(['ok']);
    expect(errors).toEqual(['throws', 'rejects']);
  });
});

// ---------------------------------------------------------------- the clock control API

/** A callback receiver on 127.0.0.1 that records JSON bodies. */
async function receiver(): Promise<{ url: string; bodies: Json[]; close: () => Promise<void> }> {
  const bodies: Json[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Json);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    bodies,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const started = track();

async function emulator(opts: Parameters<typeof startEmulator>[0] = {}): Promise<RunningEmulator> {
  return started(await startEmulator(opts));
}

/** An emulator whose scheduler reads a hand-driven time source: `time.tick(ms)` is real time passing. */
async function emulatorOnFakeTime(modules?: (scheduler: Scheduler) => Parameters<typeof startEmulator>[0]): Promise<{ emu: RunningEmulator; time: ReturnType<typeof fakeTime> }> {
  const time = fakeTime(Date.now());
  const scheduler = new Scheduler({ now: time.now, timers: time.timers });
  return { emu: await emulator({ scheduler, ...modules?.(scheduler) }), time };
}

async function call(emu: RunningEmulator, method: string, path: string, body?: unknown): Promise<{ status: number; json: Json; headers: Record<string, unknown> }> {
  const res = await request(`${emu.url}${path}`, {
    method: method as 'GET',
    headers: { authorization: `Bearer ${emu.tokens.defaultToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: (text ? JSON.parse(text) : {}) as Json, headers: res.headers };
}

const clock = async (emu: RunningEmulator, body?: Json): Promise<Json> => (await call(emu, body ? 'POST' : 'GET', '/_emulator/clock', body)).json;

describe('clock control API', () => {
  it('manual clock: risk work waits for the clock, completes on advance with its callback, and record times follow the clock', async () => {
    const hook = started(await receiver());
    const { emu, time } = await emulatorOnFakeTime();
    const set = await clock(emu, { mode: 'manual' });
    expect(set).toMatchObject({ mode: 'manual', pending: 0, ran: 0 });
    await call(emu, 'POST', '/_emulator/risk/timing', { completeAfterMs: 100 });
    const created = (await call(emu, 'POST', '/risk/IT-negativita', { cf_piva: '12485671007', callback: { url: hook.url } })).json.data as Json;
    const id = String(created.id);
    expect(created.status).toBe('PENDING');
    const state = await clock(emu);
    expect(state).toMatchObject({ mode: 'manual', pending: 1 });
    expect(state.jobs).toEqual([{ id: expect.any(Number), at: new Date(Number(state.nowMs) + 100).toISOString(), label: `risk complete ${id}` }]);
    time.tick(250); // longer than completeAfterMs: nothing moves by itself
    expect(((await call(emu, 'GET', `/risk/IT-negativita/${id}`)).json.data as Json).status).toBe('PENDING');

    const day = 24 * 3600 * 1000;
    const moved = await clock(emu, { advanceMs: day });
    expect(moved).toMatchObject({ mode: 'manual', pending: 0, ran: 1 });
    expect(hook.bodies).toHaveLength(1); // delivered before the answer
    const done = (await call(emu, 'GET', `/risk/IT-negativita/${id}`)).json.data as Json;
    expect(done.status).toBe('COMPLETED');
    // Completed 100 ms after creation on the emulator's clock, not a day later.
    expect(Date.parse(`${String(done.date_completion).replace(' ', 'T')}Z`) - Number(created.timestamp) * 1000).toBeLessThan(3000);
    // A request created now carries the moved clock's time.
    const later = (await call(emu, 'POST', '/risk/IT-negativita', { cf_piva: '12485671007' })).json.data as Json;
    expect(Number(later.timestamp) - Number(created.timestamp)).toBeGreaterThanOrEqual(day / 1000);
    expect(Number(later.timestamp)).toBe(Math.floor(Number(moved.nowMs) / 1000));
  });

  it('manual clock: slow company datasets stay PENDING until the clock reaches them; company/advance moves the same clock', async () => {
    const { emu, time } = await emulatorOnFakeTime();
    await clock(emu, { mode: 'manual' });
    // The GET answers 302 at once (no wait): the request's own time is what this test moves.
    await call(emu, 'POST', '/_emulator/company/slow', { ms: 300, waitMs: 0 });
    const first = await call(emu, 'GET', '/company/IT-aml/12485671007');
    expect(first.status).toBe(302);
    const path = String(first.headers.location).slice(emu.url.length);
    time.tick(400);
    expect((await call(emu, 'GET', path)).json.data).toMatchObject({ state: 'PENDING' });
    expect(await clock(emu, { advanceMs: 299 })).toMatchObject({ ran: 0, pending: 1 });
    expect((await call(emu, 'GET', path)).json.data).toMatchObject({ state: 'PENDING' });
    expect(await clock(emu, { advanceMs: 1 })).toMatchObject({ ran: 1, pending: 0 });
    expect((await call(emu, 'GET', path)).json.data).not.toMatchObject({ state: 'PENDING' });

    const before = Number((await clock(emu)).nowMs);
    const second = await call(emu, 'GET', '/company/IT-aml/12485671007');
    const path2 = String(second.headers.location).slice(emu.url.length);
    expect((await call(emu, 'POST', '/_emulator/company/advance', { ms: 300 })).json).toEqual({ pending: 0 });
    expect((await call(emu, 'GET', path2)).json.data).not.toMatchObject({ state: 'PENDING' });
    expect(Number((await clock(emu)).nowMs)).toBe(before + 300);
  });

  it('real mode again: time runs on from where it stood and due work fires by itself', async () => {
    const { emu, time } = await emulatorOnFakeTime((scheduler) => ({ modules: [createRiskModule({ completeAfterMs: 50, scheduler })] }));
    await clock(emu, { mode: 'manual' });
    const id = String(((await call(emu, 'POST', '/risk/IT-negativita', { cf_piva: '12485671007' })).json.data as Json).id);
    time.tick(100);
    expect(((await call(emu, 'GET', `/risk/IT-negativita/${id}`)).json.data as Json).status).toBe('PENDING');
    const stood = Number((await clock(emu)).nowMs);
    const real = await clock(emu, { mode: 'real' });
    expect(real.mode).toBe('real');
    expect(Number(real.nowMs)).toBeGreaterThanOrEqual(stood);
    expect(Number(real.nowMs) - stood).toBeLessThan(1000);
    time.tick(150);
    expect(((await call(emu, 'GET', `/risk/IT-negativita/${id}`)).json.data as Json).status).toBe('COMPLETED');
  });

  it('keeps the area hooks: risk/advance completes whatever the clock, risk/timing re-arms on the clock', async () => {
    const emu = await emulator();
    await clock(emu, { mode: 'manual' });
    const id = String(((await call(emu, 'POST', '/risk/IT-negativita', { cf_piva: '12485671007' })).json.data as Json).id);
    expect((await call(emu, 'POST', '/_emulator/risk/timing', { completeAfterMs: 10_000 })).json).toEqual({ completeAfterMs: 10_000, delegationAfterMs: 0 });
    expect((await clock(emu)).jobs).toEqual([expect.objectContaining({ label: `risk complete ${id}` })]);
    expect(await clock(emu, { advanceMs: 9_999 })).toMatchObject({ ran: 0 });
    expect((await call(emu, 'POST', '/_emulator/risk/advance', { id })).json).toEqual({ advanced: [id] });
    expect(await clock(emu)).toMatchObject({ pending: 0 });
    expect((await call(emu, 'POST', '/_emulator/risk/timing', { completeAfterMs: 0 })).json).toEqual({ completeAfterMs: 0, delegationAfterMs: 0 });
    const id2 = String(((await call(emu, 'POST', '/risk/IT-negativita', { cf_piva: '12485671007' })).json.data as Json).id);
    expect(await clock(emu, { advanceMs: 3_600_000 })).toMatchObject({ ran: 0 });
    expect((await call(emu, 'POST', '/_emulator/risk/pending', {})).json).toEqual({ pending: [id2], completeAfterMs: 0 });
  });

  it('refuses a bad mode or advance, and modules on another scheduler', async () => {
    const emu = await emulator();
    expect((await call(emu, 'POST', '/_emulator/clock', { mode: 'fast' })).status).toBe(400);
    expect((await call(emu, 'POST', '/_emulator/clock', { advanceMs: -5 })).status).toBe(400);
    expect((await call(emu, 'POST', '/_emulator/clock', { advanceMs: '5' })).status).toBe(400);
    expect((await clock(emu)).mode).toBe('real');
    await expect(startEmulator({ modules: [createCompanyModule(), createRiskModule()] })).rejects.toThrow(/another scheduler/);
    const shared = new Scheduler({ mode: 'manual' });
    const both = await emulator({ scheduler: shared, modules: [createCompanyModule({ scheduler: shared }), createRiskModule({ scheduler: shared })] });
    expect(both.scheduler).toBe(shared);
    expect((await clock(both)).mode).toBe('manual');
  });
});
