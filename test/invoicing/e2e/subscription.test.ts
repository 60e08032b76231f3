/**
 * A signed invoice under an invoicing subscription (`OPENAPI_PRICE_PLAN=subscription`, the account
 * known through `OPENAPI_PRECHECK=on`): the subscription pays the invoice, the custom signature is
 * still charged on top at its subscription price (0.013), never dropped. The estimate stays the
 * higher pay-as-you-go price (0.154 + 0.045), the reported cost is what the call cost. Through the
 * gateway against the emulator.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { invoiceInput, SENDER_VAT } from '../../support/invoicing.ts';

const EMAIL = 'invoicing-subscriber@example.com';
const OPERATOR_KEY = 'operator-key-invoicing-0123456789';
const APIKEY = 'invoicing-subscriber-apikey-0123456789';
const PER_REQUEST = 0.049;

let t: TestStack;
let token = '';
const auth = (): Record<string, string> => ({ authorization: `Bearer ${token}` });
const ISSUE = `mutation($input: InvoiceInput!, $signature: SignatureCredentialsInput) { issueInvoice(input: $input, signature: $signature) { id } }`;
const input = (number: string): Record<string, unknown> => invoiceInput({ number });

beforeAll(async () => {
  t = await startTestStack({
    LAYER_SECRET: 'invoicing-subscription-test-secret-0123456789',
    INVOICING_POLL_INTERVAL_MS: '60000',
    OPENAPI_PRICE_PLAN: 'subscription',
    OPENAPI_EMAIL: EMAIL,
    OPENAPI_APIKEY: APIKEY,
    OPENAPI_PRECHECK: 'on',
    OPENAPI_MANAGED_TOKEN: 'off',
    OPENAPI_ACCOUNT_API_KEY: OPERATOR_KEY,
  });
  await t.control('oauth/account', { email: EMAIL, apikey: APIKEY, credit: 1 });
  await t.control('oauth/subscribe', { email: EMAIL, scope: 'POST:test.invoice.openapi.com/IT-invoices', totalRequests: 10, pricePerRequest: PER_REQUEST });
  const res = await t.gql<{ createToken: { value: string } }>(
    'mutation { createToken(input: { scopes: ["*:invoice.openapi.com/*"] }) { value } }',
    {},
    { 'x-openapi-account-key': OPERATOR_KEY },
  );
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  token = res.data!.createToken.value;
  for (const [q, v] of [
    [
      `mutation($input: ConfigureInvoicingInput!) { configureInvoicing(input: $input) { id } }`,
      { input: { fiscalId: SENDER_VAT, name: 'Openapi SpA', email: 'fatture@example.com' } },
    ],
    [`mutation { activateCustomSignature(fiscalId: "${SENDER_VAT}", credentials: { user: "signer", password: "p4ss-w0rd-secret" }) { active } }`, {}],
  ] as const) {
    const r = await t.gql(q, v, auth());
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  }
}, 60_000);

afterAll(async () => {
  await t?.close();
});

it('a signed invoice under an active subscription costs its price per request plus the signature at 0.013; one unsigned costs the request alone', async () => {
  await t.clearCalls();
  const before = await t.credit(token);
  const signed = await t.gql(ISSUE, { input: input('SUB-1'), signature: { user: 'signer', password: 'p4ss-w0rd-secret' } }, auth());
  expect(signed.errors, JSON.stringify(signed.errors)).toBeUndefined();
  // Estimated at the higher, pay-as-you-go prices: the subscription is not known before the call.
  expect(signed.extensions!.cost!.estimate?.euro).toBeCloseTo(0.154 + 0.045, 6);
  expect(signed.extensions!.cost!.euro).toBeCloseTo(PER_REQUEST + 0.013, 6);
  // The emulator: the subscription paid the invoice, the wallet the signature only.
  expect((await t.calls('invoice')).filter((c) => c.method === 'POST').map((c) => `${c.path} ${c.price}`)).toEqual(['/IT-invoices 0.013']);
  expect(await t.credit(token)).toBeCloseTo(before - 0.013, 6);

  const plain = await t.gql(ISSUE, { input: input('SUB-2') }, auth());
  expect(plain.errors, JSON.stringify(plain.errors)).toBeUndefined();
  expect(plain.extensions!.cost!.euro).toBeCloseTo(PER_REQUEST, 6);
  expect(await t.credit(token)).toBeCloseTo(before - 0.013, 6);
});
