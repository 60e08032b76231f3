/**
 * When did an upstream callback reach a gateway, and when did the gateway answer it: the gateway's
 * HTTP server reports each request (`http.server.request.start` on `node:diagnostics_channel`,
 * headers parsed) and its answer (`http.server.response.finish`); only `/callbacks/<area>/…` count.
 *
 * - In the bench's own process (the one-process stack): `watchCallbacks(now, onCallback)`.
 * - In a gateway process of its own (`bench/scale-out.ts`): preloaded with
 *   `node --import tsx --import ./bench/callback-probe.ts services/gateway.ts` and
 *   `BENCH_CALLBACK_PROBE=1`, it prints one line per callback on stdout,
 *   `bench-callback <area> <arrived> <answered>` (wall-clock milliseconds with sub-millisecond
 *   resolution, comparable with the bench's clock), and nothing else: no URL, no signature.
 */
import dc from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';

export interface CallbackTimes {
  area: string;
  arrived: number;
  answered: number;
}

const CALLBACK_PATH = /^\/callbacks\/([a-z0-9-]+)\//;

/** Calls `onCallback` once each callback request has been answered; returns the unsubscriber. */
export function watchCallbacks(now: () => number, onCallback: (t: CallbackTimes) => void): () => void {
  const open = new WeakMap<IncomingMessage, { area: string; arrived: number }>();
  const onStart = (message: unknown): void => {
    const req = (message as { request: IncomingMessage }).request;
    const m = CALLBACK_PATH.exec(req.url ?? '');
    if (m) open.set(req, { area: m[1], arrived: now() });
  };
  const onFinish = (message: unknown): void => {
    const answered = now();
    const req = (message as { request: IncomingMessage }).request;
    const entry = open.get(req);
    if (!entry) return;
    open.delete(req);
    onCallback({ ...entry, answered });
  };
  dc.subscribe('http.server.request.start', onStart);
  dc.subscribe('http.server.response.finish', onFinish);
  return () => {
    dc.unsubscribe('http.server.request.start', onStart);
    dc.unsubscribe('http.server.response.finish', onFinish);
  };
}

/** The line a gateway process prints per callback. */
export const PROBE_LINE = /^bench-callback ([a-z0-9-]+) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?)$/gm;

/** Every probe line in `output`, in order. */
export function parseProbeLines(output: string): CallbackTimes[] {
  return [...output.matchAll(PROBE_LINE)].map((m) => ({ area: m[1], arrived: Number(m[2]), answered: Number(m[3]) }));
}

/**
 * Wall-clock milliseconds with sub-millisecond resolution, without spinning on the process's event
 * loop: `Date.now() - performance.now()` is the true offset less the part of a millisecond that
 * `Date.now()` truncates, so the largest of the samples taken every few tens of milliseconds over
 * the last couple of seconds is within a small fraction of a millisecond of it (and follows the
 * wall clock if it is slewed).
 */
function sampledWallClock(): () => number {
  const samples: number[] = [];
  let offset = Date.now() - performance.now();
  const sample = (): void => {
    samples.push(Date.now() - performance.now());
    if (samples.length > 64) samples.shift();
    offset = Math.max(...samples);
  };
  sample();
  setInterval(sample, 31).unref();
  return () => performance.now() + offset;
}

if (process.env.BENCH_CALLBACK_PROBE === '1') {
  watchCallbacks(sampledWallClock(), (t) => {
    process.stdout.write(`bench-callback ${t.area} ${t.arrived.toFixed(3)} ${t.answered.toFixed(3)}\n`);
  });
}
