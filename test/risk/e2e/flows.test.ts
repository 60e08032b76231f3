/**
 * The risk area end to end, as a user's app sees it: the real stack (emulator, subgraphs, gateway)
 * on loopback ports, GraphQL over HTTP, live status over graphql-ws and SSE, documents through
 * signed URLs, upstream callbacks through the gateway's ingress, the poller when callbacks are off,
 * tenancy between two tokens, and the cost of credit scores met across a company graph.
 *
 * Completion is driven explicitly (emulator timing 0 = only `advance` completes), so no assertion
 * depends on time; timeouts below are safety limits only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';
import { request } from 'undici';
import { bureauInput, CF, CF2 } from '../../support/risk.ts';
import { Signer } from '../../../platform/signing.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { withSafety as safety } from '../../support/safety.ts';
import type { Obj } from '../../../contract/values.ts';
import { startReceiver, type Receiver } from '../../support/receiver.ts';

// The stack's configuration: a known signing secret (to forge and tamper in tests), relays to the
// loopback receiver allowed (the SSRF guard refuses them otherwise) and a fast poller.
const LAYER_SECRET = 'risk-e2e-test-secret-0123456789';
const ENV = { LAYER_SECRET, RISK_RELAY_ALLOW_PRIVATE: '1', RISK_POLL_INTERVAL_MS: '100', RISK_POLL_LATE_AFTER_MS: '1500', RISK_POLL_MAX_CALLS_PER_MIN: '600' };

type Result = FormattedExecutionResult<Obj, unknown>;

const SAFETY_MS = 20_000;
const TENANT_B = 'risk-e2e-tenant-b-token';

let t: TestStack;
const clients: Client[] = [];

let receiver: Receiver;

/** A safety limit on a wait an event ends (see `support/safety.ts`). */
const withSafety = <T>(p: Promise<T>, what: string): Promise<T> => safety(p, what, SAFETY_MS);

const auth = (token?: string): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {});

async function gql<T = Obj>(query: string, variables: Obj = {}, token?: string): Promise<T> {
  const res = await t.gql<T>(query, variables, auth(token));
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data as T;
}

function wsClient(token?: string): Client {
  const client = createClient({ url: t.stack.gateway.wsUrl, webSocketImpl: WebSocket, connectionParams: auth(token), retryAttempts: 0, lazy: true });
  clients.push(client);
  return client;
}

/** A graphql-ws subscription as an async iterator of results. */
function subscribeWs(query: string, variables: Obj, token?: string): AsyncIterableIterator<Result> {
  return wsClient(token).iterate<Obj>({ query, variables });
}

/** A subscription over SSE (`accept: text/event-stream` on the gateway's /graphql). */
async function* subscribeSse(query: string, variables: Obj, token?: string): AsyncGenerator<Obj> {
  const ctl = new AbortController();
  const res = await fetch(t.stack.gateway.graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...auth(token) },
    body: JSON.stringify({ query, variables }),
    signal: ctl.signal,
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      let sep = buffer.indexOf('\n\n');
      while (sep < 0) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        sep = buffer.indexOf('\n\n');
      }
      const block = buffer.slice(0, sep);
      buffer = buffer.slice(sep + 2);
      const event = /^event: ?(.*)$/m.exec(block)?.[1]?.trim();
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.replace(/^data: ?/, ''))
        .join('\n');
      if (event === 'complete') return;
      if (data) yield JSON.parse(data) as Obj;
    }
  } finally {
    ctl.abort();
  }
}

const STATUS = `id family state rawState done`;
const UPDATED = `subscription($id: ID!, $family: RiskFamily) { riskRequestUpdated(id: $id, family: $family) { ${STATUS} } }`;

