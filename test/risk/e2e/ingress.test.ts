/**
 * The risk callback ingress and what the layer keeps about a request, through the gateway:
 * a genuine callback URL is only a trigger (the record applied and relayed is re-read upstream, not
 * the posted one); a creation whose answer is lost keeps its reservation so its first callback binds
 * it; KYC requests are of the family their record names; the caller's callback survives reads; the
 * signature is checked before the body is read; a delivery whose handling failed can be delivered
 * again. The poller is off here, so only callbacks move requests.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';
import { request } from 'undici';
import { CALLBACK_PURPOSE, handleCallback } from '../../../subgraphs/risk/callbacks.ts';
import { MemoryRequestStore } from '../../../subgraphs/risk/store.ts';
import { MemoryReplayGuard, Signer } from '../../../platform/signing.ts';
import { CF, CF2 } from '../../support/risk.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { withSafety as safety } from '../../support/safety.ts';
import { waitFor } from '../../support/wait.ts';
import type { Obj } from '../../../contract/values.ts';

const LAYER_SECRET = 'risk-ingress-test-secret-0123456789';
const ENV = {
  LAYER_SECRET,
  // The receiver below listens on 127.0.0.1.
  RISK_RELAY_ALLOW_PRIVATE: '1',
  // Poller off: only callbacks move requests.
  RISK_POLL_MAX_CALLS_PER_MIN: '0',
  // Short enough for the "answer lost" scenario, long enough for the emulator's other answers.
  OPENAPI_TIMEOUT_MS: '1500',
};
const SAFETY_MS = 15_000;

let t: TestStack;
let receiver: Receiver;
const clients: Client[] = [];

interface Delivery {
  headers: IncomingMessage['headers'];
  body: Obj;
}

interface Receiver {
  url: string;
  deliveries: Delivery[];
  /** Resolves with the first delivery (from `from` on) that `match` accepts. */
  waitFor(match: (d: Delivery) => boolean, from?: number): Promise<Delivery>;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      deliveries.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Obj });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    deliveries,
    waitFor: (match, from = 0) => waitFor(() => deliveries.slice(from).find(match), 'a matching delivery at the receiver', { deadline: SAFETY_MS, every: 20 }),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function gql<T = Obj>(query: string, variables: Obj = {}): Promise<T> {
  const res = await t.gql<T>(query, variables);
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data as T;
}

/** A safety limit on a wait an event ends (see `support/safety.ts`). */
const withSafety = <T>(p: Promise<T>, what: string): Promise<T> => safety(p, what, SAFETY_MS);

