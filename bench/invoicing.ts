/**
 * Invoicing scenarios (issue 10): issuing Italian invoices and receipts, and tracking them live.
 * Upstream calls, euro and p50 latency per operation through the layer, against the embedded
 * emulator with a per-call latency; and the time from an upstream change (the emulator's SDI or
 * revenue agency moving a record, which notifies the configuration's callback) to the subscriber
 * receiving it over graphql-ws, p50/p99.
 *
 * `npx tsx bench/invoicing.ts` alone, or from `npm run bench` (`runInvoicingBench`).
 */
import { request } from 'undici';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { makeFiscalCode } from '../contract/checksums.ts';
import { startStack } from '../stack.ts';

const SENDER = '12485671007';
const CF = makeFiscalCode({ surname: 'Verdi', name: 'Anna', birthDate: '1985-03-03', gender: 'F', cadastralCode: 'H501' });
const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? 0;
const ms = (n: number): string => `${n.toFixed(1)} ms`;

const ISSUE = `mutation($n: String!) { issueInvoice(input: {
  number: $n, date: "2025-01-31", recipientCode: "ABC1234",
  sender: { name: "Openapi SpA", vatNumber: "${SENDER}", street: "Via 1", zip: "00100", city: "Roma", province: "RM" },
  recipient: { name: "Cliente", vatNumber: "01234567897", street: "Via 2", zip: "20100", city: "Milano", province: "MI" },
  lines: [{ description: "Consulenza", quantity: 2, unitPrice: 100, vatRate: 22 }, { description: "Libro", unitPrice: 50, vatRate: 4 }] }) { id state } }`;
// Each sale carries the till's sale number as a tag: receipts without an idempotency key are keyed by their content.
const RECEIPT = `mutation($sale: String!) { issueReceipt(input: { fiscalId: "${SENDER}", items: [{ description: "Caffè", quantity: 2, unitPrice: 1.2, vatRateCode: "10" }], cashPaymentAmount: 2.4, tags: [$sale] }) { id status } }`;

