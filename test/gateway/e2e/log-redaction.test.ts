/**
 * No log line, at any level, holds a secret, and every log is a JSON line. The real process
 * (`main.ts`, as `npm start` runs it) with `LOG_LEVEL=trace`, a distinctive caller token created on the emulator, a configured
 * `LAYER_SECRET` and API key, through a scenario that logs a lot: company queries over HTTP and
 * graphql-ws, a risk order watched over graphql-ws until the upstream callback completes it, a forged
 * callback, a malformed credential, an unknown token and a cost-limit error. Everything the process
 * writes (stdout and stderr) is captured and searched for the secrets and any fragment of them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { MemoryLogWriter } from '@graphql-hive/gateway-runtime';
import { JsonLineWriter, log, logLevelOfEnv, logTo, routeConsole, setLogLevel } from '../../../platform/log.ts';
import { CF } from '../../support/risk.ts';
import { startTestStack } from '../../support/stack.ts';
import { createGatewayLogger, parseLogLevel, RedactingLogWriter } from '../../../gateway/logger.ts';
import { formatRedacted, redactConsole, redactText, redactValue, registerSecrets, REDACTED } from '../../../platform/redact.ts';
import { withSafety as safety } from '../../support/safety.ts';
import { emulatorControl } from '../../../services/processes.ts';
import { stopProcess } from '../../support/process.ts';

const hex = (n: number): string => randomBytes(n).toString('hex');
const CALLER_TOKEN = `tok${hex(20)}`;
const UNKNOWN_TOKEN = `unk${hex(20)}`;
const MALFORMED_SECRET = `bas${hex(12)}`;
const LAYER_SECRET = `lay${hex(20)}`;
const API_KEY = `key${hex(20)}`;
const ACCOUNT_KEY = `acc${hex(20)}`;
const SECRETS = { CALLER_TOKEN, UNKNOWN_TOKEN, MALFORMED_SECRET, LAYER_SECRET, API_KEY, ACCOUNT_KEY };
const SAFETY_MS = 20_000;

let proc: ChildProcess;
let out = '';
let graphqlUrl = '';
let wsUrl = '';
let emulatorUrl = '';
const clients: Client[] = [];

beforeAll(async () => {
  proc = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
    cwd: new URL('../../..', import.meta.url),
    env: {
      ...process.env,
      PORT: '0',
      OPENAPI_ENV: 'emulator',
      OPENAPI_TOKEN: '',
      OPENAPI_EMAIL: 'someone@example.com',
      OPENAPI_APIKEY: API_KEY,
      // Callers' own tokens pay (the scenario's), not a token the layer mints with the account.
      OPENAPI_MANAGED_TOKEN: 'off',
      LAYER_SECRET,
      OPENAPI_ACCOUNT_API_KEY: ACCOUNT_KEY,
      LOG_LEVEL: 'trace',
      NO_COLOR: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stderr!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  await new Promise<void>((resolve, reject) => {
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const gql = /GraphiQL and GraphQL:\s+(\S+)/.exec(out);
      const ws = /WebSocket \(graphql-ws\):\s+(\S+)/.exec(out);
      const emu = /embedded emulator at (\S+?),/.exec(out);
      if (gql && ws && emu) {
        [graphqlUrl, wsUrl, emulatorUrl] = [gql[1], ws[1], emu[1]];
        resolve();
      }
    });
    proc.on('exit', (code) => reject(new Error(`exited with ${code} before it was ready:\n${out}`)));
  });
}, 120_000);

afterAll(async () => {
  for (const c of clients) await c.dispose();
  await stopProcess(proc);
});

async function gql(
  query: string,
  variables: Record<string, unknown> = {},
  authorization?: string,
  headers: Record<string, string> = {},
): Promise<{ data?: Record<string, unknown> | null; errors?: Array<{ message: string; extensions?: { code?: string } }> }> {
  const res = await request(graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}), ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.body.json()) as { data?: Record<string, unknown> | null; errors?: Array<{ message: string; extensions?: { code?: string } }> };
}

const emulator = (method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> => emulatorControl(emulatorUrl, method, path, body);

/** A safety limit on a wait an event ends (see `support/safety.ts`). */
const withSafety = <T>(p: Promise<T>, what: string): Promise<T> => safety(p, what, SAFETY_MS);

