/**
 * No request ends the process, end to end through the real stack (emulator, subgraphs and gateway
 * in this one process, as under `npm start`): HEAD on a signed download, clients that go away mid
 * request body or mid answer on every route, a 10 MB body posted to a genuine callback URL, and a
 * replayed callback. Each scenario checks that nothing fired `uncaughtException` or
 * `unhandledRejection`, that no stack trace was logged for what is only a client going away, and
 * that the process still answers `/healthz`, GraphQL and a download afterwards. Last, the gateway's
 * subgraph route alone, against a subgraph that is unreachable or dies mid answer.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { request } from 'undici';
import { subgraphRoute } from '../../../gateway/proxy.ts';
import { registeredVats } from '../../../emulator/company/index.ts';
import { bureauInput, CF, CF2 } from '../../support/risk.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { waitFor } from '../../support/wait.ts';
import { logLevelOfEnv, logTo, setLogLevel } from '../../../platform/log.ts';
import type { LogLevel } from '@graphql-hive/logger';
import type { Obj } from '../../../contract/values.ts';

// Poller off: only the test's own requests reach the emulator, so its call log counts them.
const ENV = { LAYER_SECRET: 'robustness-test-secret-0123456789', RISK_POLL_MAX_CALLS_PER_MIN: '0' };
const SAFETY_MS = 15_000;

let t: TestStack;
const unhandled: Array<{ kind: string; error: unknown }> = [];
const onUncaught = (error: unknown): void => void unhandled.push({ kind: 'uncaughtException', error });
const onRejection = (error: unknown): void => void unhandled.push({ kind: 'unhandledRejection', error });
let errorSpy: MockInstance<typeof console.error>;
let warnSpy: MockInstance<typeof console.warn>;
/** The layer's own log lines (JSON logger) at warn and error, captured for the current test. */
const logged: Array<{ level: LogLevel; line: string }> = [];

beforeAll(async () => {
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onRejection);
  // The layer logs through its JSON logger, not console: capture its warnings and errors too.
  setLogLevel('warn');
  logTo({ write: (level, attrs, msg) => void logged.push({ level, line: `${msg ?? ''} ${JSON.stringify(attrs ?? {})}` }) });
  t = await startTestStack(ENV);
  // Requests complete only when the test says so.
  await t.control('risk/timing', { completeAfterMs: 0 });
});

afterAll(async () => {
  await t?.close();
  logTo(null);
  setLogLevel(logLevelOfEnv(process.env));
  process.off('uncaughtException', onUncaught);
  process.off('unhandledRejection', onRejection);
});

beforeEach(() => {
  unhandled.length = 0;
  logged.length = 0;
  errorSpy = vi.spyOn(console, 'error');
  warnSpy = vi.spyOn(console, 'warn');
});

afterEach(async () => {
  vi.restoreAllMocks();
  await t.control('latency', { area: 'risk', ms: 0 });
  await t.control('latency', { area: 'company', ms: 0 });
});

// ---------------------------------------------------------------------------------------------
// Helpers

/** Waits on an observable condition (the kit's `waitFor`, with this file's safety limit). */
const until = async (check: () => Promise<boolean>, what: string): Promise<void> => void (await waitFor(check, what, { deadline: SAFETY_MS, every: 20 }));

const text = (a: unknown): string => (a instanceof Error ? (a.stack ?? a.message) : typeof a === 'string' ? a : (JSON.stringify(a) ?? String(a)));

/** Log lines (error or warn) that carry a stack trace or the generic "request failed". */
function traces(spy: MockInstance<(...args: unknown[]) => void>): string[] {
  return spy.mock.calls
    .filter((args) => args.some((a) => a instanceof Error || (typeof a === 'string' && (/\n\s+at /.test(a) || /request failed/.test(a)))))
    .map((args) => args.map(text).join(' '));
}

