/**
 * Certified mailboxes and the company-register notification end to end, as a user's app sees them:
 * the real stack on loopback ports, GraphQL over HTTP, live status over graphql-ws, forms through
 * signed URLs, the provider's verification delivered by the emulator's callback through the
 * gateway's ingress. Verification and notification steps move only when the test says so (emulator
 * timing 0 + `pec/advance`), so nothing depends on time; timeouts are safety limits only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';
import { request } from 'undici';
import { PDF_B64, PEC_APPLICANT as applicant, PEC_HOLDER as holder, registerNotificationInput } from '../../support/pec.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { withSafety as safety } from '../../support/safety.ts';
import type { Obj } from '../../../contract/values.ts';

const ENV = { LAYER_SECRET: 'pec-e2e-test-secret-0123456789ab', PEC_POLL_INTERVAL_MS: '60000' };
const SAFETY_MS = 20_000;

type Result = FormattedExecutionResult<Obj, unknown>;

let t: TestStack;
let token: string;
let tokenB: string;
const clients: Client[] = [];

const withSafety = <T>(p: Promise<T>, what: string): Promise<T> => safety(p, what, SAFETY_MS);
const auth = (tk: string): Record<string, string> => ({ authorization: `Bearer ${tk}` });

async function gql<T = Obj>(query: string, variables: Obj = {}, tk = token): Promise<T> {
  const res = await t.gql<T>(query, variables, auth(tk));
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data as T;
}

function subscribe(query: string, variables: Obj, tk = token): AsyncIterableIterator<Result> {
  const client = createClient({ url: t.stack.gateway.wsUrl, webSocketImpl: WebSocket, connectionParams: auth(tk), retryAttempts: 0, lazy: true });
  clients.push(client);
  return client.iterate<Obj>({ query, variables });
}

async function next(it: AsyncIterator<Result>, field: string): Promise<Obj> {
  const r = await withSafety(it.next(), `${field} event`);
  expect(r.done).toBe(false);
  expect(r.value.errors, JSON.stringify(r.value.errors)).toBeUndefined();
  return (r.value.data as Obj)[field] as Obj;
}

const calls = async (): Promise<string[]> => (await t.calls('pec')).map((c) => `${c.method} ${c.path} ${c.status}`);

const registration = (address: string, boxType = 'BRONZE'): Obj => ({ address, boxType, customerType: 'PV', applicant, holder });

const BOX = 'id address boxType status state rawStatus done expiresOn diskSpaceMb archiveSpaceMb activationDocuments';
const REGISTER = `mutation($input: RegisterMailboxInput!, $key: String) { registerMailbox(input: $input, idempotencyKey: $key) { ${BOX} activationForm { url contentType fileName } } }`;
const UPLOAD = `mutation($id: ID!, $docs: [String!]!) { uploadMailboxActivation(id: $id, documents: $docs) { ${BOX} } }`;
const UPDATED = `subscription($id: ID!) { mailboxUpdated(id: $id) { ${BOX} } }`;
const FINALIZE = `mutation($id: ID!, $key: String) { finalizeCompanyRegisterNotification(id: $id, idempotencyKey: $key) { status rawStatus done } }`;

beforeAll(async () => {
  t = await startTestStack(ENV);
  await t.control('pec/timing', { verifyAfterMs: 0, noticeStepAfterMs: 0 });
  token = await t.createToken(200);
  tokenB = await t.createToken(200);
});

afterAll(async () => {
  await Promise.allSettled(clients.map(async (c) => c.dispose()));
  await t?.close();
});

describe('mailbox lifecycle through the gateway', () => {
  it('availability → register → activation form (%PDF) → signed upload → pushed in_attivazione → evasa; renew, enlarge, upgrade, revoke', async () => {
    await t.clearCalls();
    const address = 'office.rossi@legalmail.it';
    const { mailboxAvailability } = await gql<{ mailboxAvailability: Obj }>(`query($a: String!) { mailboxAvailability(address: $a) { address available } }`, { a: address });
    expect(mailboxAvailability).toEqual({ address, available: true });

    const reg = await t.gql<{ registerMailbox: Obj }>(REGISTER, { input: registration(address), key: 'register-office-rossi-1' }, auth(token));
    expect(reg.errors).toBeUndefined();
    const box = reg.data!.registerMailbox;
    expect(box).toMatchObject({ address, boxType: 'BRONZE', status: 'REGISTERED', state: 'registrata', done: false, activationDocuments: [] });
    // The availability answer of the query above is reused (cached briefly): only the registration is paid.
    expect(reg.extensions?.cost).toMatchObject({ upstreamCalls: 1, cacheHits: 1 });
    expect(reg.extensions?.cost?.euro).toBeCloseTo(5, 6);
    const id = String(box.id);

    // The same key again: the same mailbox, nothing bought (not even the availability check).
    const again = await t.gql<{ registerMailbox: Obj }>(REGISTER, { input: registration(address), key: 'register-office-rossi-1' }, auth(token));
    expect(again.data!.registerMailbox.id).toBe(id);
    expect(again.extensions?.cost?.euro ?? 0).toBe(0);

    const form = box.activationForm as Obj;
    expect(form.url).toMatch(new RegExp(`^${t.url}/files/pec/`));
    const pdf = await request(String(form.url));
    expect(pdf.statusCode).toBe(200);
    expect(
      Buffer.from(await pdf.body.arrayBuffer())
        .subarray(0, 4)
        .toString('latin1'),
    ).toBe('%PDF');

    const it = subscribe(UPDATED, { id });
    expect(await next(it, 'mailboxUpdated')).toMatchObject({ id, status: 'REGISTERED' });

    const up = await gql<{ uploadMailboxActivation: Obj }>(UPLOAD, { id, docs: [PDF_B64, PDF_B64] });
    expect(up.uploadMailboxActivation).toMatchObject({ status: 'ACTIVATING', state: 'in_attivazione', rawStatus: 'in_evasione' });
    expect(await next(it, 'mailboxUpdated')).toMatchObject({ status: 'ACTIVATING', state: 'in_attivazione' });

    // The provider verifies the documents: its callback reaches the layer, which re-reads and pushes.
    await t.control('pec/advance', { id });
    const active = await next(it, 'mailboxUpdated');
    expect(active).toMatchObject({ status: 'ACTIVE', state: 'evasa' });
    expect(active.expiresOn).toMatch(/^\d{4}-\d{2}-\d{2}$/);

    expect(await calls()).toEqual([
      `GET /verifica_pec/${encodeURIComponent(address)} 200`,
      'POST /pec 200',
      `GET /pec/${id}/modulo_attivazione 200`,
      `PATCH /pec/${id}/activation 200`,
      `GET /pec/${id} 200`,
    ]);

    await t.clearCalls();
    const RENEW = `mutation($id: ID!, $years: Int!, $key: String) { renewMailbox(id: $id, years: $years, idempotencyKey: $key) { expiresOn status } }`;
    const renew = await t.gql<{ renewMailbox: Obj }>(RENEW, { id, years: 2, key: 'renew-key-0001' }, auth(token));
    expect(renew.errors).toBeUndefined();
    expect(Number(String(renew.data!.renewMailbox.expiresOn).slice(0, 4))).toBe(Number(String(active.expiresOn).slice(0, 4)) + 2);
    expect(renew.extensions?.cost?.euro).toBeCloseTo(10, 6);
    expect(await next(it, 'mailboxUpdated')).toMatchObject({ status: 'ACTIVE' });
    // The same key again (a retry): the same mailbox, no second renewal, nothing paid.
    const renewAgain = await t.gql<{ renewMailbox: Obj }>(RENEW, { id, years: 2, key: 'renew-key-0001' }, auth(token));
    expect(renewAgain.data!.renewMailbox).toEqual(renew.data!.renewMailbox);
    expect(renewAgain.extensions?.cost?.euro).toBe(0);
    // The same key for another order is refused, before any call.
    const other = await t.gql(RENEW, { id, years: 3, key: 'renew-key-0001' }, auth(token));
    expect(other.errors?.[0]?.extensions?.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect((await calls()).filter((c) => c.includes('rinnovo'))).toHaveLength(1);

    const ENLARGE = `mutation($id: ID!) { enlargeMailbox(id: $id, input: { diskSpaceMb: 1024, add: true }, idempotencyKey: "enlarge-key-01") { diskSpaceMb } }`;
    const bigger = await gql<{ enlargeMailbox: Obj }>(ENLARGE, { id });
    expect(bigger.enlargeMailbox.diskSpaceMb).toBe(2048);
    expect(await next(it, 'mailboxUpdated')).toMatchObject({ diskSpaceMb: 2048 });
    // Retried: still 2048 MB (not 3072), one PATCH.
    expect((await gql<{ enlargeMailbox: Obj }>(ENLARGE, { id })).enlargeMailbox.diskSpaceMb).toBe(2048);
    expect((await calls()).filter((c) => c.includes('/modifica'))).toHaveLength(1);

    const down = await t.gql(`mutation($id: ID!) { upgradeMailbox(id: $id, boxType: STANDARD) { boxType } }`, { id }, auth(token));
    expect(down.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'boxType' });
    const up2 = await t.gql<{ upgradeMailbox: Obj }>(`mutation($id: ID!) { upgradeMailbox(id: $id, boxType: GOLD) { boxType } }`, { id }, auth(token));
    expect(up2.data!.upgradeMailbox.boxType).toBe('GOLD');
    expect(up2.extensions?.cost?.euro).toBeCloseTo(3, 6);
    expect(await next(it, 'mailboxUpdated')).toMatchObject({ boxType: 'GOLD' });

    const revoked = await gql<{ revokeMailbox: Obj }>(`mutation($id: ID!) { revokeMailbox(id: $id) { status } }`, { id });
    expect(revoked.revokeMailbox.status).toBe('REVOKED');
    expect(await next(it, 'mailboxUpdated')).toMatchObject({ status: 'REVOKED' });

    // Exactly one call per operation; the downgrade never reached the service.
    expect(await calls()).toEqual([`GET /pec/${id}/rinnovo 200`, `PATCH /pec/${id}/modifica 200`, `PATCH /pec/${id}/trasformazione 200`, `DELETE /pec/${id} 200`]);
    await it.return?.();
  });

  it('refuses an unavailable address after the check, without paying for a registration', async () => {
    await t.clearCalls();
    const res = await t.gql(REGISTER, { input: registration('taken.office@legalmail.it') }, auth(token));
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'ADDRESS_UNAVAILABLE' });
    expect(await calls()).toEqual(['GET /verifica_pec/taken.office%40legalmail.it 200']);
    expect(res.extensions?.cost?.euro).toBeCloseTo(0.001, 6);
  });

  it('refuses invalid addresses, box types, fiscal codes and PDFs with BAD_USER_INPUT and no upstream call', async () => {
    await t.clearCalls();
    const cases: Array<[string, Obj, string]> = [
      [REGISTER, { input: registration('not-an-address') }, 'input.address'],
      [REGISTER, { input: { ...registration('a.b@legalmail.it'), applicant: { ...applicant, taxCode: 'RSSMRA82D11H501X' } } }, 'input.applicant.taxCode'],
      [REGISTER, { input: { ...registration('a.b@legalmail.it'), applicant: { ...applicant, birthDate: '11/04/1982' } } }, 'input.applicant.birthDate'],
      [UPLOAD, { id: 'a'.repeat(24), docs: [Buffer.from('GIF89a not a pdf').toString('base64')] }, 'documents[0]'],
      [UPLOAD, { id: 'nothex', docs: [PDF_B64] }, 'id'],
    ];
    for (const [query, variables, field] of cases) {
      const res = await t.gql(query, variables, auth(token));
      expect(res.errors?.[0]?.extensions, JSON.stringify(res.errors)).toMatchObject({ code: 'BAD_USER_INPUT', field });
    }
    // A box type in a domain that does not serve it: refused before the availability check and the registration.
    const mismatches: Array<[string, string, string[]]> = [
      ['office.bulk@pecmassiva.com', 'BRONZE', ['legalmail.it', 'testcert.legalmail.it']],
      ['office.rossi@legalmail.it', 'DIGITALDOMICILE', ['domiciliodigitale.legalmail.it']],
      ['office.rossi@legalmail.it', 'PECMASSIVA', ['pecmassiva.com']],
      ['office.rossi@domiciliodigitale.legalmail.it', 'GOLD', ['legalmail.it', 'testcert.legalmail.it']],
    ];
    for (const [address, type, allowedDomains] of mismatches) {
      const res = await t.gql(REGISTER, { input: registration(address, type) }, auth(token));
      expect(res.errors?.[0]?.extensions, `${address} ${type}`).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.address', allowedDomains });
      expect(res.extensions?.cost?.euro ?? 0).toBe(0);
    }
    const badType = await t.gql(REGISTER, { input: registration('a.b@legalmail.it', 'PLATINUM') }, auth(token));
    expect(badType.errors?.[0]?.extensions?.code).toMatch(/BAD_USER_INPUT|GRAPHQL_VALIDATION_FAILED/);
    expect(await calls()).toEqual([]);
  });

  it('accepts the vendor spelling of a box type and answers the contract one; one PDF for a digital domicile', async () => {
    const { registerMailbox: box } = await gql<{ registerMailbox: Obj }>(REGISTER, { input: registration('domicile.rossi@domiciliodigitale.legalmail.it', 'DOMICILIODIGITALE') });
    expect(box.boxType).toBe('DIGITALDOMICILE');
    const two = await t.gql(UPLOAD, { id: box.id, docs: [PDF_B64, PDF_B64] }, auth(token));
    expect(two.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'documents' });
    expect((await gql<{ uploadMailboxActivation: Obj }>(UPLOAD, { id: box.id, docs: [PDF_B64] })).uploadMailboxActivation.status).toBe('ACTIVATING');
  });

  it("does not show one account's mailbox to another", async () => {
    const { registerMailbox: box } = await gql<{ registerMailbox: Obj }>(REGISTER, { input: registration('private.box@legalmail.it') });
    const other = await t.gql<{ mailbox: Obj | null }>(`query($id: ID!) { mailbox(id: $id) { id } }`, { id: box.id }, auth(tokenB));
    expect(other.data?.mailbox).toBeNull();
    const it = subscribe(UPDATED, { id: box.id }, tokenB);
    const first = await withSafety(it.next(), 'refusal');
    expect(first.value?.errors?.[0]?.extensions?.code ?? (first.value?.errors?.[0] as Obj | undefined)?.message).toBeTruthy();
  });
});

describe('company-register notification', () => {
  it('from start to comunicazione_evasa, pushed, with the delegation form and its signed upload', async () => {
    const input = registerNotificationInput('azienda@legalmail.it');
    await t.clearCalls();
    const started = await t.gql<{ notifyCompanyRegister: Obj }>(
      `mutation($input: NotifyCompanyRegisterInput!) { notifyCompanyRegister(input: $input) { id status rawStatus done delegationForm { url } } }`,
      { input },
      auth(token),
    );
    expect(started.errors).toBeUndefined();
    const n = started.data!.notifyCompanyRegister;
    expect(n).toMatchObject({ status: 'CODE_REQUESTED', rawStatus: 'codice_in_richiesta', done: false, delegationForm: null });
    expect(started.extensions?.cost?.euro).toBeCloseTo(10, 6);
    const id = String(n.id);
    const SUB = `subscription($id: ID!) { pecNotificationUpdated(id: $id) { status done delegationForm { url } } }`;
    const it = subscribe(SUB, { id });
    expect(await next(it, 'pecNotificationUpdated')).toMatchObject({ status: 'CODE_REQUESTED' });

    await t.control('pec/advance', { id });
    const waiting = await next(it, 'pecNotificationUpdated');
    expect(waiting.status).toBe('AWAITING_DOCUMENTS');
    const form = await request(String((waiting.delegationForm as Obj).url));
    expect(
      Buffer.from(await form.body.arrayBuffer())
        .subarray(0, 4)
        .toString('latin1'),
    ).toBe('%PDF');

    // Finalizing before the delegation is in: refused before any call.
    const early = await t.gql(FINALIZE, { id, key: 'finalize-azienda-early' }, auth(token));
    expect(early.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'id', state: 'in_attesa_di_documenti' });

    const up = await gql<{ uploadCompanyRegisterDelegation: Obj }>(`mutation($id: ID!, $d: String!) { uploadCompanyRegisterDelegation(id: $id, document: $d) { status } }`, {
      id,
      d: PDF_B64,
    });
    expect(up.uploadCompanyRegisterDelegation.status).toBe('DOCUMENTS_UPLOADED');
    expect(await next(it, 'pecNotificationUpdated')).toMatchObject({ status: 'DOCUMENTS_UPLOADED' });

    // The provider waits for the finalize: nothing moves it, and reading it through the layer does not send it.
    expect(((await t.control('pec/advance', { id })) as Obj).notifications).toEqual([]);
    expect((await gql<{ pecNotification: Obj }>(`query($id: ID!) { pecNotification(id: $id) { status } }`, { id })).pecNotification.status).toBe('DOCUMENTS_UPLOADED');

    const fin = await t.gql<{ finalizeCompanyRegisterNotification: Obj }>(FINALIZE, { id, key: 'finalize-azienda-1' }, auth(token));
    expect(fin.errors).toBeUndefined();
    expect(fin.data!.finalizeCompanyRegisterNotification).toMatchObject({ status: 'DONE', rawStatus: 'comunicazione_evasa', done: true });
    expect(fin.extensions?.cost?.upstreamCalls).toBe(1);
    expect(await next(it, 'pecNotificationUpdated')).toMatchObject({ status: 'DONE', done: true });
    const end = await withSafety(it.next(), 'end of stream');
    expect(end.done).toBe(true);
    // Retried under its key, or again without one: answered as it is, nothing sent again.
    expect((await gql<{ finalizeCompanyRegisterNotification: Obj }>(FINALIZE, { id, key: 'finalize-azienda-1' })).finalizeCompanyRegisterNotification.status).toBe('DONE');
    expect((await gql<{ finalizeCompanyRegisterNotification: Obj }>(FINALIZE, { id })).finalizeCompanyRegisterNotification.status).toBe('DONE');
    // Another account cannot finalize it: its free list does not have it.
    const other = await t.gql(FINALIZE, { id }, auth(tokenB));
    expect(other.errors?.[0]?.extensions?.code).toBe('UPSTREAM_NOT_FOUND');

    // Every read by id only after the free list showed it not uploaded: the one after the provider's
    // step (its callback); the read after the upload is the list's; one finalize.
    expect(await calls()).toEqual([
      'POST /comunica_pec 200',
      'GET /comunica_pec 200',
      `GET /comunica_pec/${id} 200`,
      `GET /comunica_pec/${id}/procura_registro_imprese 200`,
      `POST /comunica_pec/${id}/procura_registro_imprese 200`,
      'GET /comunica_pec 200',
      `GET /comunica_pec/${id} 200`,
      'GET /comunica_pec 404',
    ]);
  });
});

describe('company-register notification finalize under an idempotency key', () => {
  /** A notification of `tk` in DOCUMENTS_UPLOADED (the provider's step moved by the test). */
  async function uploaded(name: string, tk = token): Promise<string> {
    const input = registerNotificationInput(`${name}@legalmail.it`);
    const id = String(
      (await gql<{ notifyCompanyRegister: Obj }>(`mutation($input: NotifyCompanyRegisterInput!) { notifyCompanyRegister(input: $input) { id } }`, { input }, tk))
        .notifyCompanyRegister.id,
    );
    await t.control('pec/advance', { id });
    expect((await gql<{ pecNotification: Obj }>(`query($id: ID!) { pecNotification(id: $id) { status } }`, { id }, tk)).pecNotification.status).toBe('AWAITING_DOCUMENTS');
    await gql(`mutation($id: ID!, $d: String!) { uploadCompanyRegisterDelegation(id: $id, document: $d) { status } }`, { id, d: PDF_B64 }, tk);
    return id;
  }
  const byId = async (id: string): Promise<number> => (await calls()).filter((c) => c.startsWith(`GET /comunica_pec/${id} `)).length;

  it('a key held answers without a second call; the same key for another notification is IDEMPOTENCY_KEY_REUSED, before any call', async () => {
    const one = await uploaded('idem-one');
    const two = await uploaded('idem-two');
    await t.clearCalls();
    expect((await gql<{ finalizeCompanyRegisterNotification: Obj }>(FINALIZE, { id: one, key: 'finalize-idem-1' })).finalizeCompanyRegisterNotification.status).toBe('DONE');
    const again = await t.gql<{ finalizeCompanyRegisterNotification: Obj }>(FINALIZE, { id: one, key: 'finalize-idem-1' }, auth(token));
    expect(again.data?.finalizeCompanyRegisterNotification.status).toBe('DONE');
    expect(again.extensions?.cost?.upstreamCalls).toBe(0);
    const reused = await t.gql(FINALIZE, { id: two, key: 'finalize-idem-1' }, auth(token));
    expect(reused.errors?.[0]?.extensions?.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await byId(one)).toBe(1);
    expect(await byId(two)).toBe(0);
  });

  it('an answer lost after the finalize ran upstream is an unknown outcome, OUTCOME_UNKNOWN under its key without another call', async () => {
    const id = await uploaded('idem-lost');
    await t.clearCalls();
    await t.control('faults', { area: 'pec', pathPrefix: `/comunica_pec/${id}`, reset: true, count: 1 });
    const lost = await t.gql(FINALIZE, { id, key: 'finalize-idem-lost' }, auth(token));
    expect(lost.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', outcome: 'unknown', idempotencyKey: 'finalize-idem-lost' });
    const retried = await t.gql(FINALIZE, { id, key: 'finalize-idem-lost' }, auth(token));
    expect(retried.errors?.[0]?.extensions).toMatchObject({ code: 'OUTCOME_UNKNOWN', outcome: 'unknown' });
    // One finalize reached the provider; the retry under the key sent nothing.
    expect(await byId(id)).toBe(1);
  });
});

