/**
 * The layer's own token never reaches a client nor a log line. With `OPENAPI_PRECHECK=on` the
 * guard reads the token's scopes with `GET /tokens/{token}`: that read is the layer's (never in a
 * client's `extensions.cost`), and any call on a token's own endpoint is shown by its template
 * (`/tokens/{token}`). The real process (`main.ts`, as `npm start` runs it, debug logs), twice: with
 * the managed token the layer mints, and with `OPENAPI_TOKEN`. Every response (data, errors,
 * extensions) and everything the process writes is searched for the token and any fragment of it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { emulatorControl } from '../../../services/processes.ts';
import { shownPath } from '../../../subgraphs/upstream/endpoint.ts';
import { stopProcess } from '../../support/process.ts';

const hex = (n: number): string => randomBytes(n).toString('hex');
const EMAIL = 'emulator@example.com';
const APIKEY = 'emulator-apikey';
const OPERATOR_KEY = 'operator-key-0123456789abcdef';

interface Running {
  proc: ChildProcess;
  out: () => string;
  graphqlUrl: string;
  emulatorUrl: string;
}
let running: Running | null = null;

async function start(env: NodeJS.ProcessEnv): Promise<Running> {
  let out = '';
  const proc = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
    cwd: new URL('../../..', import.meta.url),
    env: {
      ...process.env,
      PORT: '0',
      OPENAPI_ENV: 'emulator',
      OPENAPI_TOKEN: '',
      OPENAPI_EMAIL: EMAIL,
      OPENAPI_APIKEY: APIKEY,
      OPENAPI_PRECHECK: 'on',
      OPENAPI_ACCOUNT_API_KEY: OPERATOR_KEY,
      GATEWAY_LOG_LEVEL: 'debug',
      NO_COLOR: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stderr.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const urls = await new Promise<[string, string]>((resolve, reject) => {
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const gql = /GraphiQL and GraphQL:\s+(\S+)/.exec(out);
      const emu = /embedded emulator at (\S+?),/.exec(out);
      if (gql && emu) resolve([gql[1], emu[1]]);
    });
    proc.on('exit', (code) => reject(new Error(`exited with ${code} before it was ready:\n${out}`)));
  });
  running = { proc, out: () => out, graphqlUrl: urls[0], emulatorUrl: urls[1] };
  return running;
}

afterEach(async () => {
  const proc = running?.proc;
  running = null;
  await stopProcess(proc);
});

async function gql(r: Running, query: string): Promise<string> {
  const res = await request(r.graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-openapi-account-key': OPERATOR_KEY },
    body: JSON.stringify({ query }),
  });
  return res.body.text();
}

/** Every 10-character piece of `secret` found in `text`. */
function fragmentsFound(text: string, secret: string): string[] {
  const found = new Set<string>();
  for (let i = 0; i + 10 <= secret.length; i++) if (text.includes(secret.slice(i, i + 10))) found.add(secret.slice(i, i + 10));
  return [...found];
}

/** Queries that make the guard read the token (scopes, wallet), answer from the cache, fail, and read the account. */
const QUERIES = [
  '{ postalCode(code: "00136") { code } }',
  '{ postalCode(code: "00136") { code } }',
  '{ municipality(istatCode: "058091") { postalCodes } }',
  '{ postalCode(code: "99999") { code } }',
  '{ account { tokens { hint name scopes } errors { scope httpResponseCode } } }',
];

async function scenario(r: Running): Promise<string> {
  let responses = '';
  for (const q of QUERIES) responses += `${await gql(r, q)}\n`;
  return responses;
}

/** The token the layer used, as the emulator saw it (its call log of the authorization area). */
async function tokenSeenByEmulator(r: Running): Promise<string> {
  const calls = (await emulatorControl(r.emulatorUrl, 'GET', 'calls')) as Array<{ area: string; method: string; path: string }>;
  const read = calls.find((c) => c.area === 'oauth' && c.method === 'GET' && c.path.startsWith('/tokens/'));
  expect(read, 'the guard read the token').toBeDefined();
  return decodeURIComponent(read!.path.slice('/tokens/'.length));
}

describe('the layer token never leaves the layer (OPENAPI_PRECHECK=on, the real process)', () => {
  it('managed token: no response and no log line holds it, whole or in part', async () => {
    const r = await start({ OPENAPI_MANAGED_TOKEN: 'on' });
    const responses = await scenario(r);
    expect(responses).toContain('"code":"00136"');
    const token = await tokenSeenByEmulator(r);
    expect(token.length).toBeGreaterThanOrEqual(20);
    expect(fragmentsFound(responses, token)).toEqual([]);
    expect(fragmentsFound(r.out(), token)).toEqual([]);
    // The guard's reads are not the caller's: no call of the authorization area in extensions.cost.
    expect(responses).not.toContain('/tokens/');
  }, 120_000);

  it('OPENAPI_TOKEN: no response and no log line holds it, whole or in part', async () => {
    const value = `svc${hex(20)}`;
    const r = await start({ OPENAPI_TOKEN: value, OPENAPI_MANAGED_TOKEN: 'off' });
    await emulatorControl(r.emulatorUrl, 'POST', 'tokens', { token: value, owner: EMAIL, credit: 10 });
    const responses = await scenario(r);
    expect(responses).toContain('"code":"00136"');
    expect(await tokenSeenByEmulator(r)).toBe(value);
    expect(fragmentsFound(responses, value)).toEqual([]);
    expect(fragmentsFound(r.out(), value)).toEqual([]);
    expect(responses).not.toContain('/tokens/');
  }, 120_000);
});

it('a credential path parameter is shown as its placeholder', () => {
  const ep = { area: 'oauth', method: 'GET', path: '/tokens/{token}', secretParams: ['token'] } as const;
  expect(shownPath(ep, '/tokens/abc123secret')).toBe('/tokens/{token}');
  expect(shownPath({ area: 'oauth', method: 'GET', path: '/a/{id}/{token}', secretParams: ['token'] }, '/a/7/xyz')).toBe('/a/7/{token}');
  expect(shownPath({ area: 'cap', method: 'GET', path: '/cap/{code}' }, '/cap/00136')).toBe('/cap/00136');
  // Not the template's shape: the template, never the value.
  expect(shownPath(ep, '/tokens/a/b')).toBe('/tokens/{token}');
});
