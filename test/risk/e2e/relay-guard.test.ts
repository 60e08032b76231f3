/**
 * The caller's own callback cannot make the layer call its loopback, private network or metadata
 * endpoints (SSRF): IP literals are refused with BAD_USER_INPUT before any paid call, host names
 * are resolved and refused when relaying, and the connection-time dispatcher refuses both. The
 * stack here runs without `RISK_RELAY_ALLOW_PRIVATE`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryLogWriter } from '@graphql-hive/logger';
import { logLevelOfEnv, logTo, setLogLevel } from '../../../platform/log.ts';
import { request } from 'undici';
import { relay } from '../../../subgraphs/risk/callbacks.ts';
import { guardedRelayAgent, isPrivateAddress, privateLiteralHost, relayRefusal } from '../../../subgraphs/runtime/tracking/relay-guard.ts';
import { relayTarget } from '../../../subgraphs/risk/validate.ts';
import { CF } from '../../support/risk.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import type { Obj } from '../../../contract/values.ts';
import { waitFor } from '../../support/wait.ts';

let t: TestStack;
let hits = 0;
let server: Server;
let port = 0;

beforeAll(async () => {
  t = await startTestStack({ LAYER_SECRET: 'risk-relay-guard-secret-0123456789', RISK_POLL_MAX_CALLS_PER_MIN: '0' });
  await t.control('risk/timing', { completeAfterMs: 0 });
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hits++;
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await t?.close();
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
});

const ORDER = `mutation($input: PersonSubjectInput!) { orderPatrimonialReport(level: STANDARD, input: $input) { id state } }`;

describe('through the gateway', () => {
  it('refuses callbacks to private IP literals with BAD_USER_INPUT, before any upstream call', async () => {
    await t.clearCalls();
    const urls = [
      `http://127.0.0.1:${port}/hook`,
      'http://127.1/hook',
      'http://0x7f000001/hook',
      'http://[::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://10.1.2.3/hook',
      'http://172.16.0.9/hook',
      'http://192.168.1.1/hook',
      'http://169.254.169.254/latest/meta-data/',
      'http://100.64.0.1/',
      'http://0.0.0.0/',
      'http://[fd00::1]/hook',
      'http://[fe80::1]/hook',
      'http://[::]/hook',
    ];
    for (const url of urls) {
      const res = await t.gql(ORDER, { input: { name: 'Mario', surname: 'Rossi', taxCode: CF, callback: { url } } });
      expect(res.errors?.[0]?.extensions, url).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.callback.url' });
    }
    expect(await t.calls('risk')).toEqual([]);
    expect(hits).toBe(0);
  });

  it('accepts a host name, and refuses the relay when it resolves to a private address', async () => {
    const memory = new MemoryLogWriter();
    logTo(memory);
    setLogLevel('warn');
    try {
      const res = await t.gql<{ orderPatrimonialReport: Obj }>(ORDER, {
        input: { name: 'Mario', surname: 'Rossi', taxCode: CF, callback: { url: `http://localhost:${port}/hook` } },
      });
      expect(res.errors).toBeUndefined();
      const id = String(res.data?.orderPatrimonialReport.id);
      await t.control('risk/advance', { id });
      const refusedLog = (): boolean => memory.logs.some((l) => (l.attrs as { id?: string } | undefined)?.id === id && l.msg?.includes('refused') === true);
      await waitFor(() => refusedLog() || hits > 0, 'a relay or its refusal', { every: 20 });
      expect(hits).toBe(0);
      expect(refusedLog()).toBe(true);
    } finally {
      logTo(null);
      setLogLevel(logLevelOfEnv(process.env));
    }
  });
});

describe('the guard', () => {
  it('knows private, loopback, link-local and unique-local addresses, v4 and v6', () => {
    for (const a of [
      '127.0.0.1',
      '10.0.0.1',
      '172.31.255.255',
      '192.168.0.1',
      '169.254.169.254',
      '100.100.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '::1',
      '::',
      'fd12:3456::1',
      'fc00::1',
      'fe80::1',
      '[fe80::1%eth0]',
      '::ffff:10.0.0.1',
      'ff02::1',
    ]) {
      expect(isPrivateAddress(a), a).toBe(true);
    }
    for (const a of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8', 'example.com']) {
      expect(isPrivateAddress(a), a).toBe(false);
    }
    expect(privateLiteralHost('https://[::1]:8443/x')).toBe('::1');
    expect(privateLiteralHost('https://hooks.example.com/x')).toBeNull();
  });

  it('validation refuses private literals unless RISK_RELAY_ALLOW_PRIVATE', () => {
    expect(() => relayTarget({ url: 'http://127.0.0.1:9/hook' }, 'cb')).toThrow(/loopback, private or link-local/);
    expect(relayTarget({ url: 'http://127.0.0.1:9/hook' }, 'cb', { allowPrivate: true })?.url).toBe('http://127.0.0.1:9/hook');
    expect(relayTarget({ url: 'https://hooks.example.com/x' }, 'cb')?.url).toBe('https://hooks.example.com/x');
  });

  it('resolves host names before relaying', async () => {
    expect(await relayRefusal(`http://localhost:${port}/`)).toMatch(/private address/);
    expect(await relayRefusal('http://93.184.216.34/')).toBeNull();
    const before = hits;
    let why = '';
    expect(await relay({ url: `http://localhost:${port}/`, method: 'JSON', field: 'data', headers: {}, retry: 0 }, { data: {} }, { onRefused: (w) => (why = w) })).toBeNull();
    expect(why).toMatch(/private address/);
    expect(hits).toBe(before);
    expect(await relay({ url: `http://localhost:${port}/`, method: 'JSON', field: 'data', headers: {}, retry: 0 }, { data: {} }, { allowPrivate: true })).toBe(200);
    expect(hits).toBe(before + 1);
  });

  it('the connection-time dispatcher refuses private names and literals', async () => {
    const agent = guardedRelayAgent();
    try {
      await expect(request(`http://localhost:${port}/`, { method: 'POST', body: '{}', dispatcher: agent })).rejects.toThrow(/private address/);
      await expect(request(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}', dispatcher: agent })).rejects.toThrow(/private address/);
      await expect(request(`http://[::1]:${port}/`, { method: 'POST', body: '{}', dispatcher: agent })).rejects.toThrow(/private address/);
    } finally {
      await agent.close();
    }
  });
});