describe('Company certified-mail facts', () => {
  it("adds whether the company's PEC is on a certified domain, bought only when asked", async () => {
    await t.clearCalls();
    const plain = await t.gql<{ company: Obj }>(`{ company(vatCode: "12485671007") { pec } }`, {}, auth(token));
    expect(plain.errors).toBeUndefined();
    expect(await t.calls('pec')).toEqual([]);
    const pec = String(plain.data!.company.pec);
    expect(pec).toContain('@');
    await t.clearCalls();
    const res = await t.gql<{ company: Obj }>(`{ company(vatCode: "12485671007") { pec certifiedMail { address domain certifiedDomain mailbox { id } } } }`, {}, auth(token));
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    const domain = pec.toLowerCase().split('@')[1];
    expect(res.data!.company.certifiedMail).toMatchObject({ address: pec.toLowerCase(), domain, mailbox: null });
    expect(typeof (res.data!.company.certifiedMail as Obj).certifiedDomain).toBe('boolean');
    // One domain check and one free list of the caller's mailboxes; the company's pec came from the cache.
    expect((await calls()).map((c) => c.replace(/ \d+$/, ''))).toEqual([`GET /domini_pec/${domain}`, 'GET /pec']);
    expect(await t.calls('company')).toEqual([]);
  });
});