/** The first event of a `riskRequestUpdated` subscription (the layer's current knowledge). */
async function firstEvent(variables: Obj): Promise<FormattedExecutionResult<Obj, unknown>> {
  const client = createClient({ url: t.stack.gateway.wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
  clients.push(client);
  const it = client.iterate<Obj>({ query: `subscription($id: ID!, $family: RiskFamily) { riskRequestUpdated(id: $id, family: $family) { id family state rawState } }`, variables });
  const r = await withSafety(it.next(), 'subscription event');
  await it.return?.();
  expect(r.done).toBe(false);
  return r.value;
}

async function emulatorRecord(path: string): Promise<Obj> {
  const res = await request(`${t.stack.emulatorUrl}/risk${path}`, { headers: { authorization: 'Bearer emulator-token' } });
  return ((await res.body.json()) as { data: Obj }).data;
}

async function post(url: string, body: string | Buffer, contentType = 'application/json'): Promise<number> {
  const res = await request(url, { method: 'POST', headers: { 'content-type': contentType }, body });
  await res.body.dump();
  return res.statusCode;
}

const envelope = (data: Obj): string => JSON.stringify({ data, success: true, message: '', error: null });

const ORDER_REPORT = `mutation($input: PersonSubjectInput!) { orderPersonReport(input: $input) { id state } }`;
const ORDER_PATRIMONIAL = `mutation($input: PersonSubjectInput!) { orderPatrimonialReport(level: STANDARD, input: $input) { id state } }`;

beforeAll(async () => {
  t = await startTestStack(ENV);
  receiver = await startReceiver();
  await t.control('risk/timing', { completeAfterMs: 0 });
});

afterAll(async () => {
  await Promise.allSettled(clients.map(async (c) => c.dispose()));
  await t?.close();
  await receiver?.close();
});

describe('a genuine callback URL is only a trigger', () => {
  it('a forged record posted to it changes nothing and is never relayed; the genuine delivery completes the request', async () => {
    const callback = { url: receiver.url, method: 'JSON' };
    const { orderPersonReport: order } = await gql<{ orderPersonReport: Obj }>(ORDER_REPORT, { input: { name: 'Anna', surname: 'Bianchi', taxCode: CF2, callback } });
    const id = String(order.id);
    const rec = await emulatorRecord(`/IT-report-persona/${id}`);
    const genuine = String((rec.callback as Obj).url);
    const from = receiver.deliveries.length;

    const forged = { ...rec, state: 'complete', lastUpdateTimestamp: Number(rec.lastUpdateTimestamp ?? 0) + 100, forged: 'yes' };
    // The URL is genuine, so the delivery is taken as a trigger: the layer re-reads the request.
    expect(await post(genuine, envelope(forged))).toBe(200);

    // The layer still knows it as PROCESSING, as the upstream says.
    const now = await firstEvent({ id });
    expect(now.errors).toBeUndefined();
    expect((now.data as Obj).riskRequestUpdated).toMatchObject({ id, state: 'PROCESSING', rawState: 'processing' });

    // The genuine completion arrives and is relayed: the upstream's record, never the forged one.
    await t.control('risk/advance', { id });
    const done = await receiver.waitFor((d) => (d.body.data as Obj).id === id && (d.body.data as Obj).state === 'complete', from);
    expect((done.body.data as Obj).forged).toBeUndefined();
    for (const d of receiver.deliveries.slice(from)) expect((d.body.data as Obj).forged).toBeUndefined();
    expect((await firstEvent({ id })).data).toMatchObject({ riskRequestUpdated: { state: 'COMPLETE' } });
  });

  it('refuses an id the upstream does not know for the token, with 403', async () => {
    const { orderPersonReport: order } = await gql<{ orderPersonReport: Obj }>(ORDER_REPORT, { input: { name: 'Mario', surname: 'Rossi', taxCode: CF } });
    const genuine = String(((await emulatorRecord(`/IT-report-persona/${String(order.id)}`)).callback as Obj).url);
    // A bound key refuses another id outright; an unknown id on an unbound key is refused by the re-read.
    expect(await post(genuine, envelope({ id: 'e'.repeat(24), state: 'complete' }))).toBe(403);
    expect(await post(genuine, 'not json')).toBe(400);
  });
});

describe('a creation whose answer is lost', () => {
  it('keeps its reservation: the first callback binds it, and the request is tracked and relayed', async () => {
    const before = ((await t.control('risk/pending')) as { pending: string[] }).pending;
    const credit = async (): Promise<number> => {
      const res = await request(`${t.stack.emulatorUrl}/_emulator/tokens/emulator-token`);
      return ((await res.body.json()) as { credit: number }).credit;
    };
    const creditBefore = await credit();
    // The emulator creates (and charges) the request, but answers after the client gave up.
    await t.control('faults', { area: 'risk', pathPrefix: '/IT-patrimoniale-persona', delayAfterMs: 4000, count: 1 });
    const res = await t.gql(ORDER_PATRIMONIAL, { input: { name: 'Mario', surname: 'Rossi', taxCode: CF, callback: { url: receiver.url } } });
    expect(res.errors?.[0]?.extensions?.code).toBe('UPSTREAM_TIMEOUT');
    const created = ((await t.control('risk/pending')) as { pending: string[] }).pending.filter((p) => !before.includes(p));
    expect(created).toHaveLength(1);
    const id = created[0];
    // … and paid for.
    expect(await credit()).toBeLessThan(creditBefore);

    const from = receiver.deliveries.length;
    await t.control('risk/advance', { id });
    // The upstream's delivery was accepted (not refused as an unknown key) …
    const log = await request(`${t.stack.emulatorUrl}/_emulator/callbacks`);
    const deliveries = ((await log.body.json()) as Array<{ url: string; status: number | null }>).filter((d) => d.url.includes('/callbacks/risk/'));
    expect(deliveries.at(-1)?.status).toBe(200);
    // … relayed to the caller …
    const relayed = await receiver.waitFor((d) => (d.body.data as Obj).id === id, from);
    expect(relayed.body.data).toMatchObject({ id, state: 'complete', callback: { url: receiver.url } });
    // … and the layer knows the request without being told its family.
    expect((await firstEvent({ id })).data).toMatchObject({ riskRequestUpdated: { id, family: 'PATRIMONIAL', state: 'COMPLETE' } });
  });
});

describe('KYC families', () => {
  it('a KYC request is of the family its record names; asked as another, it is not found (and stays of its own)', async () => {
    // Created outside the layer, so the layer learns of it only by reading.
    const created = await request(`${t.stack.emulatorUrl}/risk/WW-kyc-full`, {
      method: 'POST',
      headers: { authorization: 'Bearer emulator-token', 'content-type': 'application/json' },
      body: JSON.stringify({ query: { name: 'Giulia Verdi' } }),
    });
    const id = String(((await created.body.json()) as { data: Obj }).data.id);
    const Q = `query($id: ID!, $f: RiskFamily!) { riskRequest(family: $f, id: $id) { id family } }`;
    expect((await gql<{ riskRequest: Obj | null }>(Q, { id, f: 'KYC_PEP' })).riskRequest).toBeNull();
    expect((await gql<{ riskRequest: Obj | null }>(Q, { id, f: 'KYC_SANCTION_LIST' })).riskRequest).toBeNull();
    expect((await gql<{ riskRequest: Obj | null }>(Q, { id, f: 'KYC_FULL' })).riskRequest).toEqual({ id, family: 'KYC_FULL' });
    const sub = await firstEvent({ id, family: 'KYC_PEP' });
    expect(sub.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await firstEvent({ id })).data).toMatchObject({ riskRequestUpdated: { family: 'KYC_FULL' } });
  });
});

describe("the caller's callback", () => {
  it('is still shown after the request is read', async () => {
    const callback = { url: receiver.url, method: 'POST', field: 'payload' };
    const { orderPatrimonialReport: order } = await gql<{ orderPatrimonialReport: Obj }>(ORDER_PATRIMONIAL, {
      input: { name: 'Anna', surname: 'Bianchi', taxCode: CF2, callback },
    });
    const Q = `query($id: ID!) { riskRequest(family: PATRIMONIAL, id: $id) { id callback { url method field } } }`;
    for (let i = 0; i < 2; i++) {
      const { riskRequest } = await gql<{ riskRequest: Obj }>(Q, { id: order.id });
      expect(riskRequest.callback).toEqual({ url: receiver.url, method: 'POST', field: 'payload' });
    }
  });
});

describe('ingress order', () => {
  it('checks the signature before reading the body: an unsigned large body gets 403, not 413', async () => {
    const forgedKey = new Signer('another-secret-0123456789abcdef').sign(CALLBACK_PURPOSE, 'some-key', 60);
    const big = Buffer.alloc(3 * 1024 * 1024, 0x20);
    // The gateway refuses any body past its limit (413) before forwarding; the subgraph itself reads
    // nothing of an unsigned delivery, whatever its size.
    const direct = `${t.stack.subgraphs.url}/risk`;
    expect(await post(`${direct}/callbacks/${forgedKey}`, big)).toBe(403);
    expect(await post(`${direct}/callbacks/not-a-token`, big)).toBe(403);
    expect(await post(`${t.url}/callbacks/risk/${forgedKey}`, big)).toBe(413);
  });

  it('answers 403 (not 500) to a malformed percent-escape in a callback or file token', async () => {
    const direct = `${t.stack.subgraphs.url}/risk`;
    expect(await post(`${direct}/callbacks/%E0%A4%A`, '{}')).toBe(403);
    const file = await request(`${direct}/files/%E0%A4%A/report.pdf`);
    await file.body.dump();
    expect(file.statusCode).toBe(403);
  });
});

describe('replay guard', () => {
  it('notes a delivery only once it was applied: a delivery whose handling failed is accepted when sent again', async () => {
    const id = 'a'.repeat(24);
    const signer = new Signer('replay-test-secret-0123456789abcdef');
    const store = new MemoryRequestStore();
    const replay = new MemoryReplayGuard();
    await store.reserve({ key: 'key1', tenant: 'T', family: 'PATRIMONIAL', id, relay: null, expiresAt: Math.floor(Date.now() / 1000) + 60, token: 'tok' });
    const upstreamRecord = { id, state: 'complete', lastUpdateTimestamp: 5 };
    const applied: Obj[] = [];
    let failNext = true;
    const server = createServer((req, res) => {
      const rest = (req.url ?? '').replace(/^\/callbacks\//, '');
      handleCallback(req, res, rest, {
        signer,
        replay,
        store,
        reread: async () => upstreamRecord,
        accept: async (_r, record) => {
          if (failNext) {
            failNext = false;
            throw new Error('status store unavailable');
          }
          applied.push(record);
        },
      }).catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callbacks/${signer.sign(CALLBACK_PURPOSE, 'key1', 60)}`;
      // The posted body only names the request; the record applied is the one read upstream.
      const body = envelope({ id, state: 'complete', lastUpdateTimestamp: 5, forged: 'yes' });
      expect(await post(url, body)).toBe(500);
      expect(await post(url, body)).toBe(200);
      expect(applied).toEqual([upstreamRecord]);
      expect(await post(url, body)).toBe(403);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