/** Nothing unhandled, nothing on console.error, no trace anywhere, at most short warnings. */
function expectClean(): void {
  expect(unhandled.map((u) => `${u.kind}: ${text(u.error)}`)).toEqual([]);
  expect(errorSpy.mock.calls.map((args) => args.map(text).join(' '))).toEqual([]);
  expect(traces(warnSpy as MockInstance<(...args: unknown[]) => void>)).toEqual([]);
  for (const args of warnSpy.mock.calls) expect(args.map(text).join(' ')).not.toContain('\n');
  // The same of the layer's logger: no error line, no warning with a stack trace or "request failed".
  expect(logged.filter((l) => l.level === 'error').map((l) => l.line)).toEqual([]);
  expect(logged.filter((l) => /\\n\s+at |\n\s+at |request failed/.test(l.line)).map((l) => l.line)).toEqual([]);
}

async function gql<T = Obj>(query: string, variables: Obj = {}): Promise<T> {
  const res = await t.gql<T>(query, variables);
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data as T;
}

/** The process still answers: `/healthz`, a GraphQL query, and (given one) a download. */
async function expectAlive(fileUrl?: string): Promise<void> {
  const health = await request(`${t.url}/healthz`);
  expect(health.statusCode).toBe(200);
  expect(await health.body.json()).toEqual({ ok: true });
  expect(await gql<{ __typename: string }>('{ __typename }')).toEqual({ __typename: 'Query' });
  if (fileUrl) {
    const doc = await request(fileUrl);
    const bytes = Buffer.from(await doc.body.arrayBuffer());
    expect(doc.statusCode).toBe(200);
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('%PDF');
  }
}

/**
 * Lets whatever the server still does for an abandoned request finish: the gateway and the
 * subgraph each answer two more requests on the same routes (a GraphQL query reaches a subgraph).
 */
async function settle(): Promise<void> {
  for (let i = 0; i < 2; i++) {
    await (await request(`${t.url}/healthz`)).body.dump();
    await t.gql('{ __typename }');
  }
}

const ORDER_BUREAU = `mutation($input: PersonBureauInput!) { orderPersonBureauReport(input: $input) { id delegationForm { url } } }`;
const ORDER_REPORT = `mutation($input: PersonSubjectInput!) { orderPersonReport(input: $input) { id state } }`;

/** A signed `/files/risk/…` URL: the delegation form of a new person bureau request. */
async function signedFileUrl(): Promise<string> {
  const { orderPersonBureauReport: order } = await gql<{ orderPersonBureauReport: { delegationForm: { url: string } } }>(ORDER_BUREAU, { input: bureauInput() });
  expect(order.delegationForm.url).toMatch(new RegExp(`^${t.url}/files/risk/`));
  return order.delegationForm.url;
}

async function emulatorRecord(path: string): Promise<Obj> {
  const res = await request(`${t.stack.emulatorUrl}/risk${path}`, { headers: { authorization: 'Bearer emulator-token' } });
  return ((await res.body.json()) as { data: Obj }).data;
}

/** A new person report and its genuine callback URL (as the upstream holds it). */
async function genuineCallback(taxCode = CF2): Promise<{ id: string; url: string }> {
  const { orderPersonReport: order } = await gql<{ orderPersonReport: { id: string } }>(ORDER_REPORT, { input: { name: 'Anna', surname: 'Bianchi', taxCode } });
  const rec = await emulatorRecord(`/IT-report-persona/${order.id}`);
  const url = String((rec.callback as Obj).url);
  expect(url).toMatch(new RegExp(`^${t.url}/callbacks/risk/[A-Za-z0-9_-]+\\.\\d+\\.[A-Za-z0-9_-]{43}$`));
  return { id: order.id, url };
}

const envelope = (data: Obj): string => JSON.stringify({ data, success: true, message: '', error: null });

/** Where a client goes away. */
type AbortPoint =
  /** after the headers and part of the declared body were sent */
  | 'request-body'
  /** after the whole request was sent, before any answer */
  | 'request-sent'
  /** once the answer's headers arrived */
  | 'response-headers'
  /** once the answer's first body bytes arrived */
  | 'response-data';

