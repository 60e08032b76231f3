/**
 * Issue 22 (PEC), through the gateway against the emulator with exact upstream calls:
 * - a mailbox order carries the vendor's optional `sottotipo_cliente` (+ `_altro`), `cellulare`,
 *   `comune_nascita_richiedente` and identity-document fields, validated before any paid call;
 * - any bulk sending's receipts are readable by its code (GET /send/{code}), also one made outside
 *   the layer, typed.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { PEC_APPLICANT as applicant, PEC_HOLDER as holder } from '../../support/pec.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { DEFAULT_BULK_PASSWORD, DEFAULT_BULK_USERNAME } from '../../../emulator/pecmassiva/index.ts';
import type { Obj } from '../../../contract/values.ts';

let t: TestStack;
let token: string;

beforeAll(async () => {
  t = await startTestStack({ LAYER_SECRET: 'pec-fields-test-secret-0123456789', PEC_POLL_INTERVAL_MS: '60000' });
  await t.control('pecmassiva/timing', { acceptAfterMs: 0, deliverAfterMs: 0 });
  token = await t.createToken(200);
}, 60_000);
afterAll(async () => {
  await t?.close();
});
beforeEach(async () => {
  await t.clearCalls();
});

const as = (): Record<string, string> => ({ authorization: `Bearer ${token}` });
const calls = async (area: string): Promise<string[]> => (await t.calls(area)).map((c) => `${c.method} ${c.path} ${c.status}`);

/** GET on the emulator, straight (what the service holds, as the vendor's client would read it). */
async function emulator(path: string, headers: Record<string, string>): Promise<Obj> {
  const res = await request(`${t.stack.emulatorUrl}${path}`, { headers });
  return (await res.body.json()) as Obj;
}

const REGISTER = 'mutation($input: RegisterMailboxInput!) { registerMailbox(input: $input) { id address status } }';

describe('mailbox order: the vendor optional fields', () => {
  it('subtype, mobile, birth city and identity document reach POST /pec in the vendor names', async () => {
    const input = {
      address: 'fields.order22@legalmail.it',
      boxType: 'BRONZE',
      customerType: 'X',
      customerSubtype: 'X',
      customerSubtypeOther: 'Studio associato',
      applicant: {
        ...applicant,
        birthCity: 'Roma',
        mobile: '+39 333 1234567',
        identityDocument: { type: 'IDENTITY_CARD', number: 'ca 1234567 ab', issuedBy: 'Comune di Roma', issueDate: '2020-03-01', expiryDate: '2099-03-01' },
      },
      holder,
    };
    const res = await t.gql<{ registerMailbox: { id: string; address: string; status: string } }>(REGISTER, { input }, as());
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    const box = res.data!.registerMailbox;
    expect(box.status).toBe('REGISTERED');
    // Availability first (priced), then the registration.
    expect(await calls('pec')).toEqual(['GET /verifica_pec/fields.order22%40legalmail.it 200', 'POST /pec 200']);

    // What the service holds: the fields in the vendor's names and forms (dates dd/mm/yyyy).
    const rec = (await emulator(`/pec/pec/${box.id}`, { authorization: `Bearer ${token}` })).data as Obj;
    expect(rec).toMatchObject({
      tipo_cliente: 'X',
      sottotipo_cliente: 'X',
      sottotipo_cliente_altro: 'Studio associato',
      comune_nascita_richiedente: 'Roma',
      cellulare: '+393331234567',
      tipo_documento: 'CARTA_D_IDENTITA',
      numero_documento: 'CA 1234567 AB',
      documento_rilasciato_da: 'Comune di Roma',
      data_rilascio_documento: '01/03/2020',
      data_scadenza_documento: '01/03/2099',
    });
  });

  it('bad optional fields are refused before any call', async () => {
    const base = { address: 'fields.refused22@legalmail.it', boxType: 'BRONZE', customerType: 'PV', holder };
    const doc = { type: 'PASSPORT', number: 'YA1234567' };
    const bad: Array<[Obj, string]> = [
      [{ ...base, customerSubtype: 'ZZ', applicant }, ''],
      [{ ...base, customerSubtypeOther: 'Other', applicant }, 'input.customerSubtypeOther'],
      [{ ...base, customerSubtype: 'X', applicant }, 'input.customerSubtypeOther'],
      [{ ...base, applicant: { ...applicant, mobile: 'call me' } }, 'input.applicant.mobile'],
      [{ ...base, applicant: { ...applicant, birthCity: '  ' } }, 'input.applicant.birthCity'],
      [{ ...base, applicant: { ...applicant, identityDocument: { ...doc, type: 'ID_CARD' } } }, ''],
      [{ ...base, applicant: { ...applicant, identityDocument: { ...doc, number: '#1' } } }, 'input.applicant.identityDocument.number'],
      [{ ...base, applicant: { ...applicant, identityDocument: { ...doc, issueDate: '2020-02-30' } } }, 'input.applicant.identityDocument.issueDate'],
      [{ ...base, applicant: { ...applicant, identityDocument: { ...doc, issueDate: '2999-01-01' } } }, 'input.applicant.identityDocument.issueDate'],
      [{ ...base, applicant: { ...applicant, identityDocument: { ...doc, expiryDate: '2001-01-01' } } }, 'input.applicant.identityDocument.expiryDate'],
      [{ ...base, applicant: { ...applicant, identityDocument: { ...doc, issueDate: '2020-01-01', expiryDate: '2019-01-01' } } }, 'input.applicant.identityDocument.expiryDate'],
    ];
    for (const [input, field] of bad) {
      const res = await t.gql(REGISTER, { input }, as());
      const err = res.errors?.[0];
      expect(err?.extensions?.code, JSON.stringify(input)).toBe('BAD_USER_INPUT');
      if (field) expect(err?.extensions?.field, JSON.stringify(input)).toBe(field);
    }
    expect(await calls('pec')).toEqual([]);
  });
});

