/**
 * The precheck guard's caches: a token's scopes are kept for a bounded number of tokens (least
 * recently used dropped: a flood of distinct tokens cannot grow memory), and a wallet reading is
 * trusted for a minute (the calls sent meanwhile taken off it), on an injected clock.
 */
import { expect, it } from 'vitest';
import { AccountGuard } from '../../../subgraphs/upstream/account-guard.ts';
import { CostMeter } from '../../../subgraphs/upstream/cost.ts';
import type { Endpoint } from '../../../subgraphs/upstream/endpoint.ts';
import type { CallContext, CallOptions, Upstream } from '../../../subgraphs/upstream/upstream.ts';

function fakeUpstream(credit: number) {
  const calls: string[] = [];
  const upstream = {
    config: { accountCredentials: { email: 'a@b.cd', apikey: 'k' } },
    async call(_ctx: CallContext, ep: Endpoint, opts: CallOptions = {}) {
      calls.push(`${ep.method} ${ep.path.replace('{token}', opts.params?.token ?? '')}`);
      if (ep.path === '/wallet') return { credit };
      return { scopes: ['*:test.cap.openapi.it/*'] };
    },
  } as unknown as Upstream;
  return { upstream, calls };
}

const CAP: Endpoint = { area: 'cap', method: 'GET', path: '/cap/{cap}' };
const ctx = (token: string): CallContext => ({ auth: { token, tenant: `t-${token}` }, meter: new CostMeter() });

it("a token's scopes are kept for at most maxTokens tokens, least recently used dropped first", async () => {
  const { upstream, calls } = fakeUpstream(10);
  const guard = new AccountGuard(upstream, 'emulator', { maxTokens: 2, now: () => 0 });
  for (const t of ['tok-a', 'tok-b', 'tok-a', 'tok-c', 'tok-a', 'tok-b']) await guard.checkScope(ctx(t), CAP, '/cap/00136');
  // a, b read; a kept (recently used); c evicts b; a still kept; b read again.
  expect(calls).toEqual(['GET /tokens/tok-a', 'GET /tokens/tok-b', 'GET /tokens/tok-c', 'GET /tokens/tok-b']);
});

it('a wallet reading is trusted for a minute, the calls sent meanwhile taken off it', async () => {
  let now = 0;
  const { upstream, calls } = fakeUpstream(0.1);
  const guard = new AccountGuard(upstream, 'emulator', { now: () => now });
  await guard.checkWallet(ctx('tok-a'), CAP, '/cap/00136', 0.04);
  now += 59_000;
  await guard.checkWallet(ctx('tok-a'), CAP, '/cap/00137', 0.04);
  // €0.02 left on the reading: the third is refused without a new reading.
  await expect(guard.checkWallet(ctx('tok-a'), CAP, '/cap/00138', 0.04)).rejects.toMatchObject({ status: 402 });
  expect(calls.filter((c) => c === 'GET /wallet')).toHaveLength(1);
  now += 2_000;
  await guard.checkWallet(ctx('tok-a'), CAP, '/cap/00138', 0.04);
  expect(calls.filter((c) => c === 'GET /wallet')).toHaveLength(2);
});
