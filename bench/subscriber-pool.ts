/**
 * The subscribers of the fan-out benches (`bench/subscriptions.ts`, `bench/scale-out.ts`): N
 * graphql-ws clients, one connection each (a user app each), spread over one or more gateway URLs,
 * all subscribed to `riskRequestUpdated` of one request per round; each client's arrival of the
 * initial and the final state is timed.
 *
 * `WorkerPool` runs the clients in a worker thread with its own event loop, so that their decoding
 * does not compete with the layer when it runs in the bench's own process (and 1,000 sockets do not
 * slow down the bench's main thread); `LocalPool` runs them on the calling thread.
 */
import { Worker, isMainThread, parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';

const WORKER_ROLE = 'bench-subscribers';
/** How long subscribing every client (each with its initial state) may take. */
const SUBSCRIBE_TIMEOUT_MS = 30_000;
/** Connections opened at once when building a pool. */
const CONNECT_BATCH = 100;

const UPDATED = `subscription($id: ID!) { riskRequestUpdated(id: $id) { id state done } }`;
const UPDATED_OF_FAMILY = `subscription($id: ID!, $family: RiskFamily!) { riskRequestUpdated(id: $id, family: $family) { id state done } }`;

/**
 * Wall-clock milliseconds with sub-millisecond resolution. `performance.timeOrigin` is off by up to
 * a couple of milliseconds and differs between threads, so each thread pins the monotonic clock to
 * `Date.now()` at the instant it ticks (`calibrate`, before every round): times taken in the worker
 * and on the main thread are then comparable within a fraction of a millisecond.
 */
let clockOffset = Date.now() - performance.now();
export const now = (): number => performance.now() + clockOffset;
export function calibrate(): void {
  const start = Date.now();
  let tick = start;
  for (let spins = 0; tick === start && spins < 10_000_000; spins++) tick = Date.now();
  clockOffset = tick - performance.now();
}

export const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};
export const ms = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(1)} ms` : 'n/a');

export const errorText = (err: unknown): string => {
  if (err instanceof Error) return err.message;
  if (Array.isArray(err)) return err.map(errorText).join('; ');
  if (typeof err === 'object' && err !== null && 'code' in err && 'reason' in err) return `socket closed ${String(err.code)} ${String(err.reason)}`;
  return JSON.stringify(err);
};

// ---------------------------------------------------------------------------------------------
// The subscribers

/** What one round saw on the client side. */
export interface RoundResult {
  /** Wall-clock time each subscriber received its initial state (NaN: never). */
  initial: number[];
  /** Wall-clock time each subscriber received the final (COMPLETE) state (NaN: never). */
  delivered: number[];
  /** Streams the server ended after the final state. */
  ended: number;
  /** Events that were neither the initial nor the final state (should be none). */
  unexpected: number;
  errors: string[];
}

/** N graphql-ws clients, one connection each; one round's subscriptions at a time. */
export interface SubscriberPool {
  /** Opens `n` connections (connection_init acknowledged) and keeps them for the rounds. */
  open(n: number): Promise<void>;
  /**
   * Subscribes every client to the request (with its family when given: `riskRequestUpdated(id:,
   * family:)`); resolves when each has its initial state.
   */
  subscribe(id: string, family?: string): Promise<void>;
  /** Waits until every subscriber got the final state and its stream ended (or the time limit); ends the round. */
  collect(timeoutMs: number): Promise<RoundResult>;
  /** Disposes every client. */
  close(): Promise<void>;
}

function whenConnected(client: Client): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const offs: Array<() => void> = [];
    const done = (err?: unknown): void => {
      for (const off of offs) off();
      if (err === undefined) resolve();
      else reject(new Error(`graphql-ws connection failed: ${errorText(err)}`));
    };
    offs.push(client.on('connected', () => done()));
    offs.push(client.on('error', (err) => done(err ?? 'error')));
    offs.push(client.on('closed', (ev) => done(ev ?? 'closed')));
  });
}

/** The clients on the calling thread; client i connects to `urls[i % urls.length]`. */
export class LocalPool implements SubscriberPool {
  private clients: Client[] = [];
  private round: { result: RoundResult; unsubscribe: Array<() => void>; initialCount: number; settled: number } | null = null;
  private waiters: Array<{ ready: () => boolean; resolve: () => void }> = [];

  constructor(
    private readonly urls: readonly string[],
    private readonly token: string,
  ) {
    if (urls.length === 0) throw new Error('a subscriber pool needs at least one gateway URL');
  }

  async open(n: number): Promise<void> {
    while (this.clients.length < n) {
      const first = this.clients.length;
      const batch = Array.from({ length: Math.min(CONNECT_BATCH, n - first) }, (_, k) =>
        createClient({
          url: this.urls[(first + k) % this.urls.length],
          webSocketImpl: WebSocket,
          connectionParams: { authorization: `Bearer ${this.token}` },
          lazy: false,
          retryAttempts: 0,
          onNonLazyError: () => undefined,
        }),
      );
      this.clients.push(...batch);
      await Promise.all(batch.map(whenConnected));
    }
  }

  async subscribe(id: string, family?: string): Promise<void> {
    if (this.round) throw new Error('a round is already running');
    calibrate();
    const n = this.clients.length;
    const result: RoundResult = { initial: new Array<number>(n).fill(Number.NaN), delivered: new Array<number>(n).fill(Number.NaN), ended: 0, unexpected: 0, errors: [] };
    // Counters, so that the check after every event stays O(1) (timestamps come first anyway).
    const round = { result, unsubscribe: [] as Array<() => void>, initialCount: 0, settled: 0 };
    this.round = round;
    this.clients.forEach((client, i) => {
      round.unsubscribe.push(
        client.subscribe<{ riskRequestUpdated: { id: string; state: string; done: boolean } }>(
          family === undefined ? { query: UPDATED, variables: { id } } : { query: UPDATED_OF_FAMILY, variables: { id, family } },
          {
            next: (r: FormattedExecutionResult<{ riskRequestUpdated: { id: string; state: string; done: boolean } }>) => {
              const t = now();
              const ev = r.data?.riskRequestUpdated;
              if (r.errors?.length || !ev) result.errors.push(errorText(r.errors ?? 'event without data'));
              else if (ev.done) result.delivered[i] = t;
              else if (Number.isNaN(result.initial[i]) && ev.state === 'PROCESSING') {
                result.initial[i] = t;
                round.initialCount++;
              } else result.unexpected++;
              this.wake();
            },
            error: (err: unknown) => {
              result.errors.push(errorText(err));
              round.settled++;
              this.wake();
            },
            complete: () => {
              result.ended++;
              round.settled++;
              this.wake();
            },
          },
        ),
      );
    });
    const ok = await this.waitFor(() => result.errors.length > 0 || round.initialCount === n, SUBSCRIBE_TIMEOUT_MS);
    if (!ok || result.errors.length > 0) {
      const missing = result.initial.filter((t) => Number.isNaN(t)).length;
      this.endRound();
      throw new Error(`subscribing ${n} clients: ${missing} without an initial state; errors: ${result.errors.slice(0, 3).join(' | ') || 'none'}`);
    }
  }

  async collect(timeoutMs: number): Promise<RoundResult> {
    const round = this.round;
    if (!round) throw new Error('no round running');
    // Every stream ends, by `complete` after the final state or by an error; a subscriber whose
    // stream ended without the final state, or that has neither by the time limit, lost it.
    await this.waitFor(() => round.settled >= this.clients.length, timeoutMs);
    this.endRound();
    return round.result;
  }

  async close(): Promise<void> {
    this.endRound();
    const clients = this.clients;
    this.clients = [];
    await Promise.allSettled(clients.map(async (c) => c.dispose()));
  }

  private endRound(): void {
    for (const off of this.round?.unsubscribe ?? []) off();
    this.round = null;
    for (const w of this.waiters.splice(0)) w.resolve();
  }

  private waitFor(ready: () => boolean, timeoutMs: number): Promise<boolean> {
    if (ready()) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const waiter = {
        ready,
        resolve: () => {
          clearTimeout(timer);
          resolve(ready());
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(ready());
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  private wake(): void {
    const due = this.waiters.filter((w) => w.ready());
    if (due.length === 0) return;
    this.waiters = this.waiters.filter((w) => !due.includes(w));
    for (const w of due) w.resolve();
  }
}

// Worker protocol: the main thread calls pool methods by message; the worker answers each call.
type Call =
  | { seq: number; op: 'open'; n: number }
  | { seq: number; op: 'subscribe'; id: string; family?: string }
  | { seq: number; op: 'collect'; timeoutMs: number }
  | { seq: number; op: 'close' };
type Answer = { seq: number; ok: true; value: RoundResult | null } | { seq: number; ok: false; error: string };
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
interface WorkerInit {
  role: typeof WORKER_ROLE;
  urls: string[];
  token: string;
}

const isWorkerInit = (v: unknown): v is WorkerInit =>
  typeof v === 'object' &&
  v !== null &&
  (v as { role?: unknown }).role === WORKER_ROLE &&
  Array.isArray((v as { urls?: unknown }).urls) &&
  typeof (v as { token?: unknown }).token === 'string';

function serveInWorker(port: MessagePort, init: WorkerInit): void {
  const pool = new LocalPool(init.urls, init.token);
  port.on('message', (call: Call) => {
    const run = async (): Promise<RoundResult | null> => {
      switch (call.op) {
        case 'open':
          await pool.open(call.n);
          return null;
        case 'subscribe':
          await pool.subscribe(call.id, call.family);
          return null;
        case 'collect':
          return pool.collect(call.timeoutMs);
        case 'close':
          await pool.close();
          return null;
      }
    };
    run().then(
      (value) => port.postMessage({ seq: call.seq, ok: true, value } satisfies Answer),
      (err: unknown) => port.postMessage({ seq: call.seq, ok: false, error: errorText(err) } satisfies Answer),
    );
  });
}

/** The pool in a worker thread (loaded through tsx, like the bench itself). */
export class WorkerPool implements SubscriberPool {
  private readonly worker: Worker;
  private seq = 0;
  private dead: Error | null = null;
  private readonly pending = new Map<number, { resolve: (v: RoundResult | null) => void; reject: (e: Error) => void }>();

  constructor(urls: readonly string[], token: string) {
    let tsx = 'tsx/esm/api';
    try {
      tsx = import.meta.resolve('tsx/esm/api');
    } catch {
      // resolved from the working directory instead
    }
    const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(import.meta.url)}); });`;
    this.worker = new Worker(boot, { eval: true, workerData: { role: WORKER_ROLE, urls: [...urls], token } satisfies WorkerInit });
    this.worker.on('message', (a: Answer) => {
      const p = this.pending.get(a.seq);
      if (!p) return;
      this.pending.delete(a.seq);
      if (a.ok) p.resolve(a.value);
      else p.reject(new Error(a.error));
    });
    const failAll = (err: Error): void => {
      this.dead ??= err;
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    this.worker.on('error', (err) => failAll(err));
    this.worker.on('exit', (code) => failAll(new Error(`subscriber worker exited (${code})`)));
  }

  private call(msg: DistributiveOmit<Call, 'seq'>): Promise<RoundResult | null> {
    const seq = ++this.seq;
    return new Promise<RoundResult | null>((resolve, reject) => {
      if (this.dead) return reject(this.dead);
      this.pending.set(seq, { resolve, reject });
      this.worker.postMessage({ ...msg, seq });
    });
  }

  async open(n: number): Promise<void> {
    await this.call({ op: 'open', n });
  }
  async subscribe(id: string, family?: string): Promise<void> {
    await this.call(family === undefined ? { op: 'subscribe', id } : { op: 'subscribe', id, family });
  }
  async collect(timeoutMs: number): Promise<RoundResult> {
    const r = await this.call({ op: 'collect', timeoutMs });
    if (!r) throw new Error('no round result');
    return r;
  }
  async close(): Promise<void> {
    try {
      await this.call({ op: 'close' });
    } finally {
      await this.worker.terminate();
    }
  }
}

if (!isMainThread && parentPort && isWorkerInit(workerData)) serveInWorker(parentPort, workerData);
