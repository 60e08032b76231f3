/**
 * Subscription fan-out by the thousand, part of `npm run bench` and runnable alone
 * (`npx tsx bench/fanout.ts`): N graphql-ws subscribers (one connection each) of one risk request on
 * one gateway of the one-process layer; the emulator completes the request and POSTs the upstream
 * callback; timed from the callback's arrival at the gateway's HTTP server to each subscriber's
 * delivery of the final state. The gateway shares one subgraph subscription between them
 * (`gateway/subscription-sharing.ts`).
 *
 * The clients run in a child process (`LocalPool` of `bench/subscriber-pool.ts` behind IPC): 10,000
 * connections are 20,000 sockets, more than one process may open here, and their decoding stays off
 * the layer's CPU. Memory per subscriber: the layer's process (emulator included, no client) after a
 * full GC, idle with no subscriber versus idle with N subscribed (RSS and V8 heap).
 *
 * The baseline: graphql-ws's own server (`useServer` over a graphql-js schema, the same `ws` library)
 * with one async generator per subscriber, as a plain GraphQL subscription server runs it (each event
 * executed and serialised per subscriber); timed from the moment the event is published to it. It
 * runs in this process too, and its clients in a child process alike.
 *
 * The floor: what this machine takes to put one frame on N loopback connections at all. A plain
 * `net` server in this process writes one buffer the size of the layer's final-state frame (as the
 * layer's round measured it) to each of N connections, one `socket.write` each, to clients in a
 * child process that only count bytes; timed from the write loop's start to the clients' last
 * receipt, the same rounds. On loopback the kernel does the receiver's TCP work in the sender's
 * system call, so this is mostly system time no server can skip; the layer's ratio to it is what
 * the layer adds per socket.
 *
 * Environment: `BENCH_FANOUT` (comma list, default 1000,10000), `BENCH_FANOUT_ROUNDS` (default 5;
 * the first, a warm-up, is not counted), `BENCH_FANOUT_CPUPROFILE` (a file: CPU profile of the last
 * round, summarised by `npx tsx bench/cold.ts --summary <file>`).
 */