describe('any bulk sending is readable by its code', () => {
  const RECEIPTS = `query($c: BulkCredentialsInput!, $code: String!) {
    bulkSendingReceipts(credentials: $c, code: $code) { kind sender recipient recipientAddress date dateTime subject body }
  }`;
  const creds = { username: DEFAULT_BULK_USERNAME, password: DEFAULT_BULK_PASSWORD };

  it('a sending made outside the layer: its message and receipts, typed, from one GET /send/{code}', async () => {
    // Sent straight to the service (another application), not through the layer.
    const sent = await request(`${t.stack.emulatorUrl}/pecmassiva/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        username: creds.username,
        password: creds.password,
        sender: creds.username,
        recipient: ['anna@legalmail.it', 'bounce.me@legalmail.it'],
        subject: 'Avviso',
        body: '<p>Ciao</p>',
      }),
    });
    const code = ((await sent.body.json()) as { message_id: string }).message_id;
    expect(sent.statusCode).toBe(201);
    await t.control('pecmassiva/advance', { code });
    await t.clearCalls();

    const res = await t.gql<{ bulkSendingReceipts: Array<Obj & { kind: string; recipientAddress: string }> }>(RECEIPTS, { c: creds, code }, as());
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    const items = res.data!.bulkSendingReceipts;
    const of = (who: string): string[] => items.filter((r) => r.recipientAddress === who).map((r) => r.kind);
    expect(of('anna@legalmail.it')).toEqual(['MESSAGE', 'ACCEPTANCE', 'DELIVERY']);
    expect(of('bounce.me@legalmail.it')).toEqual(['MESSAGE', 'ACCEPTANCE', 'NON_DELIVERY']);
    const message = items.find((r) => r.kind === 'MESSAGE')!;
    expect(message.subject).toBe(`POSTA CERTIFICATA: Avviso ${code}`);
    expect(message.body).toBe('<p>Ciao</p>');
    for (const r of items) {
      expect(r.dateTime).toEqual(new Date(Date.parse(r.date as string)).toISOString());
      expect(JSON.stringify(r)).not.toContain(DEFAULT_BULK_PASSWORD);
    }
    expect(await calls('pecmassiva')).toEqual([`GET /send/${code} 200`]);
    expect(res.extensions!.cost!.upstreamCalls).toBe(1);
    // 0.001 € list price, inside the daily free tier of 1,440
    expect(res.extensions!.cost!.euro).toBe(0);
  });

  it('an unknown code is null; wrong credentials are UNAUTHENTICATED; a malformed code is refused before any call', async () => {
    const unknown = await t.gql<{ bulkSendingReceipts: unknown }>(RECEIPTS, { c: creds, code: '2020082610003492' }, as());
    expect(unknown.errors).toBeUndefined();
    expect(unknown.data!.bulkSendingReceipts).toBeNull();
    const wrong = await t.gql(RECEIPTS, { c: { ...creds, password: 'not-the-password' }, code: '2020082610003492' }, as());
    expect(wrong.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(await calls('pecmassiva')).toEqual(['GET /send/2020082610003492 404', 'GET /send/2020082610003492 401']);
    await t.clearCalls();
    const bad = await t.gql(RECEIPTS, { c: creds, code: '../inbox' }, as());
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(bad.errors?.[0]?.extensions?.field).toBe('code');
    expect(await calls('pecmassiva')).toEqual([]);
  });
});
