/**
 * Subscription fan-out, part of `npm run bench`: N subscribers of one asynchronous risk request,
 * and how long the layer takes to bring the upstream completion callback to all of them.
 *
 * Per round: order one patrimonial report (one paid mutation), subscribe N graphql-ws clients to
 * `riskRequestUpdated` for it, wait until each has its initial state (PROCESSING), then tell the
 * emulator to complete the request (`POST /_emulator/risk/advance`). The emulator POSTs the vendor
 * callback to the gateway at once (`/callbacks/risk/…` → risk subgraph → status store → event bus),
 * and the bus fans the change out through the subgraph's graphql-ws to the gateway and on to every
 * client. Each subscriber's arrival of the COMPLETE state is timed from the moment `advance` is
 * called, and from the moment the callback reached the gateway: the stack runs in this process, so
 * the gateway's HTTP server reports the callback request (`http.server.request.start` on
 * `node:diagnostics_channel`, headers parsed) and its answer (`http.server.response.finish`).
 *
 * Each subscriber is a user app of its own: one graphql-ws connection (WebSocket) per subscriber,
 * all with the same token (one tenant; the gateway then carries the N subscriptions to the risk
 * subgraph over one shared graphql-ws connection, one upstream subscription each).
 * The clients live in a worker thread with their own event loop, so their decoding does not compete
 * with the stack (emulator, subgraphs and gateway share the main thread);
 * `BENCH_SUBSCRIBERS_IN_PROCESS=1` runs them on the main thread instead.
 *
 * Environment: `BENCH_SUBSCRIBERS` (comma list, default 1,10,100,500), `BENCH_SUBSCRIPTION_ROUNDS`
 * (rounds per N; default 50 up to 10 subscribers, 20 up to 100, 10 above), `BENCH_UPSTREAM_LATENCY_MS`.
 * The first round of every N is a warm-up and is not counted.
 */
