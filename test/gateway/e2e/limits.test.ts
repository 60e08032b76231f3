/**
 * Limits before work (issue 18): every hostile request found against `npm start` is refused with a
 * 4xx over HTTP (or a graphql-ws `error` message / 4400 close over WebSocket) before the layer
 * spends memory or stack on it, through the real stack in this one process (emulator, subgraphs and
 * gateway, as under `npm start`): no unhandled error, no error-level log, the heap's growth bounded,
 * and a normal query still answers afterwards. Malformed requests get 400 `BAD_REQUEST` with a
 * message saying what is wrong.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { request } from 'undici';
import WebSocket from 'ws';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { logLevelOfEnv, logTo, setLogLevel } from '../../../platform/log.ts';
import type { LogLevel } from '@graphql-hive/logger';

/** Bound on the heap's growth while hostile requests are handled (the cap of `npm start` is 256 MB). */
const HEAP_GROWTH_BOUND = 64 * 2 ** 20;

let t: TestStack;
const unhandled: unknown[] = [];
const onUnhandled = (error: unknown): void => void unhandled.push(error);
const logged: Array<{ level: LogLevel; line: string }> = [];

beforeAll(async () => {
  process.on('uncaughtException', onUnhandled);
  process.on('unhandledRejection', onUnhandled);
  setLogLevel('warn');
  logTo({ write: (level, attrs, msg) => void logged.push({ level, line: `${msg ?? ''} ${JSON.stringify(attrs ?? {})}` }) });
  t = await startTestStack({ LAYER_SECRET: 'limits-test-secret-0123456789abcdef', RISK_POLL_MAX_CALLS_PER_MIN: '0' });
});

afterAll(async () => {
  await t?.close();
  logTo(null);
  setLogLevel(logLevelOfEnv(process.env));
  process.off('uncaughtException', onUnhandled);
  process.off('unhandledRejection', onUnhandled);
});

beforeEach(() => {
  unhandled.length = 0;
  logged.length = 0;
});

// ---------------------------------------------------------------------------------------------
// Hostile bodies, built as Buffers (outside the V8 heap this test measures).

/** `{"query":"{ __typename }","variables":{"v":` + inner + `}}` */
function withVariables(inner: Buffer): Buffer {
  return Buffer.concat([Buffer.from('{"query":"{ __typename }","variables":{"v":'), inner, Buffer.from('}}')]);
}

/** `[{},{},…]` with `n` empty objects (2,000,000: 5.7 MB; 3,000,000: 8.6 MB). */
function emptyObjects(n: number): Buffer {
  const b = Buffer.alloc(3 * n + 1, '{},');
  b[0] = 0x5b;
  b.write('{}]', 3 * n - 2);
  return b;
}

/** Arrays nested `n` deep: `[[[…]]]`. */
const nestedArrays = (n: number): Buffer => Buffer.concat([Buffer.alloc(n, '['), Buffer.alloc(n, ']')]);

/** The parser-stack document: `{ a ` × 2,400 then `}` × 2,400 (14 KB). */
const deepDocument = `${'{ a '.repeat(2400)}${'}'.repeat(2400)}`;

// ---------------------------------------------------------------------------------------------
// Helpers

interface Answer {
  status: number;
  body: { errors?: Array<{ message: string; extensions?: { code?: string } }>; data?: unknown };
}

async function post(body: Buffer | string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await request(t.stack.gateway.graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json', ...headers },
    body,
  });
  return { status: res.statusCode, body: (await res.body.json()) as Answer['body'] };
}

async function get(params: Record<string, string>): Promise<Answer> {
  const res = await request(`${t.stack.gateway.graphqlUrl}?${new URLSearchParams(params).toString()}`, {
    headers: { accept: 'application/graphql-response+json, application/json', 'x-graphql-csrf': '1' },
  });
  return { status: res.statusCode, body: (await res.body.json()) as Answer['body'] };
}

/** The process answers a normal query, nothing went unhandled, and nothing was logged as an error. */
async function expectAliveAndQuiet(): Promise<void> {
  const ok = await post(JSON.stringify({ query: '{ __typename }' }));
  expect([ok.status, ok.body.data]).toEqual([200, { __typename: 'Query' }]);
  expect(unhandled).toEqual([]);
  expect(logged.filter((l) => l.level === 'error' || /\n\s+at |\\n\s+at /.test(l.line)).map((l) => l.line)).toEqual([]);
}

