/**
 * The company bureau (CRIF) request (`IT-crif-azienda`) end to end, through the gateway against the
 * emulator: the order validated before paying, the delegation form as a signed URL, the signed
 * upload, live status over graphql-ws, completion through the layer's callback relayed to the
 * caller's own, reading one and the list — with the exact upstream calls and euro of each step.
 * Completion is driven explicitly (emulator timing 0 = only `advance` completes).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';
import { request } from 'undici';
import { bureauInput, CF, PDF } from '../../support/risk.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { withSafety as safety } from '../../support/safety.ts';
import { startReceiver, type Receiver } from '../../support/receiver.ts';
import type { Obj } from '../../../contract/values.ts';
import type { CompanyBureauInput } from '../../../subgraphs/risk/__generated__/resolvers-types.ts';

const ENV = { RISK_RELAY_ALLOW_PRIVATE: '1' };
const SAFETY_MS = 20_000;
/** The price of a company bureau order (contract/prices.ts `risk POST IT-crif-azienda`). */
const ORDER_EURO = 12;

let t: TestStack;
let receiver: Receiver;
let token = '';
const clients: Client[] = [];

const withSafety = <T>(p: Promise<T>, what: string): Promise<T> => safety(p, what, SAFETY_MS);
const auth = (): Record<string, string> => ({ authorization: `Bearer ${token}` });
const calls = async (): Promise<string[]> => (await t.calls('risk')).map((c) => `${c.method} ${c.path} ${c.status} ${c.price}`);

/** The person of the person bureau orders (`bureauInput`), without the e-mail a legal representative has not. */
function legalRepresentative(): CompanyBureauInput['legalRepresentative'] {
  const person: Partial<ReturnType<typeof bureauInput>> = bureauInput();
  delete person.email;
  return person as CompanyBureauInput['legalRepresentative'];
}

/** A valid company bureau order (ALFA's VAT number from the emulator's companies; Mario Rossi signs). */
function companyInput(over: Partial<CompanyBureauInput> = {}): CompanyBureauInput {
  return {
    companyName: 'Openapi SpA',
    legalForm: 'spa',
    taxCode: '12485671007',
    vatCode: '12485671007',
    certifiedEmail: 'azienda@pec.example.it',
    registeredOffice: { address: 'Viale Filippo Tommaso Marinetti', streetNumber: '221', city: 'Roma', postalCode: '00143', province: 'RM', country: 'Italia' },
    legalRepresentative: legalRepresentative(),
    companyRegistrationReportFile: PDF,
    ...over,
  };
}

const STATUS = 'id family state rawState done';
const FIELDS = `${STATUS} owner callback { url method field headers { name value } } subject { name taxCode vatCode }
  ... on CompanyBureauRequest { companyName legalForm taxCode vatCode certifiedEmail sdiCode registeredOffice { city postalCode province }
    legalRepresentative { firstName lastName taxCode gender birthPlace { city } residence { city } document { type number } documentFileName healthInsuranceCardFileName }
    companyRegistrationReportFileName delegationFileName signedDelegationFileName result }`;
const ORDER = `mutation($input: CompanyBureauInput!) { orderCompanyBureauReport(input: $input) { ${FIELDS} delegationForm { url fileName contentType } } }`;
const UPLOAD = `mutation($id: ID!, $f: String!) { uploadCompanySignedDelegation(id: $id, signedDelegationFile: $f) { ${STATUS} signedDelegationFileName } }`;
const READ = `query($id: ID!) { riskRequest(family: COMPANY_BUREAU, id: $id) { ${FIELDS} record } }`;
const LIST = `{ riskRequests(family: COMPANY_BUREAU) { id family state owner } }`;
const UPDATED = `subscription($id: ID!) { riskRequestUpdated(id: $id, family: COMPANY_BUREAU) { ${STATUS} } }`;

type Result = FormattedExecutionResult<Obj, unknown>;