/** Every substring of `secret` this long counts as a fragment of it. */
const FRAGMENT = 10;
function fragmentsFound(log: string, secret: string): string[] {
  const found = new Set<string>();
  for (let i = 0; i + FRAGMENT <= secret.length; i++) {
    const piece = secret.slice(i, i + FRAGMENT);
    if (log.includes(piece)) found.add(piece);
  }
  return [...found];
}

describe('log redaction (LOG_LEVEL=trace, the real process)', () => {
  it('writes JSON lines at every level but no token, API key or secret, whole or in part', async () => {
    await emulator('POST', 'tokens', { token: CALLER_TOKEN, credit: 1000 });
    const bearer = `Bearer ${CALLER_TOKEN}`;

    // A company query over HTTP (twice: upstream, then cache) and over graphql-ws.
    const company = await gql('{ company(vatCode: "12485671007") { companyName creditScore { score } } }', {}, bearer);
    expect(company.errors, JSON.stringify(company.errors)).toBeUndefined();
    await gql('{ company(vatCode: "12485671007") { companyName } }', {}, bearer);
    const client = createClient({ url: wsUrl, webSocketImpl: WebSocket, connectionParams: { authorization: bearer }, retryAttempts: 0, lazy: true });
    clients.push(client);
    const wsQuery = client.iterate({ query: '{ company(vatCode: "03456783053") { companyName } }' });
    expect((await withSafety(wsQuery.next(), 'graphql-ws query')).value).toMatchObject({ data: { company: {} } });

    // A risk order watched over graphql-ws; the upstream callback completes it.
    const order = await gql(`mutation { orderPatrimonialReport(input: { name: "MARIO", surname: "ROSSI", taxCode: "${CF}" }) { id } }`, {}, bearer);
    expect(order.errors, JSON.stringify(order.errors)).toBeUndefined();
    const id = (order.data!.orderPatrimonialReport as { id: string }).id;
    const updates = client.iterate<{ riskRequestUpdated: { state: string } }>({ query: 'subscription($id: ID!) { riskRequestUpdated(id: $id) { state } }', variables: { id } });
    const first = await withSafety(updates.next(), 'first state');
    expect(first.done ? null : first.value.data?.riskRequestUpdated.state).toBe('PROCESSING');
    await emulator('POST', 'risk/advance', { id });
    let state = '';
    while (state !== 'COMPLETE') {
      const next = await withSafety(updates.next(), 'completion');
      if (next.done) break;
      state = next.value.data?.riskRequestUpdated.state ?? '';
    }
    expect(state).toBe('COMPLETE');
    await updates.return?.();

    // Errors: a forged callback, a malformed credential, a token the upstream refuses, a bad input.
    const forged = await request(`${graphqlUrl.replace(/\/graphql$/, '')}/callbacks/risk/${hex(8)}.${Math.floor(Date.now() / 1000) + 600}.${hex(16)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: bearer },
      body: JSON.stringify({ data: { id, state: 'completed' } }),
    });
    await forged.body.text();
    expect(forged.statusCode).toBe(403);
    const malformed = await gql('{ company(vatCode: "12485671007") { companyName } }', {}, `Basic ${MALFORMED_SECRET}`);
    expect(malformed.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const unknown = await gql('{ company(vatCode: "12485671007") { companyName } }', {}, `Bearer ${UNKNOWN_TOKEN}`);
    expect(unknown.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const bad = await gql('{ company(vatCode: "not-a-vat") { companyName } }', {}, bearer);
    expect(bad.errors?.length).toBeGreaterThan(0);
    // The operator's key, forwarded to the account subgraph (the runtime's debug lines show the
    // headers of each subgraph request).
    const account = await gql('{ account { __typename } }', {}, bearer, { 'x-openapi-account-key': ACCOUNT_KEY });
    expect(account.errors, JSON.stringify(account.errors)).toBeUndefined();
    await client.dispose();

    // Stop it (it drains and exits; stdout and stderr are pipes, written synchronously) and read
    // everything up to the close of its output.
    const closed = once(proc, 'close');
    proc.kill('SIGTERM');
    await withSafety(closed, 'exit');

    // LOG_REDACTION_DUMP=<file> keeps the captured log for a look.
    if (process.env.LOG_REDACTION_DUMP) writeFileSync(process.env.LOG_REDACTION_DUMP, out);
    // Every line is a JSON log but the documented plain ones (README): the banner (where the
    // process listens) and the signal's; the runtime logs every subgraph request at debug.
    const lines = out.split('\n').filter((l) => l.trim() !== '');
    const PLAIN = [/^openapi-supergraph ready$/, /^ {2}GraphiQL and GraphQL: /, /^ {2}WebSocket \(graphql-ws\): /, /^ {2}upstream: /, /^SIGTERM: shutting down$/];
    const plain = lines.filter((l) => !l.startsWith('{'));
    expect(plain.filter((l) => !PLAIN.some((p) => p.test(l)))).toEqual([]);
    const logs = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: string; time: string; msg?: string });
    for (const l of logs) {
      expect(['trace', 'debug', 'info', 'warn', 'error']).toContain(l.level);
      expect(Number.isNaN(Date.parse(l.time))).toBe(false);
    }
    expect(logs.filter((l) => l.level === 'debug' || l.level === 'trace').length, 'debug logging is on').toBeGreaterThan(20);
    expect(logs.some((l) => l.msg?.includes('[useFetchDebug]'))).toBe(true);
    // The account subgraph's request was logged with its headers, the key among them (redacted).
    expect(lines.some((l) => l.includes('x-openapi-account-key') && l.includes(REDACTED))).toBe(true);
    for (const [name, secret] of Object.entries(SECRETS)) {
      const lines = out.split('\n').filter((l) => fragmentsFound(l, secret).length > 0);
      expect(
        lines.map((l) => l.slice(0, 400)),
        `${name} in the log`,
      ).toEqual([]);
    }
  });
});

describe('the redaction', () => {
  it('redacts the operator key header and *Password fields', () => {
    expect(redactText('{"signaturePassword":"s3cr3t-pw","user":"me"}')).toBe(`{"signaturePassword":"${REDACTED}","user":"me"}`);
    expect(redactText('x-openapi-account-key: "k-abcdef123456"')).toBe(`x-openapi-account-key: "${REDACTED}"`);
    expect(redactText('x-openapi-account-key=k-abcdef123456&b=1')).toBe(`x-openapi-account-key=${REDACTED}&b=1`);
    expect(redactValue({ headers: { 'x-openapi-account-key': 'k-abcdef123456' }, pair: ['X-Openapi-Account-Key', 'k-abcdef123456'], signature_password: 'pw-123456' })).toEqual({
      headers: { 'x-openapi-account-key': REDACTED },
      pair: ['X-Openapi-Account-Key', REDACTED],
      signature_password: REDACTED,
    });
  });

  it('redacts Bearer and Basic values, keeps prose and placeholders', () => {
    expect(redactText('authorization: Bearer abc.def-ghi_123')).toBe(`authorization: Bearer ${REDACTED}`);
    expect(redactText('sent Basic dXNlcjpwYXNz= to it')).toBe(`sent Basic ${REDACTED} to it`);
    expect(redactText('the Basic scheme is not accepted; send `Authorization: Bearer <token>`')).toBe('the Basic scheme is not accepted; send `Authorization: Bearer <token>`');
    expect(redactText('connection params `{ "authorization": "Bearer <token>" }`')).toBe('connection params `{ "authorization": "Bearer <token>" }`');
  });

  it('redacts credential fields in JSON, escaped JSON, logfmt and query strings', () => {
    expect(redactText('{"password":"hunter22","user":"me"}')).toBe(`{"password":"${REDACTED}","user":"me"}`);
    expect(redactText('body: "{\\"apiKey\\":\\"k-123456\\",\\"x\\":1}"')).toBe(`body: "{\\"apiKey\\":\\"${REDACTED}\\",\\"x\\":1}"`);
    expect(redactText("{'x-api-key': 'abcdef'}")).toBe(`{'x-api-key': '${REDACTED}'}`);
    expect(redactText('GET /x?token=abc123&y=1 access_token=zzz')).toBe(`GET /x?token=${REDACTED}&y=1 access_token=${REDACTED}`);
    expect(redactText('"tokens": 3, "fileToken": "ft-1"')).toBe(`"tokens": 3, "fileToken": "${REDACTED}"`);
  });

  it('redacts the capability part of signed callback and file URLs', () => {
    expect(redactText('POST http://gw/callbacks/risk/k1.1700000000.c2lnbmF0dXJl failed')).toBe(`POST http://gw/callbacks/risk/${REDACTED} failed`);
    expect(redactText('"url": "http://gw/files/risk/abc.def"')).toBe(`"url": "http://gw/files/risk/${REDACTED}"`);
  });

  it('redacts registered literal secrets wherever they appear', () => {
    registerSecrets(['literal-secret-0123456789', '', undefined, 'short']);
    expect(redactText('key=literal-secret-0123456789; x')).not.toContain('literal-secret');
    expect(redactText('prefixliteral-secret-0123456789suffix')).toBe(`prefix${REDACTED}suffix`);
    expect(redactText('short stays')).toBe('short stays');
  });

  it('redacts credential-like fields of logged objects, header pairs and tuples, errors, cycles', () => {
    const cyclic: Record<string, unknown> = { name: 'c' };
    cyclic.self = cyclic;
    const err = Object.assign(new Error('failed with Bearer e-1234567'), { headers: { Authorization: 'Bearer e-1234567' } });
    const out = redactValue({
      headers: { authorization: 'Bearer abc', 'X-Api-Key': 'k', accept: 'json' },
      connectionParams: { authorization: 'Bearer abc', headers: { token: 't' } },
      password: 'p',
      serviceToken: 'st',
      hasToken: true,
      pairs: [
        { name: 'Authorization', value: 'abc' },
        { name: 'Accept', value: 'json' },
      ],
      tuples: [
        ['authorization', 'abc'],
        ['accept', 'json'],
      ],
      err,
      cyclic,
    });
    const text = JSON.stringify(out);
    expect(text).not.toMatch(/Bearer abc|"k"|"t"|"p"|"st"|e-1234567|"abc"/);
    expect(out).toMatchObject({
      headers: { authorization: REDACTED, 'X-Api-Key': REDACTED, accept: 'json' },
      hasToken: true,
      pairs: [
        { name: 'Authorization', value: REDACTED },
        { name: 'Accept', value: 'json' },
      ],
      tuples: [
        ['authorization', REDACTED],
        ['accept', 'json'],
      ],
      err: { name: 'Error', message: `failed with Bearer ${REDACTED}` },
      cyclic: { name: 'c', self: '[Circular]' },
    });
  });

  it('redacts console lines, formatted as Node formats them', () => {
    const lines: string[] = [];
    const fake = {
      log: (s: string) => lines.push(s),
      info: (s: string) => lines.push(s),
      warn: (s: string) => lines.push(s),
      error: (s: string) => lines.push(s),
      debug: (s: string) => lines.push(s),
    } as unknown as Console;
    redactConsole(fake);
    redactConsole(fake); // idempotent
    fake.error('[subgraph] unexpected error', Object.assign(new Error('boom'), { request: { headers: { authorization: 'Bearer leak-123456' } } }));
    fake.warn('relay to %s', 'http://gw/files/risk/tok.en');
    expect(lines).toHaveLength(2);
    expect(lines.join('\n')).not.toMatch(/leak-123456|tok\.en/);
    expect(lines[0]).toContain('boom');
    expect(formatRedacted('a', { token: 'x' })).toBe(`a { token: '${REDACTED}' }`);
  });

  it('redacts what the Hive logger writes, at every level', () => {
    const memory = new MemoryLogWriter();
    const log = createGatewayLogger({ level: 'trace', secrets: ['configured-secret-42'], writer: memory });
    log.trace({ headers: { authorization: 'Bearer trace-token' } }, 'trace');
    log.debug({ connectionParams: { authorization: 'Bearer debug-token' } }, 'connecting');
    log.info('using configured-secret-42 now');
    log.error({ error: new Error('upstream said Bearer error-token') }, 'failed');
    expect(memory.logs).toHaveLength(4);
    expect(JSON.stringify(memory.logs)).not.toMatch(/trace-token|debug-token|error-token|configured-secret-42/);
    const writer = new RedactingLogWriter(memory);
    void writer.write('warn', { password: 'pw' }, 'token=abc');
    expect(memory.logs[4]).toEqual({ level: 'warn', attrs: { password: REDACTED }, msg: `token=${REDACTED}` });
  });

  it('reads the level from configuration', () => {
    expect(parseLogLevel('debug')).toBe('debug');
    expect(parseLogLevel(' INFO ')).toBe('info');
    expect(parseLogLevel('off')).toBe(false);
    expect(parseLogLevel(undefined)).toBe('error');
    expect(parseLogLevel('verbose')).toBe('error');
    expect(logLevelOfEnv({ LOG_LEVEL: 'warn', GATEWAY_LOG_LEVEL: 'debug' })).toBe('warn');
    expect(logLevelOfEnv({ GATEWAY_LOG_LEVEL: 'debug' })).toBe('debug');
    expect(logLevelOfEnv({})).toBe('info');
    expect(logLevelOfEnv({ NODE_ENV: 'test' })).toBe('error');
  });

  it('writes JSON lines, secrets redacted at trace level, console lines included', () => {
    const written: string[] = [];
    const stream = { write: (chunk: string) => written.push(chunk) } as unknown as NodeJS.WritableStream;
    logTo(new JsonLineWriter(stream));
    setLogLevel('trace');
    try {
      log.trace({ headers: { authorization: 'Bearer trace-secret-1' }, url: 'http://gw/files/risk/abc.def' }, 'fetching');
      log.debug({ connectionParams: { password: 'pw-secret-2' } }, 'connected with token=abc123');
      const fake = { log: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined } as unknown as Console;
      routeConsole(fake);
      fake.warn('[poller] failed with Bearer console-secret-3', { apiKey: 'k-secret-4' });
      const lines = written.map((w) => JSON.parse(w) as Record<string, unknown>);
      expect(written.every((w) => w.endsWith('\n') && w.indexOf('\n') === w.length - 1)).toBe(true);
      expect(lines.map((l) => l.level)).toEqual(['trace', 'debug', 'warn']);
      expect(lines[0]).toMatchObject({ msg: 'fetching', headers: { authorization: REDACTED }, url: `http://gw/files/risk/${REDACTED}` });
      expect(lines[1]).toMatchObject({ msg: `connected with token=${REDACTED}`, connectionParams: { password: REDACTED } });
      expect(written.join('')).not.toMatch(/trace-secret-1|pw-secret-2|console-secret-3|k-secret-4|abc\.def|abc123/);
    } finally {
      logTo(null);
      setLogLevel(logLevelOfEnv(process.env));
    }
  });

  it('takes LOG_LEVEL from the environment given to startStack', async () => {
    const memory = new MemoryLogWriter();
    logTo(memory);
    const t = await startTestStack({ LOG_LEVEL: 'debug', LAYER_SECRET: LAYER_SECRET });
    try {
      const { token } = (await t.control('tokens', { credit: 10 })) as { token: string };
      const res = await t.gql('{ company(vatCode: "12485671007") { companyName } }', undefined, { authorization: `Bearer ${token}` });
      expect(res.errors).toBeUndefined();
      const lines = memory.logs.map((l) => JSON.stringify(l));
      expect(memory.logs.some((l) => l.level === 'debug' && l.msg?.includes('[useFetchDebug]'))).toBe(true);
      expect(lines.filter((l) => l.includes(token) || l.includes(LAYER_SECRET))).toEqual([]);
    } finally {
      logTo(null);
      setLogLevel(logLevelOfEnv(process.env));
      await t.close();
    }
  });
});
