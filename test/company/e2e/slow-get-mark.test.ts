/**
 * A slow dataset's GET buys it (`COMPANY_SLOW_PURCHASE=get`): marked sent, durably, before it
 * leaves (in the shared pending store: every replica and a restarted process see it), cleared on a
 * definite answer, kept when none came; while it stands no process buys the dataset again, and the
 * error says the outcome is unknown.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { UpstreamClient } from '../../../subgraphs/upstream/client.ts';
import { MemoryPendingStore } from '../../../subgraphs/upstream/cache.ts';
import { loadUpstreamConfig } from '../../../subgraphs/upstream/config.ts';
import { CostMeter } from '../../../subgraphs/upstream/cost.ts';
import type { Endpoint } from '../../../subgraphs/upstream/endpoint.ts';
import { UpstreamError } from '../../../subgraphs/upstream/errors.ts';
import { tenantOf } from '../../../subgraphs/upstream/tenant.ts';
import { upstreamToGraphQL } from '../../../subgraphs/runtime/errors.ts';
import { MemorySettlementStore } from '../../../subgraphs/upstream/settlement.ts';
import { json, startStub, type Stub } from '../../support/stub.ts';

const AML: Endpoint = { area: 'company', method: 'GET', path: '/IT-aml/{id}', slow: true, ttl: 60 };
const ok = (data: unknown) => ({ data, success: true, message: '', error: null });
const ctxFor = () => ({ auth: { token: 'tok-a', tenant: tenantOf('tok-a') }, meter: new CostMeter() });

let stub: Stub | undefined;
const clients: UpstreamClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await stub?.close();
  stub = undefined;
});

/** The pending store, with what it holds in view. */
class SeenPending extends MemoryPendingStore {
  readonly marks = new Map<string, string>();
  override async set(key: string, id: string, ttlMs: number): Promise<void> {
    this.marks.set(key, id);
    await super.set(key, id, ttlMs);
  }
  override async delete(key: string): Promise<void> {
    this.marks.delete(key);
    await super.delete(key);
  }
  override async deleteIf(key: string, id: string): Promise<boolean> {
    const done = await super.deleteIf(key, id);
    if (done) this.marks.delete(key);
    return done;
  }
}

/** Two replicas sharing the pending store (as on Redis or the embedded database). */
/**
 * A client paying with the account's own token, whose settler reads the wallet at `url` (the stub)
 * on the clock `now`, and settles a call 100 ms after the layer gave up on it.
 */
function settlingClient(url: string, pending: SeenPending, now: () => number): UpstreamClient {
  const client = new UpstreamClient(
    loadUpstreamConfig({
      OPENAPI_ENV: 'sandbox',
      OPENAPI_COMPANY_URL: url,
      OPENAPI_OAUTH_URL: url,
      OPENAPI_EMAIL: 'owner@example.com',
      OPENAPI_APIKEY: 'key-0123456789',
      OPENAPI_TOKEN: 'tok-a',
      OPENAPI_RETRY_BASE_MS: '5',
      OPENAPI_SETTLE_LATE_MS: '100',
    }),
    { pending, settlements: new MemorySettlementStore(now), clock: now },
  );
  clients.push(client);
  return client;
}

function replicas(url: string, pending: SeenPending): [UpstreamClient, UpstreamClient] {
  const make = () => new UpstreamClient(loadUpstreamConfig({ OPENAPI_ENV: 'sandbox', OPENAPI_COMPANY_URL: url, OPENAPI_RETRY_BASE_MS: '5' }), { pending });
  const pair: [UpstreamClient, UpstreamClient] = [make(), make()];
  clients.push(...pair);
  return pair;
}