interface Disconnect {
  method?: string;
  headers?: Record<string, string>;
  /** The body; with 'request-body', only this much is sent of a declared length 100 times larger. */
  body?: string;
  at: AbortPoint;
}

/** Sends a request on its own socket and destroys the socket at `at`; resolves once it closed. */
function disconnect(url: string, d: Disconnect): Promise<{ status: number | null }> {
  return new Promise((resolve) => {
    const u = new URL(url);
    const body = d.body ?? '';
    const headers: Record<string, string> = { ...(d.headers ?? {}) };
    if (d.at === 'request-body') headers['content-length'] = String(Math.max(1, body.length) * 100);
    else if (body) headers['content-length'] = String(Buffer.byteLength(body));
    const req = httpRequest({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: d.method ?? 'GET', headers, agent: false });
    let status: number | null = null;
    req.on('error', () => undefined); // our own destroy
    req.on('close', () => resolve({ status }));
    req.on('response', (res) => {
      status = res.statusCode ?? null;
      res.on('error', () => undefined);
      if (d.at === 'response-headers') req.destroy();
      else if (d.at === 'response-data') res.once('data', () => req.destroy());
      else res.resume();
    });
    if (d.at === 'request-body') req.write(body || ' ', () => req.destroy());
    else req.end(body, () => (d.at === 'request-sent' ? req.destroy() : undefined));
  });
}

interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * POSTs `size` bytes the way a plain sender does (node:http, 64 KiB writes honouring back-pressure),
 * with a declared length or chunked; stops writing once an answer arrives, and resolves with it.
 * Rejects when the connection fails before any answer (what a sender sees as "retry later").
 */
function postLarge(url: string, size: number, mode: 'content-length' | 'chunked'): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (mode === 'content-length') headers['content-length'] = String(size);
    const req = httpRequest({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers, agent: false });
    let answered = false;
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', () => undefined);
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const pump = (): void => {
      while (!answered && sent < size) {
        const n = Math.min(chunk.length, size - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          req.once('drain', pump);
          return;
        }
      }
      if (!answered) req.end();
    };
    pump();
  });
}

/**
 * A sender that keeps writing after the answer came: a body of 3 MB, declared and sent whole (the
 * answer and the server's end of the connection arrive after about 2 MB), then `next`, a request
 * pipelined after it, then its own end. Resolves with the status lines it read and what went wrong
 * on the way: nothing when the server closes in stages (RFC 9112 §9.6), EPIPE or ECONNRESET when it
 * closed at once and the kernel reset the connection.
 */
function writeOnAfterAnswer(url: string, next = ''): Promise<{ statusLines: string[]; errors: string[] }> {
  const u = new URL(url);
  const size = 3 * 1024 * 1024;
  return new Promise((resolve) => {
    // Half-open: the server's end does not end this side, which goes on writing.
    const socket = connect({ port: Number(u.port), host: u.hostname, allowHalfOpen: true });
    const errors: string[] = [];
    let answer = '';
    socket.on('error', (err: NodeJS.ErrnoException) => errors.push(err.code ?? err.message));
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.once('close', () => resolve({ statusLines: answer.match(/^HTTP\/1\.1 .+$/gm)?.map((l) => l.trim()) ?? [], errors }));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const write = (data: Buffer | string): Promise<void> => new Promise((done) => socket.write(data, () => setImmediate(done)));
    socket.once('connect', () => {
      void (async () => {
        await write(`POST ${u.pathname} HTTP/1.1\r\nhost: ${u.host}\r\ncontent-type: application/json\r\ncontent-length: ${size}\r\n\r\n`);
        for (let sent = 0; sent < size && !socket.destroyed; sent += chunk.length) await write(chunk);
        if (next && !socket.destroyed) await write(next);
        socket.end();
      })();
    });
  });
}

// ---------------------------------------------------------------------------------------------

