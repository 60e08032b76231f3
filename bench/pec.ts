/**
 * Certified-mail scenarios (issue 9), through the layer against the embedded emulator with a per-call
 * latency: the mailbox lifecycle (availability, registration, signed upload, verification pushed,
 * renewal, enlargement, upgrade, revocation), the company-register notification to its finalize, and
 * a bulk sending to 50 (and 1,000) recipients with its receipts.
 * Upstream calls and euro per scenario (from the emulator's call log: every call the upstream saw,
 * pollers included), and the time from the upstream change (the control call that makes it) to the
 * subscriber's event, p50 and max.
 *
 * `npx tsx bench/pec.ts` alone, or from `npm run bench` (`runPecBench`).
 */
import { request } from 'undici';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { makeFiscalCode } from '../contract/checksums.ts';
import { renderPdf } from '../emulator/pdf.ts';
import { DEFAULT_BULK_PASSWORD, DEFAULT_BULK_USERNAME } from '../emulator/pecmassiva/index.ts';
import { startStack } from '../stack.ts';

type Obj = Record<string, unknown>;
const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? 0;
const ms = (n: number): string => `${n.toFixed(1)} ms`;

const CF = makeFiscalCode({ surname: 'Rossi', name: 'Mario', birthDate: '1982-04-11', gender: 'M', cadastralCode: 'H501' });
const PDF = renderPdf('Signed form', ['Signed activation form']).toString('base64');
const applicant = { firstName: 'Mario', lastName: 'Rossi', email: 'mario@example.com', phone: '0548798569', taxCode: CF, birthDate: '1982-04-11', gender: 'M', birthCountry: 'IT' };
const holder = { address: 'via Verdi 20', city: 'Roma', postalCode: '00042', province: 'RM', country: 'IT' };