describe('the sent mark of a slow GET', () => {
  it('is set before the GET leaves, kept after no answer, and stops every replica from buying again', async () => {
    const pending = new SeenPending(100);
    const marks: string[][] = [];
    stub = await startStub(async (req, res) => {
      // What the shared store held while the vendor had the request.
      marks.push([...pending.marks.values()]);
      if (req.path.startsWith('/IT-aml/')) res.socket?.destroy();
      else json(res, 404, { success: false, message: 'no', error: 1, data: null });
    });
    const [a, b] = replicas(stub.url, pending);
    const first = await a.call(ctxFor(), AML, { params: { id: '1' } }).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(UpstreamError);
    expect((first as UpstreamError).atRisk).toBe(0.9);
    expect(upstreamToGraphQL(first as UpstreamError).extensions).toMatchObject({ outcome: 'unknown', atRisk: 0.9 });
    const ctx = ctxFor();
    const second = await b.call(ctx, AML, { params: { id: '1' } }).catch((e: unknown) => e);
    expect(second).toMatchObject({ graphqlCode: 'UPSTREAM_PENDING', markedUnknown: true });
    expect(upstreamToGraphQL(second as UpstreamError).extensions).toMatchObject({ code: 'UPSTREAM_PENDING', outcome: 'unknown' });
    expect(ctx.meter.summary()).toMatchObject({ upstreamCalls: 0, euro: 0, atRisk: 0 });
    expect(stub.requests.filter((r) => r.path.startsWith('/IT-aml/'))).toHaveLength(1);
    // The mark names the unknown call it was kept as.
    expect(marks[0]).toEqual([expect.stringMatching(/^\?sent [0-9a-f-]{36}$/)]);
    expect([...pending.marks.values()]).toEqual(marks[0]);
  });

  it('is cleared on a definite answer: a refusal is not at risk, and the next call may buy', async () => {
    const pending = new SeenPending(100);
    let answered = 0;
    stub = await startStub((_req, res) => {
      answered++;
      if (answered === 1) json(res, 406, { success: false, message: 'cf/piva not valid', error: 215, data: null });
      else json(res, 200, ok({ rae: 'x' }));
    });
    const [a, b] = replicas(stub.url, pending);
    await expect(a.call(ctxFor(), AML, { params: { id: '1' } })).rejects.toMatchObject({ graphqlCode: 'UPSTREAM_REJECTED', atRisk: 0 });
    expect(pending.marks.size).toBe(0);
    const ctx = ctxFor();
    expect(await b.call(ctx, AML, { params: { id: '1' } })).toEqual({ rae: 'x' });
    expect(ctx.meter.summary().euro).toBe(0.9);
  });

  it('goes when the purchase is settled as never charged: the next read buys', async () => {
    const pending = new SeenPending(100);
    let now = Date.now();
    let amlCalls = 0;
    stub = await startStub((req, res) => {
      if (req.path.startsWith('/wallet/transactions')) return json(res, 200, { data: [] });
      amlCalls++;
      if (amlCalls === 1) res.socket?.destroy();
      else json(res, 200, ok({ rae: 'x' }));
    });
    const client = settlingClient(stub.url, pending, () => now);
    await expect(client.call(ctxFor(), AML, { params: { id: '1' } })).rejects.toMatchObject({ atRisk: 0.9 });
    await expect(client.call(ctxFor(), AML, { params: { id: '1' } })).rejects.toMatchObject({ markedUnknown: true });
    now += 60_000;
    // The wallet shows no charge: never carried out.
    expect(await client.settler!.settleNow()).toMatchObject({ notCharged: 1, notChargedEuro: 0.9, open: 0 });
    expect(pending.marks.size).toBe(0);
    const ctx = ctxFor();
    expect(await client.call(ctx, AML, { params: { id: '1' } })).toEqual({ rae: 'x' });
    expect(ctx.meter.summary().euro).toBe(0.9);
  });

  it('is cleared by the settled purchase only while it is still that purchase’s mark: a newer one stays', async () => {
    const pending = new SeenPending(100);
    let now = Date.now();
    stub = await startStub((req, res) => {
      if (req.path.startsWith('/wallet/transactions')) return json(res, 200, { data: [] });
      res.socket?.destroy();
    });
    const client = settlingClient(stub.url, pending, () => now);
    await expect(client.call(ctxFor(), AML, { params: { id: '1' } })).rejects.toMatchObject({ atRisk: 0.9 });
    const [key] = [...pending.marks.keys()];
    // Meanwhile (the first mark gone past its time) a newer purchase, unanswered too, marked it again.
    await pending.set(key, '?sent 00000000-0000-4000-8000-000000000002', 600_000);
    now += 60_000;
    expect(await client.settler!.settleNow()).toMatchObject({ notCharged: 1 });
    expect([...pending.marks.values()]).toEqual(['?sent 00000000-0000-4000-8000-000000000002']);
    await expect(client.call(ctxFor(), AML, { params: { id: '1' } })).rejects.toMatchObject({ markedUnknown: true });
  });
});
