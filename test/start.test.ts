/**
 * `npm start` as a user runs it: one process, emulator + subgraphs + gateway, prints the GraphiQL
 * URL, answers, and exits cleanly on SIGTERM and SIGINT.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';

const started: ChildProcess[] = [];
afterEach(() => {
  for (const p of started.splice(0)) if (p.exitCode === null) p.kill('SIGKILL');
});

async function start(): Promise<{ proc: ChildProcess; url: string }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
    cwd: new URL('..', import.meta.url),
    env: { ...process.env, PORT: '0', OPENAPI_ENV: 'emulator', OPENAPI_TOKEN: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(proc);
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /GraphiQL and GraphQL:\s+(\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    proc.on('exit', (code) => reject(new Error(`exited with ${code} before it was ready:\n${out}`)));
  });
  return { proc, url };
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
});
