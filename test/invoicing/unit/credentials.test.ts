/**
 * Credentials of the invoicing area never reach a log line: the custom signature's password (sent
 * only in the submission's headers) and the receipt credentials' password and PIN, as they appear
 * in GraphQL variables, upstream bodies and headers.
 */
import { describe, expect, it } from 'vitest';
import { REDACTED, redactText, redactValue } from '../../../platform/redact.ts';

describe('invoicing credentials in logs', () => {
  it('redacts the signature password and the receipt password and PIN in values', () => {
    const variables = {
      signature: { user: 'signer', password: 's1gn-pass' },
      input: { receiptsCredentials: { taxCode: 'RSSMRA80D52H501T', password: 'portal-pw', pin: '987654' } },
    };
    const out = JSON.stringify(redactValue(variables));
    for (const secret of ['s1gn-pass', 'portal-pw', '987654']) expect(out).not.toContain(secret);
    expect(out).toContain(REDACTED);
    expect(JSON.stringify(redactValue({ 'x-signature-password': 's1gn-pass' }))).not.toContain('s1gn-pass');
  });

  it('redacts them in text (a logged JSON body)', () => {
    const text = redactText(`upstream body {"receipts_authentication":{"taxCode":"RSSMRA80D52H501T","password":"portal-pw","pin":"987654"}}`);
    expect(text).not.toContain('portal-pw');
    expect(text).not.toContain('987654');
  });
});