/** Runs `work` while sampling the heap; returns the peak growth over the heap before it, in bytes. */
async function peakHeapGrowth(work: () => Promise<void>): Promise<number> {
  const before = process.memoryUsage().heapUsed;
  let peak = before;
  const sample = (): void => void (peak = Math.max(peak, process.memoryUsage().heapUsed));
  const timer = setInterval(sample, 2);
  try {
    await work();
  } finally {
    clearInterval(timer);
    sample();
  }
  return peak - before;
}

/** A graphql-ws connection, acknowledged, speaking raw messages. */
async function wsConnection(): Promise<{ socket: WebSocket; next(): Promise<unknown>; closed: Promise<{ code: number; reason: string }> }> {
  const socket = new WebSocket(t.stack.gateway.wsUrl, 'graphql-transport-ws');
  const inbox: unknown[] = [];
  const waiters: Array<(m: unknown) => void> = [];
  socket.on('message', (data: Buffer) => {
    const m = JSON.parse(data.toString('utf8')) as unknown;
    const w = waiters.shift();
    if (w) w(m);
    else inbox.push(m);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.once('close', (code: number, reason: Buffer) => resolve({ code, reason: reason.toString() })));
  const next = (): Promise<unknown> => (inbox.length > 0 ? Promise.resolve(inbox.shift()) : new Promise((resolve) => waiters.push(resolve)));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  socket.send(JSON.stringify({ type: 'connection_init', payload: {} }));
  expect(await next()).toEqual({ type: 'connection_ack' });
  return { socket, next, closed };
}

const subscribeMessage = (id: string, payloadHead: string, rest: Buffer): Buffer =>
  Buffer.concat([Buffer.from(`{"id":"${id}","type":"subscribe","payload":{${payloadHead}`), rest, Buffer.from('}}')]);

// ---------------------------------------------------------------------------------------------

describe('hostile requests over HTTP', () => {
  it('2,000,000 empty objects in variables (5.7 MB): 400 as soon as the values pass the limit', async () => {
    const body = withVariables(emptyObjects(2_000_000));
    let answer: Answer | undefined;
    const growth = await peakHeapGrowth(async () => void (answer = await post(body)));
    expect(answer?.status).toBe(400);
    expect(answer?.body.errors?.[0]).toEqual({ message: 'The request body is refused: JSON holds more than 10000 values.', extensions: { code: 'BAD_REQUEST' } });
    expect(growth).toBeLessThan(HEAP_GROWTH_BOUND);
    await expectAliveAndQuiet();
  });

  it('four bodies of 3,000,000 empty objects (8.6 MB each) at once: four 400s, the heap bounded', async () => {
    const body = withVariables(emptyObjects(3_000_000));
    expect(body.length).toBeGreaterThan(8_500_000);
    let answers: Answer[] = [];
    const growth = await peakHeapGrowth(async () => void (answers = await Promise.all([1, 2, 3, 4].map(() => post(body)))));
    expect(answers.map((a) => [a.status, a.body.errors?.[0]?.extensions?.code])).toEqual(Array.from({ length: 4 }, () => [400, 'BAD_REQUEST']));
    console.info(`[limits] heap growth, 4 × 8.6 MB at once: ${(growth / 2 ** 20).toFixed(1)} MiB`);
    expect(growth).toBeLessThan(HEAP_GROWTH_BOUND);
    await expectAliveAndQuiet();
  });

  it('variables nested 1,000,000 arrays deep: 400 at the 33rd level', async () => {
    const answer = await post(withVariables(nestedArrays(1_000_000)));
    expect(answer.status).toBe(400);
    expect(answer.body.errors?.[0]).toEqual({ message: 'The request body is refused: JSON nested deeper than 32 levels.', extensions: { code: 'BAD_REQUEST' } });
    await expectAliveAndQuiet();
  });

  it('a document nested 2,400 deep: 400 before the parser recurses', async () => {
    const answer = await post(JSON.stringify({ query: deepDocument }));
    expect(answer.status).toBe(400);
    expect(answer.body.errors?.[0]?.message).toMatch(/nests braces, brackets or parentheses deeper than 128 levels/);
    expect(answer.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
    await expectAliveAndQuiet();
  });

  it('too many aliases or directives: 400 before parsing', async () => {
    const aliases = await post(JSON.stringify({ query: `{ ${Array.from({ length: 501 }, (_, i) => `a${i}: __typename`).join(' ')} }` }));
    expect([aliases.status, aliases.body.errors?.[0]?.message]).toEqual([400, expect.stringMatching(/more than 500 aliases/)]);
    const directives = await post(JSON.stringify({ query: `{ __typename ${'@include(if: true) '.repeat(51)}}` }));
    expect([directives.status, directives.body.errors?.[0]?.message]).toEqual([400, expect.stringMatching(/more than 50 directives/)]);
    await expectAliveAndQuiet();
  });

  it('a body past the size limits: 413, by its content-length, by its structure and by its bytes when chunked', async () => {
    const code = (a: Answer): [number, string | undefined] => [a.status, a.body.errors?.[0]?.extensions?.code];
    // 16 MiB declared: refused before a byte is read.
    expect(code(await post(Buffer.alloc(16 * 2 ** 20, ' ')))).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    // 20 strings of 60 KB (not files: a file is a string past 64 KiB): 1.2 MB of structure.
    const strings = JSON.stringify({ query: '{ __typename }', variables: { v: Array.from({ length: 20 }, () => 'x'.repeat(60_000)) } });
    const refused = await post(strings);
    expect(code(refused)).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    expect(refused.body.errors?.[0]?.message).toBe('The request body is refused: larger than 1048576 bytes apart from file contents.');
    // The same bytes as two files of 0.6 MB are accepted (the variables are unused by the query).
    const files = JSON.stringify({ query: '{ __typename }', variables: { v: ['x'.repeat(600_000), 'x'.repeat(600_000)] } });
    const accepted = await post(files);
    expect([accepted.status, accepted.body.data]).toEqual([200, { __typename: 'Query' }]);
    // Chunked, no length declared: counted as it arrives.
    const huge = Buffer.alloc(16 * 2 ** 20, ' ');
    async function* chunked(): AsyncGenerator<Buffer> {
      for (let i = 0; i < huge.length; i += 2 ** 20) yield huge.subarray(i, i + 2 ** 20);
    }
    const res = await request(t.stack.gateway.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Readable.from(chunked()) });
    expect(res.statusCode).toBe(413);
    expect(((await res.body.json()) as Answer['body']).errors?.[0]?.extensions?.code).toBe('PAYLOAD_TOO_LARGE');
    await expectAliveAndQuiet();
  });

  it('the same limits on every path the runtime answers (`/graphql/`, a URL ending in /graphql), not only /graphql', async () => {
    const body = withVariables(emptyObjects(2_000_000));
    for (const path of ['/graphql/', '/x?/graphql']) {
      const res = await request(`${t.stack.gateway.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const answer = (await res.body.json()) as Answer['body'];
      expect([path, res.statusCode, answer.errors?.[0]?.extensions?.code]).toEqual([path, 400, 'BAD_REQUEST']);
    }
    await expectAliveAndQuiet();
  });

  it('a GET whose variables are nested too deep: 400', async () => {
    const answer = await get({ query: '{ __typename }', variables: `{"v":${nestedArrays(1000).toString()}}` });
    expect(answer.status).toBe(400);
    expect(answer.body.errors?.[0]).toEqual({ message: '"variables" is refused: JSON nested deeper than 32 levels.', extensions: { code: 'BAD_REQUEST' } });
    await expectAliveAndQuiet();
  });
});

describe('malformed requests: 400 BAD_REQUEST with a clear message, nothing logged', () => {
  it.each([
    ['query 123', { query: 123 }, '"query" must be a string.'],
    ['operationName 123', { query: '{ __typename }', operationName: 123 }, '"operationName" must be a string.'],
    ['variables "x"', { query: '{ __typename }', variables: 'x' }, '"variables" must be an object.'],
    ['variables []', { query: '{ __typename }', variables: [] }, '"variables" must be an object.'],
    ['extensions 1', { query: '{ __typename }', extensions: 1 }, '"extensions" must be an object.'],
    ['a batch', [{ query: '{ __typename }' }], 'The request body must be a JSON object (batched requests are not accepted).'],
  ])('%s', async (_name, body, message) => {
    const answer = await post(JSON.stringify(body));
    expect(answer).toEqual({ status: 400, body: { errors: [{ message, extensions: { code: 'BAD_REQUEST' } }] } });
    await expectAliveAndQuiet();
  });

  it('bad JSON', async () => {
    const answer = await post('{"query": ');
    expect(answer).toEqual({ status: 400, body: { errors: [{ message: 'The request body is not valid JSON.', extensions: { code: 'BAD_REQUEST' } }] } });
    await expectAliveAndQuiet();
  });
});

describe('hostile messages over graphql-ws', () => {
  it('2,000,000 empty objects, then 1,000,000-deep arrays in a subscribe: an error message each, the connection goes on', async () => {
    const ws = await wsConnection();
    try {
      const growth = await peakHeapGrowth(async () => {
        ws.socket.send(subscribeMessage('1', '"query":"{ __typename }","variables":{"v":', Buffer.concat([emptyObjects(2_000_000), Buffer.from('}')])));
        expect(await ws.next()).toEqual({
          id: '1',
          type: 'error',
          payload: [{ message: 'The operation is refused: JSON holds more than 10000 values.', extensions: { code: 'BAD_REQUEST' } }],
        });
      });
      expect(growth).toBeLessThan(HEAP_GROWTH_BOUND);
      ws.socket.send(subscribeMessage('2', '"query":"{ __typename }","variables":{"v":', Buffer.concat([nestedArrays(1_000_000), Buffer.from('}')])));
      expect(await ws.next()).toEqual({
        id: '2',
        type: 'error',
        payload: [{ message: 'The operation is refused: JSON nested deeper than 32 levels.', extensions: { code: 'BAD_REQUEST' } }],
      });
      // The deep document: the parser's refusal, as the operation's errors (not a 4500 close).
      ws.socket.send(JSON.stringify({ id: '3', type: 'subscribe', payload: { query: deepDocument } }));
      const deep = (await ws.next()) as { id: string; type: string; payload: { errors?: Array<{ message: string }> } };
      expect([deep.id, deep.type, deep.payload.errors?.[0]?.message]).toEqual(['3', 'next', expect.stringMatching(/deeper than 128 levels/)]);
      expect(await ws.next()).toEqual({ id: '3', type: 'complete' });
      // Still open: a normal operation answers.
      ws.socket.send(JSON.stringify({ id: '4', type: 'subscribe', payload: { query: '{ __typename }' } }));
      expect(await ws.next()).toMatchObject({ id: '4', type: 'next', payload: { data: { __typename: 'Query' } } });
      expect(await ws.next()).toEqual({ id: '4', type: 'complete' });
    } finally {
      ws.socket.close();
    }
    await expectAliveAndQuiet();
  });

  it('four messages of 3,000,000 empty objects on four connections at once: refused, the heap bounded', async () => {
    const message = subscribeMessage('1', '"query":"{ __typename }","variables":{"v":', Buffer.concat([emptyObjects(3_000_000), Buffer.from('}')]));
    const sockets = await Promise.all([1, 2, 3, 4].map(() => wsConnection()));
    try {
      const growth = await peakHeapGrowth(async () => {
        for (const ws of sockets) ws.socket.send(message);
        const answers = (await Promise.all(sockets.map((ws) => ws.next()))) as Array<{ type: string }>;
        expect(answers.map((a) => a.type)).toEqual(['error', 'error', 'error', 'error']);
      });
      expect(growth).toBeLessThan(HEAP_GROWTH_BOUND);
    } finally {
      for (const ws of sockets) ws.socket.close();
    }
    await expectAliveAndQuiet();
  });

  it('a refused message that is not a subscribe closes the connection with 4400, never 4500', async () => {
    const ws = await wsConnection();
    ws.socket.send(Buffer.concat([Buffer.from('{"type":"ping","payload":'), nestedArrays(100_000), Buffer.from('}')]));
    expect(await ws.closed).toEqual({ code: 4400, reason: 'The operation is refused: JSON nested deeper than 32 levels.' });
    await expectAliveAndQuiet();
  });
});