async function nextState(it: AsyncIterator<Result>): Promise<string> {
  const r = await withSafety(it.next(), 'subscription event');
  expect(r.done).toBe(false);
  expect(r.value.errors, JSON.stringify(r.value.errors)).toBeUndefined();
  return String((r.value.data!.riskRequestUpdated as Obj).state);
}

beforeAll(async () => {
  t = await startTestStack(ENV);
  receiver = await startReceiver();
  await t.control('risk/timing', { completeAfterMs: 0 });
  token = await t.createToken(100);
});

afterAll(async () => {
  await Promise.allSettled(clients.map(async (c) => c.dispose()));
  await t?.close();
  await receiver?.close();
});

describe('company bureau (CRIF) request', () => {
  it('bad input is refused before any call: no certified e-mail nor SDI code, a wrong VAT number, a non-PDF report', async () => {
    await t.clearCalls();
    const cases: Array<[Partial<CompanyBureauInput>, string]> = [
      [{ certifiedEmail: null, sdiCode: '  ' }, 'input.certifiedEmail'],
      [{ vatCode: '12485671008' }, 'input.vatCode'],
      [{ sdiCode: 'TOO-LONG-CODE' }, 'input.sdiCode'],
      [{ companyRegistrationReportFile: Buffer.from('GIF89a').toString('base64') }, 'input.companyRegistrationReportFile'],
    ];
    for (const [over, field] of cases) {
      const res = await t.gql(ORDER, { input: companyInput(over) }, auth());
      expect(res.errors?.[0]?.extensions, field).toMatchObject({ code: 'BAD_USER_INPUT', field });
      expect(res.extensions?.cost).toMatchObject({ upstreamCalls: 0, euro: 0 });
    }
    const upload = await t.gql(UPLOAD, { id: 'a'.repeat(24), f: Buffer.from('not a pdf').toString('base64') }, auth());
    expect(upload.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'signedDelegationFile' });
    expect(await calls()).toEqual([]);
    expect(await t.credit(token)).toBe(100);
  });

  it('order → delegation form → signed upload → complete, over graphql-ws, the caller’s callback relayed; read one and the list', async () => {
    await t.clearCalls();
    const input = companyInput({ callback: { url: receiver.url, method: 'JSON', headers: [{ name: 'X-Session', value: 's1' }] } });
    const ordered = await t.gql<{ orderCompanyBureauReport: Obj }>(ORDER, { input }, auth());
    expect(ordered.errors, JSON.stringify(ordered.errors)).toBeUndefined();
    const order = ordered.data!.orderCompanyBureauReport;
    const id = String(order.id);
    expect(order).toMatchObject({
      family: 'COMPANY_BUREAU',
      state: 'PROCESSING',
      rawState: 'processing',
      done: false,
      companyName: 'Openapi SpA',
      legalForm: 'spa',
      taxCode: '12485671007',
      vatCode: '12485671007',
      certifiedEmail: 'azienda@pec.example.it',
      sdiCode: null,
      subject: { name: 'Openapi SpA', taxCode: '12485671007', vatCode: '12485671007' },
      registeredOffice: { city: 'Roma', postalCode: '00143', province: 'RM' },
      legalRepresentative: {
        firstName: 'Mario',
        lastName: 'Rossi',
        taxCode: CF,
        gender: 'MALE',
        birthPlace: { city: 'Terni' },
        document: { type: 'IDENTITY_CARD', number: 'CA12345AB' },
      },
      // The caller's own callback, never the layer's signed address the upstream was given.
      callback: { url: receiver.url, method: 'JSON', field: 'data' },
      signedDelegationFileName: null,
      result: null,
    });
    expect(String(order.owner)).toMatch(/@/);
    expect(order.companyRegistrationReportFileName).toMatch(/\.pdf$/);
    // One paid call: the order.
    expect(ordered.extensions?.cost).toMatchObject({ upstreamCalls: 1, euro: ORDER_EURO });
    expect(await calls()).toEqual([`POST /IT-crif-azienda 200 ${ORDER_EURO}`]);
    expect(await t.credit(token)).toBe(100 - ORDER_EURO);

    // The delegation form: a signed URL of the gateway, streamed from the upstream's /delega (free).
    await t.clearCalls();
    const form = order.delegationForm as Obj;
    expect(form).toMatchObject({ fileName: `${id}_delega.pdf`, contentType: 'application/pdf' });
    expect(String(form.url)).toMatch(new RegExp(`^${t.url}/files/risk/`));
    const doc = await request(String(form.url));
    const pdf = Buffer.from(await doc.body.arrayBuffer());
    expect([doc.statusCode, pdf.subarray(0, 5).toString('latin1')]).toEqual([200, '%PDF-']);
    expect(await calls()).toEqual([`GET /IT-crif-azienda/${id}/delega 200 0`]);

    // Live status.
    const client = createClient({ url: t.stack.gateway.wsUrl, webSocketImpl: WebSocket, connectionParams: auth(), retryAttempts: 0, lazy: true });
    clients.push(client);
    const updates = client.iterate<Obj>({ query: UPDATED, variables: { id } });
    expect(await nextState(updates)).toBe('PROCESSING');

    await t.clearCalls();
    const uploaded = await t.gql<{ uploadCompanySignedDelegation: Obj }>(UPLOAD, { id, f: pdf.toString('base64') }, auth());
    expect(uploaded.errors, JSON.stringify(uploaded.errors)).toBeUndefined();
    expect(uploaded.data!.uploadCompanySignedDelegation).toMatchObject({ id, family: 'COMPANY_BUREAU', state: 'IN_PROGRESS', rawState: 'in_progress' });
    expect(uploaded.data!.uploadCompanySignedDelegation.signedDelegationFileName).toMatch(/\.pdf$/);
    expect(uploaded.extensions?.cost).toMatchObject({ upstreamCalls: 1, euro: 0 });
    expect(await nextState(updates)).toBe('IN_PROGRESS');

    // Completion arrives through the layer's callback and is relayed to the caller's.
    await t.control('risk/advance', { id });
    expect(await nextState(updates)).toBe('COMPLETE');
    const relayed = await withSafety(
      receiver.find((d) => d.body.includes(id)),
      'relay',
    );
    expect(relayed.headers['x-session']).toBe('s1');
    const payload = JSON.parse(relayed.body) as { data: Obj };
    expect(payload.data).toMatchObject({ id, state: 'complete', callback: { url: receiver.url } });
    expect(await calls()).toEqual([`PATCH /IT-crif-azienda/${id} 200 0`, `GET /IT-crif-azienda/${id} 200 0`]);

    // Reading one and the list: free, one call each.
    await t.clearCalls();
    const read = await t.gql<{ riskRequest: Obj }>(READ, { id }, auth());
    expect(read.errors, JSON.stringify(read.errors)).toBeUndefined();
    expect(read.data!.riskRequest).toMatchObject({ id, state: 'COMPLETE', done: true, callback: { url: receiver.url }, result: { esito: 'OK', codice_fiscale: '12485671007' } });
    expect(read.extensions?.cost).toMatchObject({ upstreamCalls: 1, euro: 0 });
    // The layer's signed callback address (what the upstream holds) is shown nowhere.
    expect(JSON.stringify(read.data)).not.toContain('/callbacks/risk/');
    expect(((read.data!.riskRequest.record as Obj).callback as Obj).url).toBe(receiver.url);
    const list = await t.gql<{ riskRequests: Obj[] }>(LIST, {}, auth());
    expect(list.data!.riskRequests).toEqual([{ id, family: 'COMPANY_BUREAU', state: 'COMPLETE', owner: order.owner }]);
    expect(list.extensions?.cost).toMatchObject({ upstreamCalls: 1, euro: 0 });
    expect(await calls()).toEqual([`GET /IT-crif-azienda/${id} 200 0`, 'GET /IT-crif-azienda 200 0']);
    expect(await t.credit(token)).toBe(100 - ORDER_EURO);
  });
});
