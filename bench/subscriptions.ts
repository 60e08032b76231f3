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
 * The clients live in a worker thread with their own event loop (`bench/subscriber-pool.ts`), so
 * their decoding does not compete with the stack (emulator, subgraphs and gateway share the main thread);
 * `BENCH_SUBSCRIBERS_IN_PROCESS=1` runs them on the main thread instead.
 *
 * Environment: `BENCH_SUBSCRIBERS` (comma list, default 1,10,100,500), `BENCH_SUBSCRIPTION_ROUNDS`
 * (rounds per N; default 50 up to 10 subscribers, 20 up to 100, 10 above), `BENCH_UPSTREAM_LATENCY_MS`.
 * The first round of every N is a warm-up and is not counted.
 */
import dc from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { request } from 'undici';
import { makeFiscalCode } from '../contract/checksums.ts';
import { DEFAULT_TOKEN } from '../emulator/server.ts';
import { startStack, type Stack } from '../stack.ts';
import { calibrate, LocalPool, ms, now, pct, WorkerPool, type SubscriberPool } from './subscriber-pool.ts';

const SAFETY_MS = 30_000;

const ORDER = `mutation($input: PersonSubjectInput!) { orderPatrimonialReport(level: STANDARD, input: $input) { id state } }`;

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
      pool = inProcess ? new LocalPool([stack.gateway.wsUrl], DEFAULT_TOKEN) : new WorkerPool([stack.gateway.wsUrl], DEFAULT_TOKEN);
      await pool.open(n);
      const acc = {
        subscribe: [] as number[],
        each: [] as number[],
        last: [] as number[],
        cbEach: [] as number[],
        cbLast: [] as number[],
        cbIn: [] as number[],
        cbAnswered: [] as number[],
        calls: 0,
        euro: 0,
        emulatorCalls: 0,
        lost: 0,
        problems: new Set<string>(),
      };
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
        if (log.length !== 1 || log[0].status !== 200) acc.problems.add(`callback log: ${JSON.stringify(log.map((l) => l.status))}`);
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