import dc from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { Worker, isMainThread, parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';
import { request } from 'undici';
import type { Stack } from '../stack.ts';

const WORKER_ROLE = 'bench-subscribers';
const SAFETY_MS = 30_000;
/** Connections opened at once when building a pool. */
const CONNECT_BATCH = 100;

const UPDATED = `subscription($id: ID!) { riskRequestUpdated(id: $id) { id state done } }`;
const ORDER = `mutation($input: PersonSubjectInput!) { orderPatrimonialReport(level: STANDARD, input: $input) { id state } }`;

/**
 * Wall-clock milliseconds with sub-millisecond resolution. `performance.timeOrigin` is off by up to
 * a couple of milliseconds and differs between threads, so each thread pins the monotonic clock to
 * `Date.now()` at the instant it ticks (`calibrate`, before every round): times taken in the worker
 * and on the main thread are then comparable within a fraction of a millisecond.
 */
let clockOffset = Date.now() - performance.now();
const now = (): number => performance.now() + clockOffset;
function calibrate(): void {
  const start = Date.now();
  let tick = start;
  for (let spins = 0; tick === start && spins < 10_000_000; spins++) tick = Date.now();
  clockOffset = tick - performance.now();
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};
const ms = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(1)} ms` : 'n/a');

const errorText = (err: unknown): string => {
  if (err instanceof Error) return err.message;
  if (Array.isArray(err)) return err.map(errorText).join('; ');
  if (typeof err === 'object' && err !== null && 'code' in err && 'reason' in err) return `socket closed ${String(err.code)} ${String(err.reason)}`;
  return JSON.stringify(err);
};

// ---------------------------------------------------------------------------------------------
// The subscribers

/** What one round saw on the client side. */
interface RoundResult {
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
interface SubscriberPool {
  /** Opens `n` connections (connection_init acknowledged) and keeps them for the rounds. */
  open(n: number): Promise<void>;
  /** Subscribes every client to the request; resolves when each has its initial state. */
  subscribe(id: string): Promise<void>;
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

class LocalPool implements SubscriberPool {
  private clients: Client[] = [];
  private round: { result: RoundResult; unsubscribe: Array<() => void>; initialCount: number; settled: number } | null = null;
  private waiters: Array<{ ready: () => boolean; resolve: () => void }> = [];

  constructor(
    private readonly url: string,
    private readonly token: string,
  ) {}

  async open(n: number): Promise<void> {
    while (this.clients.length < n) {
      const batch = Array.from({ length: Math.min(CONNECT_BATCH, n - this.clients.length) }, () =>
        createClient({
          url: this.url,
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

  async subscribe(id: string): Promise<void> {
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
          { query: UPDATED, variables: { id } },
          {
            next: (r: FormattedExecutionResult<{ riskRequestUpdated: { id: string; state: string; done: boolean } }>) => {
              const t = now();
              const ev = r.data?.riskRequestUpdated;
              if (r.errors?.length || !ev) result.errors.push(errorText(r.errors ?? 'event without data'));
              else if (ev.done) result.delivered[i] = t;
              else if (Number.isNaN(result.initial[i]!) && ev.state === 'PROCESSING') {
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
    const ok = await this.waitFor(() => result.errors.length > 0 || round.initialCount === n, SAFETY_MS);
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
    await Promise.allSettled(clients.map((c) => c.dispose()));
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
type Call = { seq: number; op: 'open'; n: number } | { seq: number; op: 'subscribe'; id: string } | { seq: number; op: 'collect'; timeoutMs: number } | { seq: number; op: 'close' };
type Answer = { seq: number; ok: true; value: RoundResult | null } | { seq: number; ok: false; error: string };
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
interface WorkerInit {
  role: typeof WORKER_ROLE;
  url: string;
  token: string;
}

const isWorkerInit = (v: unknown): v is WorkerInit =>
  typeof v === 'object' && v !== null && (v as { role?: unknown }).role === WORKER_ROLE && typeof (v as { url?: unknown }).url === 'string' && typeof (v as { token?: unknown }).token === 'string';

function serveInWorker(port: MessagePort, init: WorkerInit): void {
  const pool = new LocalPool(init.url, init.token);
  port.on('message', (call: Call) => {
    const run = async (): Promise<RoundResult | null> => {
      switch (call.op) {
        case 'open':
          await pool.open(call.n);
          return null;
        case 'subscribe':
          await pool.subscribe(call.id);
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
class WorkerPool implements SubscriberPool {
  private readonly worker: Worker;
  private seq = 0;
  private dead: Error | null = null;
  private readonly pending = new Map<number, { resolve: (v: RoundResult | null) => void; reject: (e: Error) => void }>();

  constructor(url: string, token: string) {
    let tsx = 'tsx/esm/api';
    try {
      tsx = import.meta.resolve('tsx/esm/api');
    } catch {
      // resolved from the working directory instead
    }
    const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(import.meta.url)}); });`;
    this.worker = new Worker(boot, { eval: true, workerData: { role: WORKER_ROLE, url, token } satisfies WorkerInit });
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
  async subscribe(id: string): Promise<void> {
    await this.call({ op: 'subscribe', id });
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

// ---------------------------------------------------------------------------------------------
// The bench

interface Row {
  subscribers: number;
  rounds: number;
  subscribeP50: number;
  eachP50: number;
  eachP99: number;
  cbEachP50: number;
  cbEachP99: number;
  lastP50: number;
  lastP99: number;
  cbLastP50: number;
  cbLastP99: number;
  cbInP50: number;
  cbAnsweredP50: number;
  calls: number;
  euro: number;
  emulatorCalls: number;
  lost: number;
  problems: string[];
}

const subscriberCounts = (): number[] => {
  const list = (process.env.BENCH_SUBSCRIBERS ?? '1,10,100,500')
    .split(',')
    .map((s) => Number(s.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);
  return list.length > 0 ? list : [1, 10, 100, 500];
};

const roundsFor = (n: number): number => {
  const override = Number(process.env.BENCH_SUBSCRIPTION_ROUNDS);
  if (Number.isInteger(override) && override > 0) return override;
  return n <= 10 ? 50 : n <= 100 ? 20 : 10;
};

interface Cost {
  upstreamCalls: number;
  euro: number;
}

export async function runSubscriptionBench(): Promise<void> {
  const latencyMs = Number(process.env.BENCH_UPSTREAM_LATENCY_MS ?? 40);
  const inProcess = process.env.BENCH_SUBSCRIBERS_IN_PROCESS === '1';
  // Loaded here, not at the top: the worker thread imports this module too and needs none of it.
  const { startStack } = await import('../stack.ts');
  const { DEFAULT_TOKEN } = await import('../emulator/server.ts');
  const { makeFiscalCode } = await import('../subgraphs/upstream/checksums.ts');
  const taxCode = makeFiscalCode({ surname: 'Rossi', name: 'Mario', birthDate: '1990-04-28', gender: 'M', cadastralCode: 'L117' });
  const authorization = `Bearer ${DEFAULT_TOKEN}`;

  const stack: Stack = await startStack({ env: { ...process.env, OPENAPI_ENV: 'emulator' }, port: 0, emulator: { latencyMs: { company: latencyMs, risk: latencyMs } } });
  const emu = async (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<unknown> => {
    const res = await request(`${stack.emulatorUrl!}/_emulator/${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    if (res.statusCode >= 400) throw new Error(`emulator ${method} ${path}: ${res.statusCode} ${text}`);
    return text ? (JSON.parse(text) as unknown) : null;
  };
  const order = async (): Promise<{ id: string; cost: Cost }> => {
    const res = await request(stack.gateway.graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization },
      body: JSON.stringify({ query: ORDER, variables: { input: { name: 'Mario', surname: 'Rossi', taxCode } } }),
    });
    const body = (await res.body.json()) as { errors?: unknown[]; data?: { orderPatrimonialReport: { id: string; state: string } }; extensions?: { cost?: Cost } };
    if (body.errors || !body.data) throw new Error(`order failed: ${JSON.stringify(body.errors)}`);
    return { id: body.data.orderPatrimonialReport.id, cost: body.extensions?.cost ?? { upstreamCalls: Number.NaN, euro: Number.NaN } };
  };

  // The callback's arrival at the gateway and the gateway's answer to it (its `/callbacks/` route
  // proxies to the risk subgraph, which verifies, stores and publishes before answering 200).
  const ingress: Array<{ arrived: number; answered: number }> = [];
  const open = new WeakMap<IncomingMessage, { arrived: number; answered: number }>();
  const onStart = (message: unknown): void => {
    const req = (message as { request: IncomingMessage }).request;
    if (!req.url?.startsWith('/callbacks/risk/')) return;
    const entry = { arrived: now(), answered: Number.NaN };
    open.set(req, entry);
    ingress.push(entry);
  };
  const onFinish = (message: unknown): void => {
    const entry = open.get((message as { request: IncomingMessage }).request);
    if (entry) entry.answered = now();
  };
  dc.subscribe('http.server.request.start', onStart);
  dc.subscribe('http.server.response.finish', onFinish);

  const rows: Row[] = [];
  let pool: SubscriberPool | null = null;
  try {
    // Requests complete only on `advance`, never by themselves.
    await emu('POST', 'risk/timing', { completeAfterMs: 0 });
    for (const n of subscriberCounts()) {
      const rounds = roundsFor(n);
      pool = inProcess ? new LocalPool(stack.gateway.wsUrl, DEFAULT_TOKEN) : new WorkerPool(stack.gateway.wsUrl, DEFAULT_TOKEN);
      await pool.open(n);
      const acc = { subscribe: [] as number[], each: [] as number[], last: [] as number[], cbEach: [] as number[], cbLast: [] as number[], cbIn: [] as number[], cbAnswered: [] as number[], calls: 0, euro: 0, emulatorCalls: 0, lost: 0, problems: new Set<string>() };
      for (let round = 0; round <= rounds; round++) {
        const counted = round > 0; // round 0 warms up
        await emu('DELETE', 'calls');
        await emu('DELETE', 'callbacks');
        ingress.length = 0;
        calibrate();
        const { id, cost } = await order();

        const tSub = now();
        await pool.subscribe(id);
        const subscribed = now() - tSub;

        const t0 = now();
        const adv = (await emu('POST', 'risk/advance', { id })) as { advanced?: string[] };
        if (!adv.advanced?.includes(id)) acc.problems.add(`advance did not complete ${id}`);
        const result = await pool.collect(SAFETY_MS);

        const log = (await emu('GET', 'callbacks')) as Array<{ status: number | null; at: string }>;
        const calls = (await emu('GET', 'calls?area=risk')) as Array<{ price: number }>;
        if (log.length !== 1 || log[0]!.status !== 200) acc.problems.add(`callback log: ${JSON.stringify(log.map((l) => l.status))}`);
        if (ingress.length !== 1) acc.problems.add(`${ingress.length} callback requests at the gateway in a round`);
        const cbAt = ingress[0]?.arrived ?? Number.NaN;
        const cbAnswered = ingress[0]?.answered ?? Number.NaN;
        const got = result.delivered.filter((t) => !Number.isNaN(t));
        const lost = n - got.length;
        if (result.errors.length > 0) acc.problems.add(`errors: ${result.errors.slice(0, 2).join(' | ')}`);
        if (result.unexpected > 0) acc.problems.add(`${result.unexpected} unexpected events`);
        if (result.ended < got.length) acc.problems.add(`${got.length - result.ended} streams not ended after COMPLETE`);
        if (!counted) continue;

        acc.subscribe.push(subscribed);
        acc.each.push(...got.map((t) => t - t0));
        if (got.length > 0) acc.last.push(Math.max(...got) - t0);
        if (!Number.isNaN(cbAt)) {
          acc.cbIn.push(cbAt - t0);
          acc.cbAnswered.push(cbAnswered - cbAt);
          acc.cbEach.push(...got.map((t) => t - cbAt));
          if (got.length > 0) acc.cbLast.push(Math.max(...got) - cbAt);
        }
        acc.lost += lost;
        acc.calls += cost.upstreamCalls;
        acc.euro += cost.euro;
        acc.emulatorCalls += calls.length;
      }
      await pool.close();
      pool = null;
      rows.push({
        subscribers: n,
        rounds,
        subscribeP50: pct(acc.subscribe, 50),
        eachP50: pct(acc.each, 50),
        eachP99: pct(acc.each, 99),
        cbEachP50: pct(acc.cbEach, 50),
        cbEachP99: pct(acc.cbEach, 99),
        lastP50: pct(acc.last, 50),
        lastP99: pct(acc.last, 99),
        cbLastP50: pct(acc.cbLast, 50),
        cbLastP99: pct(acc.cbLast, 99),
        cbInP50: pct(acc.cbIn, 50),
        cbAnsweredP50: pct(acc.cbAnswered, 50),
        calls: acc.calls / rounds,
        euro: acc.euro / rounds,
        emulatorCalls: acc.emulatorCalls / rounds,
        lost: acc.lost,
        problems: [...acc.problems],
      });
    }
  } finally {
    dc.unsubscribe('http.server.request.start', onStart);
    dc.unsubscribe('http.server.response.finish', onFinish);
    await pool?.close().catch(() => undefined);
    await stack.close();
  }

  console.log(
    `\nSubscription fan-out: one request, N graphql-ws subscribers (one connection each, ${inProcess ? 'on the main thread with the stack' : 'in a worker thread'}), ` +
      `completed by the emulator's \`advance\`, which POSTs the upstream callback to the gateway at once. ` +
      `"callback in": the callback request reached the gateway's HTTP server; "answered": the gateway's 200 to it. ` +
      `Upstream calls and euro per round from the order's \`extensions.cost\`; "emulator calls" = what the emulator's risk area received in the round. ` +
      `Upstream latency ${latencyMs} ms per call; first round of each N not counted; the "last delivery" p99 is over rounds (few: close to the maximum).\n`,
  );
  console.log(
    '| subscribers | rounds | subscribe all (initial state) p50 | advance → each delivery p50 | p99 | advance → last delivery p50 | p99 | advance → callback in p50 | callback in → each delivery p50 | p99 | callback in → last delivery p50 | p99 | callback answered p50 | upstream calls/round | euro/round | emulator calls/round | lost |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.subscribers} | ${r.rounds} | ${ms(r.subscribeP50)} | ${ms(r.eachP50)} | ${ms(r.eachP99)} | ${ms(r.lastP50)} | ${ms(r.lastP99)} | ${ms(r.cbInP50)} | ${ms(r.cbEachP50)} | ${ms(r.cbEachP99)} | ${ms(r.cbLastP50)} | ${ms(r.cbLastP99)} | ${ms(r.cbAnsweredP50)} | ${r.calls.toFixed(2)} | ${r.euro.toFixed(4)} | ${r.emulatorCalls.toFixed(2)} | ${r.lost} |`,
    );
  }
  const problems = rows.flatMap((r) => r.problems.map((p) => `- ${r.subscribers} subscribers: ${p}`));
  if (problems.length > 0) console.log(`\nProblems seen:\n${problems.join('\n')}`);
}

if (!isMainThread && parentPort && isWorkerInit(workerData)) serveInWorker(parentPort, workerData);