/** Reads subscription results until one is in a final state (or the stream ends); returns the states. */
async function statesUntilDone(it: AsyncIterator<Result | Obj>, seen: string[] = []): Promise<string[]> {
  for (;;) {
    const r = await withSafety(it.next(), 'subscription event');
    if (r.done) return seen;
    const value = r.value as Result;
    expect(value.errors, JSON.stringify(value.errors)).toBeUndefined();
    const ev = (value.data as Obj).riskRequestUpdated as Obj;
    seen.push(String(ev.state));
    if (ev.done === true) {
      // The stream ends after a final state.
      const end = await withSafety(it.next(), 'end of stream');
      expect(end.done).toBe(true);
      return seen;
    }
  }
}

async function nextState(it: AsyncIterator<Result | Obj>): Promise<string> {
  const r = await withSafety(it.next(), 'subscription event');
  expect(r.done).toBe(false);
  const value = r.value as Result;
  expect(value.errors, JSON.stringify(value.errors)).toBeUndefined();
  return String(((value.data as Obj).riskRequestUpdated as Obj).state);
}

async function download(url: string): Promise<{ status: number; bytes: Buffer; type: string }> {
  const res = await request(url);
  const bytes = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, bytes, type: String(res.headers['content-type'] ?? '') };
}

const ORDER_BUREAU = `mutation($input: PersonBureauInput!) { orderPersonBureauReport(input: $input) { ${STATUS} delegationForm { url expiresAt fileName contentType } } }`;
const UPLOAD = `mutation($id: ID!, $f: String!) { uploadSignedDelegation(id: $id, signedDelegationFile: $f) { ${STATUS} signedDelegationFileName } }`;
const ORDER_PATRIMONIAL = `mutation($input: PersonSubjectInput!) { orderPatrimonialReport(level: STANDARD, input: $input) { ${STATUS} } }`;
const REPORT = `query($id: ID!) { riskRequest(family: PATRIMONIAL, id: $id) { ${STATUS} ... on PatrimonialRequest { report { url fileName contentType expiresAt } } } }`;

beforeAll(async () => {
  t = await startTestStack(ENV);
  receiver = await startReceiver();
  // Requests complete only when the test says so.
  await t.control('risk/timing', { completeAfterMs: 0 });
  await t.control('tokens', { token: TENANT_B, owner: 'tenant-b@example.com' });
});

afterAll(async () => {
  await Promise.allSettled(clients.map(async (c) => c.dispose()));
  await t?.close();
  await receiver?.close();
});

describe('person bureau request', () => {
  async function orderAndDownload(): Promise<{ id: string; pdf: Buffer }> {
    const { orderPersonBureauReport: order } = await gql<{ orderPersonBureauReport: Obj }>(ORDER_BUREAU, { input: bureauInput() });
    expect(order).toMatchObject({ family: 'PERSON_BUREAU', state: 'PROCESSING', rawState: 'processing', done: false });
    const form = order.delegationForm as Obj;
    expect(form.url).toMatch(new RegExp(`^${t.url}/files/risk/`));
    expect(form.contentType).toBe('application/pdf');
    const doc = await download(String(form.url));
    expect(doc.status).toBe(200);
    expect(doc.type).toMatch(/application\/pdf/);
    expect(doc.bytes.subarray(0, 4).toString('latin1')).toBe('%PDF');
    return { id: String(order.id), pdf: doc.bytes };
  }

  it('delegation download, signed upload and processing → in_progress → complete over graphql-ws', async () => {
    const { id, pdf } = await orderAndDownload();
    const it = subscribeWs(UPDATED, { id });
    expect(await nextState(it)).toBe('PROCESSING');

    const { uploadSignedDelegation: up } = await gql<{ uploadSignedDelegation: Obj }>(UPLOAD, { id, f: pdf.toString('base64') });
    expect(up).toMatchObject({ state: 'IN_PROGRESS', rawState: 'in_progress' });
    expect(up.signedDelegationFileName).toMatch(/\.pdf$/);
    expect(await nextState(it)).toBe('IN_PROGRESS');

    await t.control('risk/advance', { id });
    expect(await statesUntilDone(it)).toEqual(['COMPLETE']);
  });

  it('the same over SSE', async () => {
    const { id, pdf } = await orderAndDownload();
    const events = subscribeSse(UPDATED, { id });
    expect(await nextState(events)).toBe('PROCESSING');
    await gql(UPLOAD, { id, f: pdf.toString('base64') });
    expect(await nextState(events)).toBe('IN_PROGRESS');
    await t.control('risk/advance', { id });
    expect(await statesUntilDone(events)).toEqual(['COMPLETE']);
  });

  it('refuses a non-PDF delegation before calling the service', async () => {
    await t.clearCalls();
    const res = await t.gql(UPLOAD, { id: 'a'.repeat(24), f: Buffer.from('GIF89a not a pdf').toString('base64') });
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'signedDelegationFile' });
    expect(await t.calls('risk')).toEqual([]);
  });
});

