/**
 * `npm start` as a user runs it: one process, emulator + subgraphs + gateway, prints the GraphiQL
 * URL, answers, and exits cleanly on SIGTERM and SIGINT.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { createServer, type AddressInfo } from 'node:net';

const started: ChildProcess[] = [];
afterEach(() => {
  for (const p of started.splice(0)) if (p.exitCode === null) p.kill('SIGKILL');
});

async function start(env: NodeJS.ProcessEnv = {}): Promise<{ proc: ChildProcess; url: string; out: () => string }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
    cwd: new URL('../../..', import.meta.url),
    env: { ...process.env, PORT: '0', OPENAPI_ENV: 'emulator', OPENAPI_TOKEN: '', EMULATOR_PORT: '', EMULATOR_RISK_COMPLETE_AFTER_MS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(proc);
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      // Ready once the whole banner is out (its upstream line names the embedded emulator).
      const m = /GraphiQL and GraphQL:\s+(\S+)[\s\S]*\n\s*upstream: [^\n]*\n/.exec(out);
      if (m) resolve(m[1]);
    });
    proc.on('exit', (code) => reject(new Error(`exited with ${code} before it was ready:\n${out}`)));
  });
  return { proc, url, out: () => out };
}

/** A loopback port free a moment ago. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('npm start', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('serves GraphQL and stops cleanly on %s', async (signal) => {
    const { proc, url } = await start();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/graphql$/);
    const res = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ company(vatCode: "12485671007") { companyName } }' }),
    });
    expect(await res.body.json()).toMatchObject({ data: { company: { companyName: 'OPENAPI S.P.A.' } } });
    const exited = once(proc, 'exit');
    proc.kill(signal);
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
  });

  it('pins the embedded emulator to EMULATOR_PORT, whose risk requests take 30 s (the live-status example)', async () => {
    const port = await freePort();
    const { proc, out } = await start({ EMULATOR_PORT: String(port) });
    expect(out()).toContain(`embedded emulator at http://127.0.0.1:${port},`);
    const res = await request(`http://127.0.0.1:${port}/_emulator/risk/pending`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(await res.body.json()).toEqual({ pending: [], completeAfterMs: 30_000 });
    const exited = once(proc, 'exit');
    proc.kill('SIGTERM');
    expect(((await exited) as [number | null])[0]).toBe(0);
  });
});