describe('estimates', () => {
  it('prices each certified-mail operation before it runs (estimate only: nothing is called)', async () => {
    await t.clearCalls();
    const est = async (query: string, variables: Obj): Promise<number | undefined> =>
      (await t.gql(query, variables, { ...auth(token), 'x-openapi-estimate-only': '1' })).extensions?.cost?.estimate?.euro;
    expect(await est(REGISTER, { input: registration('estimate.box@legalmail.it') })).toBeCloseTo(5.001, 6);
    expect(await est(`mutation($id: ID!) { renewMailbox(id: $id, years: 3) { status } }`, { id: 'a'.repeat(24) })).toBeCloseTo(15, 6);
    expect(await est(`mutation($id: ID!) { upgradeMailbox(id: $id, boxType: GOLD) { status } }`, { id: 'a'.repeat(24) })).toBeCloseTo(3, 6);
    expect(await est(`mutation($id: ID!) { revokeMailbox(id: $id) { status } }`, { id: 'a'.repeat(24) })).toBe(0);
    expect(await est(FINALIZE, { id: 'a'.repeat(24) })).toBe(0);
    const recipients = Array.from({ length: 120 }, (_, i) => `r${i}@legalmail.it`);
    expect(
      await est(`mutation($input: BulkSendInput!, $c: BulkCredentialsInput!) { sendCertifiedMail(input: $input, credentials: $c) { id } }`, {
        input: { sender: 'bulk@pecmassiva.com', recipients, subject: 's', html: 'h' },
        c: { username: 'bulk@pecmassiva.com', password: 'x' },
      }),
    ).toBeCloseTo(0.15, 6);
    expect(await t.calls()).toEqual([]);
  });
});