describe('patrimonial report', () => {
  let id = '';

  it('completes through the callback, relays it to the caller, and the report PDF downloads', async () => {
    const input = {
      name: 'Mario',
      surname: 'Rossi',
      taxCode: CF,
      callback: { url: receiver.url, method: 'POST', field: 'payload', headers: [{ name: 'X-Session', value: 'abc123' }] },
    };
    const { orderPatrimonialReport: order } = await gql<{ orderPatrimonialReport: Obj }>(ORDER_PATRIMONIAL, { input });
    id = String(order.id);
    expect(order.state).toBe('PROCESSING');

    // The upstream record carries the layer's signed callback, never the caller's.
    const upstream = await request(`${t.stack.emulatorUrl}/risk/IT-patrimoniale-persona/${id}`, { headers: { authorization: 'Bearer emulator-token' } });
    const rec = ((await upstream.body.json()) as { data: Obj }).data;
    expect((rec.callback as Obj).url).toMatch(new RegExp(`^${t.url}/callbacks/risk/[A-Za-z0-9_-]+\\.\\d+\\.[A-Za-z0-9_-]{43}$`));

    const it = subscribeWs(UPDATED, { id });
    expect(await nextState(it)).toBe('PROCESSING');
    const noReport = await gql<{ riskRequest: Obj }>(REPORT, { id });
    expect(noReport.riskRequest.report).toBeNull();

    await t.control('risk/advance', { id });
    expect(await statesUntilDone(it)).toEqual(['COMPLETE']);

    const relayed = await withSafety(receiver.next(), 'relay to the caller’s callback');
    expect(relayed.headers['x-session']).toBe('abc123');
    expect(relayed.headers['content-type']).toMatch(/x-www-form-urlencoded/);
    const payload = JSON.parse(new URLSearchParams(relayed.body).get('payload') ?? '{}') as { data: Obj; success: boolean };
    expect(payload.success).toBe(true);
    expect(payload.data).toMatchObject({ id, state: 'complete', callback: { url: receiver.url, method: 'POST', field: 'payload' } });

    const { riskRequest } = await gql<{ riskRequest: Obj }>(REPORT, { id });
    expect(riskRequest).toMatchObject({ state: 'COMPLETE', done: true });
    const report = riskRequest.report as Obj;
    expect(report.fileName).toBe(`${id}.pdf`);
    const doc = await download(String(report.url));
    expect(doc.status).toBe(200);
    expect(doc.bytes.subarray(0, 4).toString('latin1')).toBe('%PDF');
  });

  it('a subscriber connecting after completion gets COMPLETE at once (graphql-ws and SSE)', async () => {
    expect(await statesUntilDone(subscribeWs(UPDATED, { id }))).toEqual(['COMPLETE']);
    expect(await statesUntilDone(subscribeSse(UPDATED, { id, family: 'PATRIMONIAL' }))).toEqual(['COMPLETE']);
  });

  it('refuses unsigned, tampered and expired file URLs', async () => {
    const { riskRequest } = await gql<{ riskRequest: Obj }>(REPORT, { id });
    const url = String((riskRequest.report as Obj).url);
    const m = /\/files\/risk\/([^.]+)\.(\d+)\.([^/]+)\/(.+)$/.exec(url);
    expect(m).not.toBeNull();
    const [, grant, expiry, mac, name] = m as unknown as [string, string, string, string, string];
    const base = `${t.url}/files/risk`;
    expect((await download(`${base}/${grant}/${name}`)).status).toBe(403);
    expect((await download(`${base}/${grant}.${expiry}/${name}`)).status).toBe(403);
    const flipped = (mac[0] === 'A' ? 'B' : 'A') + mac.slice(1);
    expect((await download(`${base}/${grant}.${expiry}.${flipped}/${name}`)).status).toBe(403);
    expect((await download(`${base}/${grant}.${Number(expiry) + 3600}.${mac}/${name}`)).status).toBe(403);
    // The same grant signed with the layer's secret works while fresh, so the next refusal is the expiry's.
    const fresh = await download(`${base}/${new Signer(LAYER_SECRET).sign('risk-file', grant, 60)}/${name}`);
    expect(fresh.status).toBe(200);
    const expired = new Signer(LAYER_SECRET, { now: () => Date.now() - 3_600_000 }).sign('risk-file', grant, 60);
    const refused = await download(`${base}/${expired}/${name}`);
    expect(refused.status).toBe(403);
    expect(refused.bytes.toString('utf8')).not.toContain('%PDF');
    expect((await download(`${base}`)).status).toBe(403);
  });
});