export async function runInvoicingBench(latencyMs: number, n = 20): Promise<void> {
  const stack = await startStack({
    env: { ...process.env, OPENAPI_ENV: 'emulator', INVOICING_POLL_INTERVAL_MS: '600000' },
    port: 0,
    emulator: { latencyMs: { invoice: latencyMs } },
  });
  const emu = stack.emulatorUrl!;
  const control = async (path: string, body: unknown): Promise<unknown> =>
    (await request(`${emu}/_emulator/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).body.json();
  const token = ((await control('tokens', { credit: 1000 })) as { token: string }).token;
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
  const gql = async (query: string, variables: Record<string, unknown> = {}) => {
    const res = await request(stack.gateway.graphqlUrl, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
    const body = (await res.body.json()) as { errors?: unknown[]; data?: Record<string, Record<string, unknown>>; extensions?: { cost?: { upstreamCalls: number; euro: number } } };
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return { data: body.data!, cost: body.extensions!.cost! };
  };
  const client = createClient({ url: stack.gateway.wsUrl, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${token}` }, retryAttempts: 0, lazy: true });
  const rows: string[] = [];
  try {
    await control('invoice/timing', { sentAfterMs: 0, outcomeAfterMs: 0, paTermsAfterMs: 0, submitAfterMs: 0, readyAfterMs: 0 });
    await gql(
      `mutation { configureInvoicing(input: { fiscalId: "${SENDER}", name: "Openapi SpA", email: "f@example.com", receipts: true, receiptsCredentials: { taxCode: "${CF}", password: "pw", pin: "1" } }) { id } }`,
    );

    // Issue and track invoices: NEW (mutation) → SENT → DONE (notifications through the gateway's ingress).
    const issueLat: number[] = [];
    const pushLat: number[] = [];
    let calls = 0;
    let euro = 0;
    let trackCalls = 0;
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const { data, cost } = await gql(ISSUE, { n: `B-${i}` });
      issueLat.push(performance.now() - t0);
      calls += cost.upstreamCalls;
      euro += cost.euro;
      const id = String(data.issueInvoice.id);
      const it = client.iterate<{ invoiceUpdated: { state: string } }>({ query: `subscription($id: ID) { invoiceUpdated(id: $id) { state } }`, variables: { id } });
      await it.next(); // NEW, the latest known state first
      const before = ((await (await request(`${emu}/_emulator/calls?area=invoice`)).body.json()) as unknown[]).length;
      for (const want of ['SENT', 'DONE']) {
        const t1 = performance.now();
        const next = it.next();
        await control('invoice/advance', { id });
        const r = await next;
        if (r.done || r.value.data?.invoiceUpdated.state !== want) throw new Error(`expected ${want}`);
        pushLat.push(performance.now() - t1);
      }
      trackCalls += ((await (await request(`${emu}/_emulator/calls?area=invoice`)).body.json()) as unknown[]).length - before;
      await it.return?.();
    }
    rows.push(`| issue invoice (structured → FatturaPA) | ${(calls / n).toFixed(2)} | ${(euro / n).toFixed(3)} | ${ms(pct(issueLat, 0.5))} | |`);
    rows.push(`| track invoice NEW → SENT → DONE | ${(trackCalls / n).toFixed(2)} (free re-reads) | 0 | | ${ms(pct(pushLat, 0.5))} / ${ms(pct(pushLat, 0.99))} |`);

    // Receipts: issue, then new → submitted → ready (ready is notified).
    const rIssue: number[] = [];
    const rPush: number[] = [];
    let rCalls = 0;
    let rEuro = 0;
    let rTrack = 0;
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const { data, cost } = await gql(RECEIPT, { sale: `sale-${i}` });
      rIssue.push(performance.now() - t0);
      rCalls += cost.upstreamCalls;
      rEuro += cost.euro;
      const id = String(data.issueReceipt.id);
      const it = client.iterate<{ receiptUpdated: { status: string } }>({ query: `subscription($id: ID) { receiptUpdated(id: $id) { status } }`, variables: { id } });
      await it.next();
      const before = ((await (await request(`${emu}/_emulator/calls?area=invoice`)).body.json()) as unknown[]).length;
      await control('invoice/receiptAdvance', { id });
      const t1 = performance.now();
      const next = it.next();
      await control('invoice/receiptAdvance', { id });
      const r = await next;
      if (r.done || r.value.data?.receiptUpdated.status !== 'READY') throw new Error('expected READY');
      rPush.push(performance.now() - t1);
      rTrack += ((await (await request(`${emu}/_emulator/calls?area=invoice`)).body.json()) as unknown[]).length - before;
      await it.return?.();
    }
    rows.push(`| issue receipt | ${(rCalls / n).toFixed(2)} | ${(rEuro / n).toFixed(3)} | ${ms(pct(rIssue, 0.5))} | |`);
    // A till retrying a sale without a key (its content is the key): answered with the first receipt, no call.
    const retry = await Promise.all(Array.from({ length: n }, (_, i) => gql(RECEIPT, { sale: `sale-${i}` })));
    const retryCalls = retry.reduce((sum, r) => sum + r.cost.upstreamCalls, 0);
    const retryEuro = retry.reduce((sum, r) => sum + r.cost.euro, 0);
    rows.push(`| receipt retried without a key | ${(retryCalls / n).toFixed(2)} | ${(retryEuro / n).toFixed(3)} | | |`);
    rows.push(`| track receipt new → submitted → READY | ${(rTrack / n).toFixed(2)} (free re-reads) | 0 | | ${ms(pct(rPush, 0.5))} / ${ms(pct(rPush, 0.99))} |`);
  } finally {
    await client.dispose();
    await stack.close();
  }
  console.log(`\nInvoicing (upstream latency ${latencyMs} ms per call; ${n} invoices and ${n} receipts).\n`);
  console.log('| scenario | upstream calls/op | euro/op | p50 | upstream change → subscriber p50 / p99 |');
  console.log('|---|---|---|---|---|');
  for (const r of rows) console.log(r);
}

if (import.meta.url === `file://${process.argv[1]}`) await runInvoicingBench(Number(process.env.BENCH_UPSTREAM_LATENCY_MS ?? 40), Number(process.env.BENCH_INVOICES ?? 20));