import { fork, type ChildProcess } from 'node:child_process';
import dc from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { EventEmitter } from 'node:events';
import { createServer } from 'node:http';
import { connect, createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { buildSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { request } from 'undici';
import { WebSocketServer } from 'ws';
import { makeFiscalCode } from '../contract/checksums.ts';
import { DEFAULT_TOKEN } from '../emulator/server.ts';
import { startStack } from '../stack.ts';
import { delivered, type TopicDelivery } from '../gateway/subscription-sharing.ts';
import { calibrate, LocalPool, now, pct, type RoundResult } from './subscriber-pool.ts';

const ORDER = `mutation($input: PersonSubjectInput!) { orderPatrimonialReport(level: STANDARD, input: $input) { id state } }`;
const SAFETY_MS = 60_000;

export interface FanoutRow {
  subscribers: number;
  rounds: number;
  /** Callback arrival → each delivery, ms. */
  eachP50: number;
  eachP99: number;
  /** Callback arrival → last delivery of the round, ms (over rounds). */
  lastP50: number;
  lastP99: number;
  lost: number;
  /** Layer's process, idle, per subscriber: RSS and V8 heap bytes. */
  rssPerSubscriber: number;
  heapPerSubscriber: number;
  /** Callback → the server wrote the last frame, p50 (the rest of `lastP50` is the clients' reading). */
  writtenP50: number;
  /** The layer's write loop alone (the first socket's frame to the last's), p50, ms. */
  loopP50: number;
  /** The same N on the baseline (graphql-ws alone): callback → last delivery p50 / p99. */
  baselineLastP50: number;
  baselineLastP99: number;
  baselineLost: number;
  /** The floor (see the module doc): write loop's start → the clients' last receipt, p50 / p99, ms. */
  floorLastP50: number;
  floorLastP99: number;
  /** The floor's write loop alone, p50, ms. */
  floorWrittenP50: number;
  /** The frame the floor wrote to each socket, bytes. */
  floorFrameBytes: number;
  problems: string[];
}

// ---------------------------------------------------------------------------------------------
// The clients' process

type ClientCall =
  { seq: number; op: 'open'; url: string; token: string; n: number } | { seq: number; op: 'subscribe'; id: string } | { seq: number; op: 'collect' } | { seq: number; op: 'close' };

function serveClients(): void {
  let pool: LocalPool | null = null;
  process.on('message', (call: ClientCall) => {
    const run = async (): Promise<RoundResult | null> => {
      switch (call.op) {
        case 'open':
          pool = new LocalPool([call.url], call.token);
          await pool.open(call.n);
          return null;
        case 'subscribe':
          calibrate();
          await pool!.subscribe(call.id);
          return null;
        case 'collect':
          return pool!.collect(SAFETY_MS);
        case 'close':
          await pool?.close();
          return null;
      }
    };
    run().then(
      (value) => process.send!({ seq: call.seq, ok: true, value }),
      (err: unknown) => process.send!({ seq: call.seq, ok: false, error: err instanceof Error ? err.message : String(err) }),
    );
  });
}

/** What the floor's clients saw in a round: when the last of them had its frame (`now()` ms, NaN: none), and how many had it. */
interface FloorReceipt {
  last: number;
  got: number;
}

type FloorCall =
  { seq: number; op: 'open'; port: number; n: number } | { seq: number; op: 'expect'; bytes: number } | { seq: number; op: 'collect' } | { seq: number; op: 'close' };

/** The floor's clients: N plain TCP connections, each counting the bytes of its round's frame. */
function serveFloorClients(): void {
  let sockets: Socket[] = [];
  let expected = 0;
  let got = 0;
  let last = Number.NaN;
  let onAll: (() => void) | null = null;
  const received = new Map<Socket, number>();
  const onData = (socket: Socket, chunk: Buffer): void => {
    const before = received.get(socket) ?? 0;
    const after = before + chunk.length;
    received.set(socket, after);
    if (before < expected && after >= expected) {
      last = now();
      if (++got === sockets.length) onAll?.();
    }
  };
  process.on('message', (call: FloorCall) => {
    const run = async (): Promise<FloorReceipt | null> => {
      switch (call.op) {
        case 'open':
          for (let i = 0; i < call.n; i += CONNECT_BATCH) {
            const batch = await Promise.all(
              Array.from(
                { length: Math.min(CONNECT_BATCH, call.n - i) },
                async () =>
                  new Promise<Socket>((resolve, reject) => {
                    const socket = connect(call.port, '127.0.0.1', () => resolve(socket));
                    socket.once('error', reject);
                    socket.on('data', (chunk: Buffer) => onData(socket, chunk));
                  }),
              ),
            );
            sockets.push(...batch);
          }
          return null;
        case 'expect':
          calibrate();
          expected = call.bytes;
          got = 0;
          last = Number.NaN;
          received.clear();
          return null;
        case 'collect':
          if (got < sockets.length) {
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, SAFETY_MS);
              onAll = () => {
                clearTimeout(timer);
                resolve();
              };
            });
            onAll = null;
          }
          return { last, got };
        case 'close':
          for (const socket of sockets) socket.destroy();
          sockets = [];
          return null;
      }
    };
    run().then(
      (value) => process.send!({ seq: call.seq, ok: true, value }),
      (err: unknown) => process.send!({ seq: call.seq, ok: false, error: err instanceof Error ? err.message : String(err) }),
    );
  });
}

/** Connections opened at once by the floor's clients. */
const CONNECT_BATCH = 200;

class ClientProcess<V = RoundResult> {
  private readonly child: ChildProcess;
  private seq = 0;
  private readonly pending = new Map<number, (a: { ok: boolean; value?: V | null; error?: string }) => void>();
  constructor(role = '--clients') {
    this.child = fork(new URL(import.meta.url).pathname, [role], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (a: { seq: number; ok: boolean; value?: V | null; error?: string }) => {
      this.pending.get(a.seq)?.(a);
      this.pending.delete(a.seq);
    });
  }
  async call(msg: Record<string, unknown> & { op: string }): Promise<V | null> {
    const seq = ++this.seq;
    const a = await new Promise<{ ok: boolean; value?: V | null; error?: string }>((resolve) => {
      this.pending.set(seq, resolve);
      this.child.send({ ...msg, seq });
    });
    if (!a.ok) throw new Error(a.error);
    return a.value ?? null;
  }
  kill(): void {
    this.child.kill('SIGTERM');
  }
}

// ---------------------------------------------------------------------------------------------
// The bench

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const idleMemory = async (): Promise<{ rss: number; heap: number }> => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed };
};