describe('callback ingress', () => {
  it('refuses a forged callback (403) and nothing changes; then refuses a replay of the genuine one', async () => {
    const { orderPersonReport: order } = await gql<{ orderPersonReport: Obj }>(`mutation($input: PersonSubjectInput!) { orderPersonReport(input: $input) { ${STATUS} } }`, {
      input: { name: 'Anna', surname: 'Bianchi', taxCode: CF2 },
    });
    const id = String(order.id);
    const get = async (): Promise<Obj> => {
      const res = await request(`${t.stack.emulatorUrl}/risk/IT-report-persona/${id}`, { headers: { authorization: 'Bearer emulator-token' } });
      return ((await res.body.json()) as { data: Obj }).data;
    };
    const rec = await get();
    const genuine = String((rec.callback as Obj).url);
    const post = async (url: string, body: unknown): Promise<number> => {
      const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      await res.body.dump();
      return res.statusCode;
    };
    const forgedRecord = { ...rec, state: 'complete', lastUpdateTimestamp: Number(rec.lastUpdateTimestamp ?? 0) + 100 };
    const envelope = (data: Obj): Obj => ({ data, success: true, message: '', error: null });

    const [, key, expiry, mac] = /\/callbacks\/risk\/([^.]+)\.(\d+)\.(.+)$/.exec(genuine) as unknown as [string, string, string, string];
    const flipped = (mac[0] === 'A' ? 'B' : 'A') + mac.slice(1);
    expect(await post(`${t.url}/callbacks/risk/${key}.${expiry}.${flipped}`, envelope(forgedRecord))).toBe(403);
    expect(await post(`${t.url}/callbacks/risk/${key}.${Number(expiry) + 1}.${mac}`, envelope(forgedRecord))).toBe(403);
    expect(await post(`${t.url}/callbacks/risk/${key}`, envelope(forgedRecord))).toBe(403);
    const unknownKey = new Signer(LAYER_SECRET).sign('risk-callback', 'not-a-reserved-key', 60);
    expect(await post(`${t.url}/callbacks/risk/${unknownKey}`, envelope(forgedRecord))).toBe(403);
    const fileToken = new Signer(LAYER_SECRET).sign('risk-file', key, 60);
    expect(await post(`${t.url}/callbacks/risk/${fileToken}`, envelope(forgedRecord))).toBe(403);
    // The genuine URL does not accept a record of another request either.
    expect(await post(genuine, envelope({ ...forgedRecord, id: 'f'.repeat(24) }))).toBe(403);

    // Nothing changed: the layer still knows the request as PROCESSING.
    const it = subscribeWs(UPDATED, { id });
    expect(await nextState(it)).toBe('PROCESSING');

    // The genuine delivery completes it; the same delivery again is a replay.
    await t.control('risk/advance', { id });
    expect(await statesUntilDone(it)).toEqual(['COMPLETE']);
    expect(await post(genuine, envelope(await get()))).toBe(403);
    const form = new URLSearchParams({ data: JSON.stringify(envelope(await get())) }).toString();
    const res = await request(genuine, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form });
    await res.body.dump();
    expect(res.statusCode).toBe(403);
  });
});