describe('signed downloads', () => {
  it('HEAD on a signed download URL answers the headers only, with no upstream call, and the process lives on', async () => {
    const url = await signedFileUrl();
    await t.clearCalls();
    const head = await request(url, { method: 'HEAD' });
    const rest = await head.body.text();
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-type']).toMatch(/^application\/pdf/);
    expect(head.headers['content-disposition']).toMatch(/^attachment; filename=".+\.pdf"$/);
    expect(head.headers['cache-control']).toBe('private, no-store');
    expect(rest).toBe('');
    await settle();
    expectClean();
    // Answered from the grant: a HEAD costs nothing upstream.
    expect(await t.calls('risk')).toEqual([]);
    await expectAlive(url);
    expectClean();
  });

  it('a download whose client goes away (while upstream is slow, at the headers, at the first bytes) ends quietly', async () => {
    const url = await signedFileUrl();
    await t.clearCalls();
    // The client leaves while the subgraph waits for the (slow) upstream document …
    await t.control('latency', { area: 'risk', ms: 400 });
    await disconnect(url, { at: 'request-sent' });
    await until(async () => (await t.calls('risk')).length === 1, 'the abandoned download reaching upstream');
    await t.control('latency', { area: 'risk', ms: 0 });
    // … once the answer's headers arrived, and once its first bytes did.
    expect((await disconnect(url, { at: 'response-headers' })).status).toBe(200);
    expect((await disconnect(url, { at: 'response-data' })).status).toBe(200);
    await settle();
    await expectAlive(url);
    expectClean();
  });
});

describe('clients that go away', () => {
  /** One client going away, and the server done with it: at most one short log line comes of it. */
  async function oneAbort(what: string, run: () => Promise<unknown>): Promise<void> {
    const before = warnSpy.mock.calls.length + errorSpy.mock.calls.length + logged.length;
    await run();
    await settle();
    const lines = [...warnSpy.mock.calls, ...errorSpy.mock.calls].length + logged.length - before;
    expect(lines, `log lines for ${what}`).toBeLessThanOrEqual(1);
  }

  it('mid request body and mid answer, on /graphql, /callbacks/risk/…, /files/risk/… and /healthz: no crash, no trace', async () => {
    const fileUrl = await signedFileUrl();
    const callback = await genuineCallback();
    const record = await emulatorRecord(`/IT-report-persona/${callback.id}`);
    const json = { 'content-type': 'application/json' };

    // /healthz
    await oneAbort('/healthz mid body', () => disconnect(`${t.url}/healthz`, { method: 'POST', headers: json, body: '{"a":', at: 'request-body' }));
    await oneAbort('/healthz before the answer', () => disconnect(`${t.url}/healthz`, { at: 'request-sent' }));
    await oneAbort('/healthz at the answer', () => disconnect(`${t.url}/healthz`, { at: 'response-headers' }));

    // /graphql: mid body; a query whose upstream is slow; a subscription stream left after its first event.
    await oneAbort('/graphql mid body', () => disconnect(`${t.url}/graphql`, { method: 'POST', headers: json, body: '{"query":"{ __typ', at: 'request-body' }));
    await oneAbort('/graphql while upstream is slow', async () => {
      await t.control('latency', { area: 'company', ms: 300 });
      await t.clearCalls();
      const query = JSON.stringify({ query: '{ company(vatCode: "12485671007") { companyName } }' });
      await disconnect(`${t.url}/graphql`, { method: 'POST', headers: json, body: query, at: 'request-sent' });
      await until(async () => (await t.calls('company')).length >= 1, 'the abandoned query reaching upstream');
      await t.control('latency', { area: 'company', ms: 0 });
    });
    await oneAbort('/graphql subscription stream', async () => {
      const subscription = JSON.stringify({ query: `subscription($id: ID!) { riskRequestUpdated(id: $id) { id state } }`, variables: { id: callback.id } });
      const sse = await disconnect(`${t.url}/graphql`, { method: 'POST', headers: { ...json, accept: 'text/event-stream' }, body: subscription, at: 'response-data' });
      expect(sse.status).toBe(200);
    });

    // /callbacks/risk/<genuine>: mid body; and while the layer re-reads the request upstream (slow).
    await oneAbort('/callbacks mid body', () => disconnect(callback.url, { method: 'POST', headers: json, body: envelope(record).slice(0, 40), at: 'request-body' }));
    await oneAbort('/callbacks during the re-read', async () => {
      await t.control('latency', { area: 'risk', ms: 300 });
      await t.clearCalls();
      await disconnect(callback.url, { method: 'POST', headers: json, body: envelope(record), at: 'request-sent' });
      await until(async () => (await t.calls('risk')).length >= 1, 'the abandoned callback re-read reaching upstream');
      await t.control('latency', { area: 'risk', ms: 0 });
    });

    // /files/risk/<signed>: a body that never completes (refused by method, yet forwarded), and mid answer.
    await oneAbort('/files mid body', () => disconnect(fileUrl, { method: 'POST', headers: json, body: '{"x":1', at: 'request-body' }));
    await oneAbort('/files at the first bytes', () => disconnect(fileUrl, { at: 'response-data' }));

    await expectAlive(fileUrl);
    expectClean();
  });
});