/** One side of the fan-out: where its subscribers connect, and how a round's event is made and fired. */
interface FanoutSide {
  url: string;
  token: string;
  /** A new item to follow (its id), in the state subscribers get first. */
  prepare(): Promise<string>;
  /** Makes the item's final state happen; resolves when it was handed to the server. */
  fire(id: string): Promise<void>;
  /** When the event entered the server (its callback arrived, or it was published), `now()` ms. */
  firedAt(): number;
  /** When the server had written the event to every subscriber's socket, `now()` ms (NaN: not known). */
  writtenAt?(): number;
  /** How long writing the event to every subscriber's socket took, ms (NaN: not known). */
  loopMs?(): number;
}

interface SideRun {
  each: number[];
  last: number[];
  /** Event → the server wrote its last frame (the layer's shared-subscription delivery), per round. */
  written: number[];
  /** The server's write loop, per round. */
  loop: number[];
  lost: number;
  rss: number;
  heap: number;
  problems: Set<string>;
}

/** `rounds` + 1 rounds (the first a warm-up) of N subscribers of one item, then its final state. */
async function runSide(side: FanoutSide, n: number, rounds: number, profileFile: string | null): Promise<SideRun> {
  const clients = new ClientProcess();
  const acc: SideRun = { each: [], last: [], written: [], loop: [], lost: 0, rss: 0, heap: 0, problems: new Set() };
  try {
    const before = await idleMemory();
    await clients.call({ op: 'open', url: side.url, token: side.token, n });
    for (let round = 0; round <= rounds; round++) {
      calibrate();
      const id = await side.prepare();
      await clients.call({ op: 'subscribe', id });
      if (round === 1) {
        const idle = await idleMemory();
        acc.rss = (idle.rss - before.rss) / n;
        acc.heap = (idle.heap - before.heap) / n;
      }
      // BENCH_FANOUT_CPUPROFILE=<file>: a V8 CPU profile of the last round of the last N.
      const profiler = profileFile && round === rounds ? new Session() : null;
      if (profiler) {
        profiler.connect();
        await profiler.post('Profiler.enable');
        await profiler.post('Profiler.start');
      }
      await side.fire(id);
      const result = (await clients.call({ op: 'collect' }))!;
      if (profiler) {
        writeFileSync(profileFile!, JSON.stringify((await profiler.post('Profiler.stop')).profile));
        profiler.disconnect();
      }
      const got = result.delivered.filter((t) => !Number.isNaN(t));
      if (result.errors.length > 0) acc.problems.add(result.errors.slice(0, 2).join(' | '));
      const firedAt = side.firedAt();
      if (Number.isNaN(firedAt)) acc.problems.add('no event seen at the server');
      if (round === 0) continue;
      acc.lost += n - got.length;
      acc.each.push(...got.map((t) => t - firedAt));
      if (got.length > 0) acc.last.push(Math.max(...got) - firedAt);
      const written = side.writtenAt?.() ?? Number.NaN;
      if (!Number.isNaN(written)) acc.written.push(written - firedAt);
      const loop = side.loopMs?.() ?? Number.NaN;
      if (!Number.isNaN(loop)) acc.loop.push(loop);
    }
    await clients.call({ op: 'close' });
  } finally {
    clients.kill();
  }
  return acc;
}

interface FloorRun {
  last: number[];
  written: number[];
  lost: number;
}

/**
 * The floor (see the module doc): `rounds` + 1 rounds (the first a warm-up) of one `bytes`-long
 * buffer written to each of N loopback connections, one `socket.write` each.
 */
