/**
 * The emulator's tokens are bounded (`maxTokens`): a caller minting a token per request cannot grow
 * it without end. The least recently used token goes first, with its authorization-area record and
 * the account made for it alone; the built-in token and an account other tokens still name stay.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startEmulator, type RunningEmulator } from '../../../emulator/server.ts';

let emu: RunningEmulator;

beforeAll(async () => {
  emu = await startEmulator({ maxTokens: 3 });
});
afterAll(async () => {
  await emu?.close();
});

async function mint(body: Record<string, unknown> = {}): Promise<{ token: string; owner: string }> {
  const res = await request(`${emu.url}/_emulator/tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ credit: 5, ...body }) });
  return (await res.body.json()) as { token: string; owner: string };
}

async function status(token: string): Promise<number> {
  const res = await request(`${emu.url}/cap/cap/00136`, { headers: { authorization: `Bearer ${token}` } });
  await res.body.dump();
  return res.statusCode;
}

describe('emulator tokens (bounded)', () => {
  it('forgets the least recently used token past maxTokens, and the account made for it alone', async () => {
    const a = await mint();
    const b = await mint();
    const c = await mint();
    expect(await status(a.token)).toBe(200); // a used: b is now the least recently used
    const d = await mint();
    expect(emu.tokens.get(b.token)).toBeUndefined();
    expect(emu.accounts.get(b.owner)).toBeUndefined();
    expect(await status(b.token)).toBe(401);
    for (const t of [a, c, d]) expect(await status(t.token)).toBe(200);
    expect(await status(emu.tokens.defaultToken)).toBe(200);
  });

  it('keeps an account while a token names it, and the built-in token whatever is minted', async () => {
    const owner = 'shared@example.com';
    const first = await mint({ owner });
    const second = await mint({ owner });
    await mint();
    await mint(); // first gone; second still names the account
    expect(emu.tokens.get(first.token)).toBeUndefined();
    expect(emu.accounts.get(owner)).toBeDefined();
    await mint(); // second gone: the account it was made for goes with it
    expect(emu.tokens.get(second.token)).toBeUndefined();
    expect(emu.accounts.get(owner)).toBeUndefined();
    expect(await status(emu.tokens.defaultToken)).toBe(200);
  });
});