export async function runPecBench(latencyMs: number, mailboxes = 10): Promise<void> {
  const stack = await startStack({
    env: { ...process.env, OPENAPI_ENV: 'emulator', PECMASSIVA_POLL_MS: '50', PECMASSIVA_POLL_MAX_CALLS_PER_MIN: '6000' },
    port: 0,
    emulator: { latencyMs: { pec: latencyMs, pecmassiva: latencyMs } },
  });
  const emu = stack.emulatorUrl!;
  const control = async (path: string, body: unknown = {}): Promise<void> => {
    const res = await request(`${emu}/_emulator/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await res.body.dump();
  };
  const calls = async (): Promise<Array<{ area: string; price: number }>> =>
    (await (await request(`${emu}/_emulator/calls`)).body.json()) as Array<{ area: string; price: number }>;
  const clearCalls = async (): Promise<void> => void (await (await request(`${emu}/_emulator/calls`, { method: 'DELETE' })).body.dump());
  const gql = async (query: string, variables: Obj): Promise<Obj> => {
    const res = await request(stack.gateway.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
    const body = (await res.body.json()) as { errors?: unknown[]; data?: Obj };
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return body.data!;
  };
  const client = createClient({ url: stack.gateway.wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
  const rows: string[] = [];
  try {
    await control('pec/timing', { verifyAfterMs: 0 });
    await control('pecmassiva/timing', { acceptAfterMs: 0, deliverAfterMs: 0 });

    // Mailbox lifecycle.
    await clearCalls();
    const push: number[] = [];
    const total: number[] = [];
    for (let i = 0; i < mailboxes; i++) {
      const t0 = performance.now();
      const address = `bench.box${i}.${Date.now().toString(36)}@legalmail.it`;
      const reg = (
        await gql(`mutation($input: RegisterMailboxInput!) { registerMailbox(input: $input) { id } }`, {
          input: { address, boxType: 'BRONZE', customerType: 'PV', applicant, holder },
        })
      ).registerMailbox as Obj;
      const id = String(reg.id);
      const it = client.iterate<Obj>({ query: `subscription($id: ID!) { mailboxUpdated(id: $id) { status } }`, variables: { id } });
      await it.next();
      await gql(`mutation($id: ID!, $d: [String!]!) { uploadMailboxActivation(id: $id, documents: $d) { status } }`, { id, d: [PDF, PDF] });
      for (;;) if (((await it.next()).value?.data?.mailboxUpdated as Obj | undefined)?.status === 'ACTIVATING') break;
      const c0 = performance.now();
      await control('pec/advance', { id });
      for (;;) if (((await it.next()).value?.data?.mailboxUpdated as Obj | undefined)?.status === 'ACTIVE') break;
      push.push(performance.now() - c0);
      await it.return?.();
      await gql(`mutation($id: ID!) { renewMailbox(id: $id, years: 1) { status } }`, { id });
      await gql(`mutation($id: ID!) { enlargeMailbox(id: $id, input: { diskSpaceMb: 1024, add: true }) { status } }`, { id });
      await gql(`mutation($id: ID!) { upgradeMailbox(id: $id, boxType: GOLD) { status } }`, { id });
      await gql(`mutation($id: ID!) { revokeMailbox(id: $id) { status } }`, { id });
      total.push(performance.now() - t0);
    }
    const lc = (await calls()).filter((c) => c.area === 'pec');
    rows.push(
      `| mailbox lifecycle (register → ACTIVE → renew, enlarge, upgrade, revoke) | ${(lc.length / mailboxes).toFixed(2)} | ${(lc.reduce((s, c) => s + c.price, 0) / mailboxes).toFixed(3)} | ${ms(pct(push, 0.5))} / ${ms(Math.max(...push))} | — | ${ms(pct(total, 0.5))} |`,
    );

    // Company-register notification: start → AWAITING_DOCUMENTS (the provider's step, pushed) →
    // signed delegation → finalize (the contract's send-and-finalize GET) → DONE pushed.
    await clearCalls();
    await control('pec/timing', { noticeStepAfterMs: 0 });
    const npush: number[] = [];
    const fpush: number[] = [];
    const ntotal: number[] = [];
    for (let i = 0; i < mailboxes; i++) {
      const t0 = performance.now();
      const input = {
        address: `azienda${i}@legalmail.it`,
        taxCodeOrVat: '12485671007',
        companyName: 'Azienda Bench',
        city: 'Roma',
        province: 'RM',
        firstName: 'Mario',
        lastName: 'Rossi',
        taxCode: CF,
        role: 'LEGALE_RAPPRESENTANTE',
        email: 'mario@example.com',
        mobile: '3331234567',
      };
      const id = String(((await gql(`mutation($input: NotifyCompanyRegisterInput!) { notifyCompanyRegister(input: $input) { id } }`, { input })).notifyCompanyRegister as Obj).id);
      const it = client.iterate<Obj>({ query: `subscription($id: ID!) { pecNotificationUpdated(id: $id) { status } }`, variables: { id } });
      await it.next();
      const c0 = performance.now();
      await control('pec/advance', { id });
      for (;;) if (((await it.next()).value?.data?.pecNotificationUpdated as Obj | undefined)?.status === 'AWAITING_DOCUMENTS') break;
      npush.push(performance.now() - c0);
      await gql(`mutation($id: ID!, $d: String!) { uploadCompanyRegisterDelegation(id: $id, document: $d) { status } }`, { id, d: PDF });
      for (;;) if (((await it.next()).value?.data?.pecNotificationUpdated as Obj | undefined)?.status === 'DOCUMENTS_UPLOADED') break;
      const f0 = performance.now();
      await gql(`mutation($id: ID!, $k: String) { finalizeCompanyRegisterNotification(id: $id, idempotencyKey: $k) { status } }`, { id, k: `bench-finalize-${id}` });
      for (;;) if (((await it.next()).value?.data?.pecNotificationUpdated as Obj | undefined)?.status === 'DONE') break;
      fpush.push(performance.now() - f0);
      await it.return?.();
      ntotal.push(performance.now() - t0);
    }
    const nc = (await calls()).filter((c) => c.area === 'pec');
    rows.push(
      `| register notification (start → AWAITING_DOCUMENTS → upload → finalize → DONE) | ${(nc.length / mailboxes).toFixed(2)} | ${(nc.reduce((s, c) => s + c.price, 0) / mailboxes).toFixed(3)} | ${ms(pct(npush, 0.5))} / ${ms(Math.max(...npush))} | ${ms(pct(fpush, 0.5))} / ${ms(Math.max(...fpush))} | ${ms(pct(ntotal, 0.5))} |`,
    );

    // Bulk sending to 50 recipients.
    await clearCalls();
    const recipients = Array.from({ length: 50 }, (_, i) => (i % 10 === 9 ? `bounce${i}@legalmail.it` : `cliente${i}@legalmail.it`));
    const t0 = performance.now();
    const sent = (
      await gql(`mutation($input: BulkSendInput!, $c: BulkCredentialsInput!) { sendCertifiedMail(input: $input, credentials: $c) { id } }`, {
        input: { sender: DEFAULT_BULK_USERNAME, recipients, subject: 'Bench', html: '<p>bench</p>' },
        c: { username: DEFAULT_BULK_USERNAME, password: DEFAULT_BULK_PASSWORD },
      })
    ).sendCertifiedMail as Obj;
    const it = client.iterate<Obj>({ query: `subscription($id: ID!) { sendingUpdated(id: $id) { done counts { sent delivered failed } } }`, variables: { id: sent.id } });
    for (;;) if ((((await it.next()).value?.data?.sendingUpdated as Obj | undefined)?.counts as Obj | undefined)?.sent === 50) break;
    const c0 = performance.now();
    await control('pecmassiva/advance', {});
    let last: Obj = {};
    for (;;) {
      const r = await it.next();
      if (r.done) break;
      last = r.value.data?.sendingUpdated as Obj;
      if (last.done === true) break;
    }
    const receiptsMs = performance.now() - c0;
    const totalMs = performance.now() - t0;
    const bc = (await calls()).filter((c) => c.area === 'pecmassiva');
    const counts = last.counts as Obj;
    rows.push(
      `| bulk send, 50 recipients (${String(counts.delivered)} delivered, ${String(counts.failed)} failed) | ${bc.length} | ${bc.reduce((s, c) => s + c.price, 0).toFixed(3)} | ${ms(receiptsMs)} (all receipts) | — | ${ms(totalMs)} |`,
    );

    // 1,000 recipients: 20 requests of 50 at one request per second per mailbox, progress pushed.
    await clearCalls();
    const many = Array.from({ length: 1000 }, (_, i) => `destinatario${i}@legalmail.it`);
    const m0 = performance.now();
    const big = (
      await gql(`mutation($input: BulkSendInput!, $c: BulkCredentialsInput!) { sendCertifiedMail(input: $input, credentials: $c) { id } }`, {
        input: { sender: DEFAULT_BULK_USERNAME, recipients: many, subject: 'Bench 1000', html: '<p>bench</p>' },
        c: { username: DEFAULT_BULK_USERNAME, password: DEFAULT_BULK_PASSWORD },
      })
    ).sendCertifiedMail as Obj;
    const queuedMs = performance.now() - m0;
    const progress = client.iterate<Obj>({ query: `subscription($id: ID!) { sendingUpdated(id: $id) { counts { sent } } }`, variables: { id: big.id } });
    let events = 0;
    for (;;) {
      const r = await progress.next();
      if (r.done) break;
      events++;
      if ((((r.value.data?.sendingUpdated as Obj | undefined)?.counts as Obj | undefined)?.sent as number) === 1000) break;
    }
    await progress.return?.();
    const allSentMs = performance.now() - m0;
    const sends = (await calls()).filter((c) => c.area === 'pecmassiva' && (c as { method?: string }).method === 'POST');
    rows.push(
      `| bulk send, 1,000 recipients (answered in ${ms(queuedMs)}; ${events} progress events) | ${sends.length} sends | ${sends.reduce((s, c) => s + c.price, 0).toFixed(3)} | — | — | ${ms(allSentMs)} to all sent |`,
    );
  } finally {
    await client.dispose();
    await stack.close();
  }
  console.log(`\nCertified mail (upstream latency ${latencyMs} ms per call; ${mailboxes} mailboxes; receipt reads every 50 ms).\n`);
  console.log('| scenario | upstream calls | euro | provider step → event (p50 / max) | finalize round trip → event (p50 / max) | whole scenario (p50) |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
}

if (import.meta.url === `file://${process.argv[1]}`) await runPecBench(Number(process.env.BENCH_UPSTREAM_LATENCY_MS ?? 40));