async function runFloor(n: number, rounds: number, bytes: number): Promise<FloorRun> {
  const sockets: Socket[] = [];
  const server = createTcpServer((socket) => {
    // As `ws` does for its connections.
    socket.setNoDelay(true);
    sockets.push(socket);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const clients = new ClientProcess<FloorReceipt>('--floor-clients');
  const acc: FloorRun = { last: [], written: [], lost: 0 };
  const frame = Buffer.alloc(bytes, 0x61);
  try {
    await clients.call({ op: 'open', port: (server.address() as AddressInfo).port, n });
    while (sockets.length < n) await new Promise((r) => setImmediate(r));
    for (let round = 0; round <= rounds; round++) {
      calibrate();
      await clients.call({ op: 'expect', bytes });
      const startedAt = now();
      for (const socket of sockets) socket.write(frame);
      const writtenAt = now();
      const receipt = (await clients.call({ op: 'collect' }))!;
      if (round === 0) continue;
      acc.lost += n - receipt.got;
      if (!Number.isNaN(receipt.last)) acc.last.push(receipt.last - startedAt);
      acc.written.push(writtenAt - startedAt);
    }
    await clients.call({ op: 'close' });
  } finally {
    clients.kill();
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  }
  return acc;
}

/** The size of a `next` frame carrying an event of `eventBytes` (see `TopicDelivery.bytes`) to a graphql-ws client (its id a UUID). */
const nextFrameBytes = (eventBytes: number): number => {
  const payload = `{"id":"${'0'.repeat(36)}","type":"next","payload":`.length + eventBytes;
  return payload + (payload < 126 ? 2 : payload < 65536 ? 4 : 10);
};

/** The baseline: graphql-ws's server alone, one async generator per subscriber (see the module doc). */
async function startBareGraphqlWs(): Promise<FanoutSide & { close(): Promise<void> }> {
  const finals = new EventEmitter();
  finals.setMaxListeners(0);
  let firedAt = Number.NaN;
  let next = 0;
  const schema = buildSchema(`
    enum RiskRequestState { PROCESSING COMPLETE }
    type RiskRequest { id: ID! state: RiskRequestState! done: Boolean! }
    type Query { ping: Boolean }
    type Subscription { riskRequestUpdated(id: ID!): RiskRequest }
  `);
  async function* follow({ id }: { id: string }): AsyncGenerator<{ riskRequestUpdated: { id: string; state: string; done: boolean } }> {
    yield { riskRequestUpdated: { id, state: 'PROCESSING', done: false } };
    await new Promise((r) => finals.once(id, r));
    yield { riskRequestUpdated: { id, state: 'COMPLETE', done: true } };
  }
  const server = createServer();
  const wss = new WebSocketServer({ server, path: '/graphql' });
  const ws = useServer({ schema, roots: { subscription: { riskRequestUpdated: follow } } }, wss);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}/graphql`,
    token: 'none',
    prepare: async () => `baseline-${++next}`,
    async fire(id) {
      firedAt = now();
      finals.emit(id);
    },
    firedAt: () => firedAt,
    async close() {
      await ws.dispose();
      for (const c of wss.clients) c.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

export async function runFanoutBench(): Promise<FanoutRow[]> {
  const counts = (process.env.BENCH_FANOUT ?? '1000,10000')
    .split(',')
    .map(Number)
    .filter((n) => n > 0);
  const rounds = Number(process.env.BENCH_FANOUT_ROUNDS ?? 5);
  // The deployed configuration (response cache on).
  const stack = await startStack({ env: { OPENAPI_ENV: 'emulator' }, port: 0 });
  const emu = async (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<unknown> => {
    const res = await request(`${stack.emulatorUrl!}/_emulator/${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    return text ? (JSON.parse(text) as unknown) : null;
  };
  const taxCode = makeFiscalCode({ surname: 'Rossi', name: 'Mario', birthDate: '1990-04-28', gender: 'M', cadastralCode: 'L117' });
  let callbackAt = Number.NaN;
  let writtenAt = Number.NaN;
  let fanout = 0;
  let eventBytes = 0;
  let loopMs = Number.NaN;
  // The server's part: when the shared subscription had written the final event to every socket.
  const onDelivered = (message: unknown): void => {
    if ((message as TopicDelivery).subscribers >= fanout) {
      writtenAt = now();
      eventBytes = (message as TopicDelivery).bytes;
      loopMs = (message as TopicDelivery).endedAt - (message as TopicDelivery).startedAt;
    }
  };
  dc.subscribe(delivered.name, onDelivered);
  const layer: FanoutSide = {
    url: stack.gateway.wsUrl,
    token: DEFAULT_TOKEN,
    async prepare() {
      const res = await request(stack.gateway.graphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${DEFAULT_TOKEN}` },
        body: JSON.stringify({ query: ORDER, variables: { input: { name: 'Mario', surname: 'Rossi', taxCode } } }),
      });
      const body = (await res.body.json()) as { data?: { orderPatrimonialReport: { id: string } }; errors?: unknown };
      if (!body.data) throw new Error(`order failed: ${JSON.stringify(body.errors)}`);
      callbackAt = Number.NaN;
      writtenAt = Number.NaN;
      loopMs = Number.NaN;
      return body.data.orderPatrimonialReport.id;
    },
    writtenAt: () => writtenAt,
    loopMs: () => loopMs,
    // The emulator completes the request and POSTs its callback to the gateway.
    fire: async (id) => void (await emu('POST', 'risk/advance', { id })),
    firedAt: () => callbackAt,
  };
  const onStart = (message: unknown): void => {
    if ((message as { request: IncomingMessage }).request.url?.startsWith('/callbacks/risk/')) callbackAt = now();
  };
  dc.subscribe('http.server.request.start', onStart);
  const baseline = await startBareGraphqlWs();
  const rows: FanoutRow[] = [];
  try {
    await emu('POST', 'risk/timing', { completeAfterMs: 0 });
    for (const n of counts) {
      const profile = process.env.BENCH_FANOUT_CPUPROFILE && n === counts.at(-1) ? process.env.BENCH_FANOUT_CPUPROFILE : null;
      fanout = n;
      const l = await runSide(layer, n, rounds, profile);
      // The floor right after the layer (the machine as loaded as it was), with the frame it wrote.
      const frameBytes = nextFrameBytes(eventBytes);
      const f = await runFloor(n, rounds, frameBytes);
      const b = await runSide(baseline, n, rounds, null);
      rows.push({
        subscribers: n,
        rounds,
        eachP50: pct(l.each, 50),
        eachP99: pct(l.each, 99),
        lastP50: pct(l.last, 50),
        lastP99: pct(l.last, 99),
        writtenP50: pct(l.written, 50),
        loopP50: pct(l.loop, 50),
        lost: l.lost,
        rssPerSubscriber: l.rss,
        heapPerSubscriber: l.heap,
        baselineLastP50: pct(b.last, 50),
        baselineLastP99: pct(b.last, 99),
        baselineLost: b.lost,
        floorLastP50: pct(f.last, 50),
        floorLastP99: pct(f.last, 99),
        floorWrittenP50: pct(f.written, 50),
        floorFrameBytes: frameBytes,
        problems: [...l.problems, ...[...b.problems].map((p) => `baseline: ${p}`), ...(f.lost > 0 ? [`floor: ${f.lost} frames not received`] : [])],
      });
    }
  } finally {
    dc.unsubscribe('http.server.request.start', onStart);
    dc.unsubscribe(delivered.name, onDelivered);
    await baseline.close();
    await stack.close();
  }
  return rows;
}

export function printFanoutRows(rows: FanoutRow[]): void {
  console.log('\nSubscription fan-out on one gateway (one connection per subscriber, clients in another process; one shared subgraph subscription)\n');
  console.log(
    '| subscribers | rounds | callback → each delivery p50 | p99 | callback → last delivery p50 | p99 | callback → last frame written (server) p50 | lost | idle RSS per subscriber | idle heap per subscriber | baseline (graphql-ws alone): last delivery p50 / p99 | floor (one raw write per socket): last receipt p50 / p99 | floor: write loop p50 | layer / floor: last delivery p50, p99 | write loop per socket p50: layer / floor |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  const us = (totalMs: number, n: number): string => `${((totalMs * 1000) / n).toFixed(1)} µs`;
  for (const r of rows) {
    console.log(
      `| ${r.subscribers} | ${r.rounds} | ${r.eachP50.toFixed(1)} ms | ${r.eachP99.toFixed(1)} ms | ${r.lastP50.toFixed(1)} ms | ${r.lastP99.toFixed(1)} ms | ${r.writtenP50.toFixed(1)} ms | ${r.lost} | ${(r.rssPerSubscriber / 1024).toFixed(1)} KB | ${(r.heapPerSubscriber / 1024).toFixed(1)} KB | ${r.baselineLastP50.toFixed(1)} / ${r.baselineLastP99.toFixed(1)} ms | ${r.floorLastP50.toFixed(1)} / ${r.floorLastP99.toFixed(1)} ms (${r.floorFrameBytes} B) | ${r.floorWrittenP50.toFixed(1)} ms | ${(r.lastP50 / r.floorLastP50).toFixed(2)}, ${(r.lastP99 / r.floorLastP99).toFixed(2)} | ${us(r.loopP50, r.subscribers)} / ${us(r.floorWrittenP50, r.subscribers)} |`,
    );
  }
  for (const r of rows) for (const p of r.problems) console.log(`- ${r.subscribers}: ${p}`);
}

if (process.argv.includes('--clients')) serveClients();
else if (process.argv.includes('--floor-clients')) serveFloorClients();
else if (import.meta.url === `file://${process.argv[1]}`) printFanoutRows(await runFanoutBench());
