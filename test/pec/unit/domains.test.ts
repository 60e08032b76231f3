/** Which provider domains serve which box types, per environment: the sandbox's test domain never in production's defaults. */
import { describe, expect, it } from 'vitest';
import { providerDomains } from '../../../subgraphs/pec/upstream.ts';

describe('PEC provider domains', () => {
  it('has testcert.legalmail.it in the emulator and sandbox defaults only', () => {
    expect(providerDomains({}).standard).toEqual(['legalmail.it', 'testcert.legalmail.it']);
    expect(providerDomains({ OPENAPI_ENV: 'sandbox' }).standard).toContain('testcert.legalmail.it');
    expect(providerDomains({ OPENAPI_ENV: 'production' })).toEqual({
      standard: ['legalmail.it'],
      DIGITALDOMICILE: ['domiciliodigitale.legalmail.it'],
      PECBULK: ['pecmassiva.com'],
    });
  });

  it('PEC_PROVIDER_DOMAINS changes the families it names over the environment default', () => {
    const d = providerDomains({ OPENAPI_ENV: 'production', PEC_PROVIDER_DOMAINS: '{"PECBULK": ["Bulk.example.it"]}' });
    expect(d).toEqual({ standard: ['legalmail.it'], DIGITALDOMICILE: ['domiciliodigitale.legalmail.it'], PECBULK: ['bulk.example.it'] });
    expect(() => providerDomains({ PEC_PROVIDER_DOMAINS: '{"GOLD": ["x.it"]}' })).toThrow(/unknown family "GOLD"/);
  });
});