describe('poller', () => {
  it('delivers completion when the upstream callbacks are switched off', async () => {
    await t.control('callbacks', { enabled: false });
    try {
      const { orderPatrimonialReport: order } = await gql<{ orderPatrimonialReport: Obj }>(ORDER_PATRIMONIAL, { input: { name: 'Anna', surname: 'Bianchi', taxCode: CF2 } });
      const id = String(order.id);
      const it = subscribeWs(UPDATED, { id });
      expect(await nextState(it)).toBe('PROCESSING');
      await t.clearCalls();
      await t.control('risk/advance', { id });
      expect(await statesUntilDone(it)).toEqual(['COMPLETE']);
      const reads = (await t.calls('risk')).filter((c) => c.method === 'GET' && c.path === `/IT-patrimoniale-persona/${id}`);
      expect(reads.length).toBeGreaterThanOrEqual(1);
      expect(reads.every((c) => c.price === 0)).toBe(true);
    } finally {
      await t.control('callbacks', { enabled: true });
    }
  });
});

describe('tenancy', () => {
  it('tenant B can neither read nor subscribe to tenant A’s request', async () => {
    const { orderPatrimonialReport: order } = await gql<{ orderPatrimonialReport: Obj }>(ORDER_PATRIMONIAL, { input: { name: 'Mario', surname: 'Rossi', taxCode: CF } });
    const id = String(order.id);

    // A sees it; B does not, not even in its list.
    expect((await gql<{ riskRequest: Obj | null }>(`query($id: ID!) { riskRequest(family: PATRIMONIAL, id: $id) { id } }`, { id })).riskRequest).toEqual({ id });
    expect((await gql<{ riskRequest: Obj | null }>(`query($id: ID!) { riskRequest(family: PATRIMONIAL, id: $id) { id } }`, { id }, TENANT_B)).riskRequest).toBeNull();
    const listB = await gql<{ riskRequests: Obj[] }>(`{ riskRequests(family: PATRIMONIAL) { id } }`, {}, TENANT_B);
    expect(listB.riskRequests.map((r) => r.id)).not.toContain(id);

    // B's subscriptions to A's id fail, with or without the family.
    for (const variables of [{ id }, { id, family: 'PATRIMONIAL' }]) {
      const r = await withSafety(subscribeWs(UPDATED, variables, TENANT_B).next(), 'subscription answer');
      expect(r.done).toBe(false);
      const result = r.value as Result;
      expect(result.data?.riskRequestUpdated ?? null).toBeNull();
      expect(result.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    }

    // B's feed replays and pushes only B's own requests.
    const feedB = subscribeWs(`subscription { riskRequestsUpdated(family: PATRIMONIAL) { id state } }`, {}, TENANT_B);
    const first = feedB.next();
    await t.control('risk/advance', { id }); // A's request changes meanwhile
    const { orderPatrimonialReport: mine } = await gql<{ orderPatrimonialReport: Obj }>(ORDER_PATRIMONIAL, { input: { name: 'Anna', surname: 'Bianchi', taxCode: CF2 } }, TENANT_B);
    const r = await withSafety(first, 'feed event');
    expect(((r.value as Result).data as Obj).riskRequestsUpdated).toEqual({ id: mine.id, state: 'PROCESSING' });
    await feedB.return?.();
    // B's request done, so that no poll of it lands in a later test's call log.
    const watch = subscribeWs(UPDATED, { id: mine.id }, TENANT_B);
    expect(await nextState(watch)).toBe('PROCESSING');
    await t.control('risk/advance', { id: mine.id });
    expect(await statesUntilDone(watch)).toContain('COMPLETE');
  });
});

describe('credit scores across the company graph', () => {
  it('costs one call per distinct company and level, however often it appears', async () => {
    await t.cold();
    // BETA SERVIZI is owned by ALFA INDUSTRIE and DELTA COSTRUZIONI; ALFA LOGISTICA by ALFA INDUSTRIE.
    const owners = `shareholders { owners { ... on ShareholderCompany { company { vatCode creditScore(level: START) { score rawScore } again: creditScore(level: START) { score } } } } }`;
    const res = await t.gql<Obj>(`{
      beta: company(vatCode: "04123450159") { vatCode creditScore(level: START) { score } ${owners} }
      logistica: company(vatCode: "03456782055") { vatCode creditScore(level: START) { score } ${owners} }
      top: company(vatCode: "03456781057") { creditScore(level: TOP) { score rating } }
      direct: creditScore(vatCode: "03456781057", level: START) { score }
    }`);
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    const scored = (await t.calls('risk')).map((c) => c.path).sort();
    expect(scored).toEqual([
      '/IT-creditscore-start/03456781057',
      '/IT-creditscore-start/03456782055',
      '/IT-creditscore-start/04123450159',
      '/IT-creditscore-start/04123450787',
      '/IT-creditscore-top/03456781057',
    ]);
    const beta = (res.data as Obj).beta as Obj;
    const owned = ((beta.shareholders as Obj[]).flatMap((s) => s.owners as Obj[]).map((o) => o.company) as Obj[]).filter(Boolean);
    expect(owned.map((c) => c.vatCode).sort()).toEqual(['03456781057', '04123450787']);
    for (const c of owned) expect((c.creditScore as Obj).score).toMatch(/^(GREEN|YELLOW|RED|GREY)$/);
  });

  it('refuses an invalid VAT number without a call', async () => {
    await t.clearCalls();
    const res = await t.gql(`{ creditScore(vatCode: "12345678901") { score } }`);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'vatCode' });
    expect(await t.calls('risk')).toEqual([]);
  });
});