describe('oversized callback bodies', () => {
  it('10 MB posted to a genuine callback URL gets 413 and connection: close from the gateway, with no upstream call', async () => {
    const callback = await genuineCallback(CF);
    await t.clearCalls();
    const size = 10 * 1024 * 1024;
    for (const mode of ['content-length', 'chunked'] as const) {
      const answer = await postLarge(callback.url, size, mode);
      expect(answer.status, mode).toBe(413);
      expect(answer.headers.connection, mode).toBe('close');
      expect(JSON.parse(answer.body), mode).toEqual({ error: 'body too large' });
    }
    // The subgraph keeps its own limit (a deployment may expose it directly): 413 there too, not a reset.
    const direct = callback.url.replace(`${t.url}/callbacks/risk/`, `${t.stack.subgraphs.url}/risk/callbacks/`);
    for (const mode of ['content-length', 'chunked'] as const) {
      const answer = await postLarge(direct, size, mode);
      expect(answer.status, `subgraph, ${mode}`).toBe(413);
      expect(answer.headers.connection, `subgraph, ${mode}`).toBe('close');
    }
    // A sender still writing after the answer reads it, and no reset: the connection closes in stages.
    for (const url of [callback.url, direct]) expect(await writeOnAfterAnswer(url), url).toEqual({ statusLines: ['HTTP/1.1 413 Payload Too Large'], errors: [] });
    // A request pipelined after that body is not run: no answer, and no upstream call it would have made.
    const [fresh] = registeredVats(7_300_000, 1);
    const pipelined = `GET /graphql?query=${encodeURIComponent(`{ company(vatCode: "${fresh}") { companyName } }`)} HTTP/1.1\r\nhost: ${new URL(t.url).host}\r\naccept: application/json\r\nx-graphql-csrf: 1\r\n\r\n`;
    await t.clearCalls();
    expect(await writeOnAfterAnswer(callback.url, pipelined)).toEqual({ statusLines: ['HTTP/1.1 413 Payload Too Large'], errors: [] });
    expect(await t.calls()).toEqual([]);
    expect(await t.calls('risk')).toEqual([]);
    await settle();
    await expectAlive();
    // The URL still works for a genuine delivery of a normal size.
    const ok = await request(callback.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: envelope(await emulatorRecord(`/IT-report-persona/${callback.id}`)),
    });
    await ok.body.dump();
    expect(ok.statusCode).toBe(200);
    expectClean();
  });
});