describe('bad input costs nothing', () => {
  it('invalid fiscal codes, missing required fields and non-PDF files get BAD_USER_INPUT with no upstream call', async () => {
    await t.clearCalls();
    const wrongCf = CF.slice(0, 15) + (CF[15] === 'A' ? 'B' : 'A');
    const badCf = await t.gql(ORDER_PATRIMONIAL, { input: { name: 'Mario', surname: 'Rossi', taxCode: wrongCf } });
    expect(badCf.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.taxCode' });

    const missing = await t.gql(ORDER_PATRIMONIAL, { input: { name: 'Mario', taxCode: CF } });
    expect(missing.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const empty = await t.gql(ORDER_PATRIMONIAL, { input: { name: 'Mario', surname: ' ', taxCode: CF } });
    expect(empty.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.surname' });

    const notPdf = await t.gql(ORDER_BUREAU, { input: { ...bureauInput(), healthInsuranceCardFile: Buffer.from('\x89PNG\r\n\x1a\n....').toString('base64') } });
    expect(notPdf.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.healthInsuranceCardFile' });

    const badCallback = await t.gql(ORDER_PATRIMONIAL, { input: { name: 'Mario', surname: 'Rossi', taxCode: CF, callback: { url: 'file:///etc/passwd' } } });
    expect(badCallback.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.callback.url' });

    const verify = await t.gql(`{ verifyFiscalCode(taxCode: "${wrongCf}") { valid } }`);
    expect(verify.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');

    expect(await t.calls('risk')).toEqual([]);
  });
});