describe('replayed callbacks', () => {
  it('a replay of an accepted delivery is refused (403) with no upstream call', async () => {
    // A person bureau request moves to in_progress on the signed delegation, and the upstream
    // delivers that change to the layer's callback URL (which stays open: the request is not final).
    const { orderPersonBureauReport: order } = await gql<{ orderPersonBureauReport: { id: string; delegationForm: { url: string } } }>(ORDER_BUREAU, { input: bureauInput() });
    const signed = Buffer.from(await (await request(order.delegationForm.url)).body.arrayBuffer()).toString('base64');
    await request(`${t.stack.emulatorUrl}/_emulator/callbacks`, { method: 'DELETE' }).then((r) => r.body.dump());
    await gql(`mutation($id: ID!, $f: String!) { uploadSignedDelegation(id: $id, signedDelegationFile: $f) { id state } }`, { id: order.id, f: signed });
    const accepted = await emulatorRecord(`/IT-bureau-persona/${order.id}`);
    expect(accepted.state).toBe('in_progress');
    const url = String((accepted.callback as Obj).url);
    expect(url).toMatch(new RegExp(`^${t.url}/callbacks/risk/`));
    // The upstream's own delivery of that change was accepted.
    await until(async () => {
      const log = await request(`${t.stack.emulatorUrl}/_emulator/callbacks`);
      const deliveries = (await log.body.json()) as Array<{ url: string; status: number | null }>;
      return deliveries.some((d) => d.url === url && d.status === 200);
    }, 'the in_progress callback accepted');

    const before = (await t.calls('risk')).length;
    const asJson = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: envelope(accepted) });
    await asJson.body.dump();
    expect(asJson.statusCode).toBe(403);
    const asForm = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ data: envelope(accepted) }).toString(),
    });
    await asForm.body.dump();
    expect(asForm.statusCode).toBe(403);
    // Refused before any re-read: not one upstream call.
    expect((await t.calls('risk')).slice(before)).toEqual([]);
    expect(logged.filter((l) => l.level === 'warn').map((l) => l.line)).toContainEqual(expect.stringMatching(/^callback refused .*"area":"risk".*"reason":"replay"/));
    expectClean();
  });
});

describe('the subgraph side failing', () => {
  const servers: Server[] = [];
  const listen = async (server: Server): Promise<string> => {
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  afterAll(async () => {
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  });

  it("the gateway's route answers 502 when the subgraph is unreachable, and cuts the answer short when it dies midway", async () => {
    // A subgraph that sends the headers and a few bytes of a document, then dies.
    const dying = await listen(
      createServer((req, res) => {
        req.resume();
        res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': '1000' });
        res.write('%PDF-1.4\n', () => res.socket?.destroy());
      }),
    );
    // A port nothing listens on any more.
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const gone = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((r) => closed.close(() => r()));

    // The gateway's own route, mounted on a bare server (no catch-all around it).
    const toDying = subgraphRoute('files', { risk: dying });
    const toGone = subgraphRoute('files', { risk: gone });
    const gateway = await listen(
      createServer((req, res) => {
        const path = (req.url ?? '/').split('?')[0];
        void (path.includes('/gone/') ? toGone(req, res, path.replace('/gone/', '/')) : toDying(req, res, path));
      }),
    );

    const unreachable = await request(`${gateway}/files/risk/gone/token/doc.pdf`);
    expect(unreachable.statusCode).toBe(502);
    expect(await unreachable.body.json()).toEqual({ error: 'bad gateway' });

    const cut = await request(`${gateway}/files/risk/token/doc.pdf`);
    expect(cut.statusCode).toBe(200);
    await expect(cut.body.arrayBuffer()).rejects.toThrow();

    const warned = (): string[] => logged.filter((l) => l.level === 'warn').map((l) => l.line);
    await until(async () => warned().length >= 2, 'the two failures logged');
    const lines = warned();
    expect(lines).toEqual([
      expect.stringMatching(/^\[gateway\] \/files\/risk: subgraph unreachable/),
      expect.stringMatching(/^\[gateway\] \/files\/risk: answer cut short by the subgraph/),
    ]);
    expectClean();
  });
});
