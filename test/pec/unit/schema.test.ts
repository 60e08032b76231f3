/**
 * The PEC subgraph's schema and tables: every type, field, argument, enum value and input field is
 * described; the paths table takes a deployment's `PEC_PATHS` and refuses bad ones; box-type words
 * and states are read in either spelling.
 */
import { describe, expect, it } from 'vitest';
import { priceOf } from '../../../contract/prices.ts';
import { boxTypeOf, contractState, mailboxStatus } from '../../../subgraphs/pec/model.ts';
import { boxTypeWord, PEC_DEFAULT_PATHS, pecEndpoints } from '../../../subgraphs/pec/upstream.ts';
import { subgraphSchema, undescribed } from '../../support/schema.ts';

describe('pec schema', () => {
  it('describes every type, field, argument, enum value and input field', () => {
    expect(undescribed(subgraphSchema('pec'))).toEqual([]);
  });
});

describe('pec paths table', () => {
  it("uses the contract's paths by default and a deployment's PEC_PATHS when given", () => {
    expect(pecEndpoints({}).activate).toMatchObject({ method: 'PATCH', path: '/pec/{id}/activation' });
    const vendor = pecEndpoints({ PEC_PATHS: JSON.stringify({ activate: '/pec/{id}/attivazione', uploadDelegation: 'PATCH /comunica_pec/{id}' }) });
    expect(vendor.activate).toMatchObject({ method: 'PATCH', path: '/pec/{id}/attivazione' });
    expect(vendor.uploadDelegation).toMatchObject({ method: 'PATCH', path: '/comunica_pec/{id}' });
    expect(vendor.register).toBe(PEC_DEFAULT_PATHS.register);
  });

  it('refuses unknown names, lost placeholders and non-JSON', () => {
    expect(() => pecEndpoints({ PEC_PATHS: '{"nope": "/x"}' })).toThrow(/unknown endpoint "nope"/);
    expect(() => pecEndpoints({ PEC_PATHS: '{"activate": "/pec/attivazione"}' })).toThrow(/placeholders/);
    expect(() => pecEndpoints({ PEC_PATHS: 'activate=/x' })).toThrow(/JSON/);
  });

  it('prices the paid operations sharing the pec segment by their whole path', () => {
    expect(priceOf('pec', 'GET', '/pec/0123456789abcdef01234567')).toBe(0);
    expect(priceOf('pec', 'GET', '/pec/{id}/rinnovo')).toBe(5);
    expect(priceOf('pec', 'GET', '/pec/0123456789abcdef01234567/rinnovo')).toBe(5);
    expect(priceOf('pec', 'PATCH', '/pec/{id}/activation')).toBe(0);
    expect(priceOf('pec', 'POST', '/pec')).toBe(5);
    expect(priceOf('pec', 'POST', '/comunica_pec/{id}/procura_registro_imprese')).toBe(0);
  });
});

describe('pec words', () => {
  it('reads both spellings of states and box types, and sends the configured ones', () => {
    expect(contractState('in_evasione')).toBe('in_attivazione');
    expect(mailboxStatus('in_evasione')).toBe('ACTIVATING');
    expect(mailboxStatus('IN_ATTIVAZIONE')).toBe('ACTIVATING');
    expect(mailboxStatus('something_new')).toBeNull();
    expect(boxTypeOf('DOMICILIODIGITALE')).toBe('DIGITALDOMICILE');
    expect(boxTypeOf('pecmassiva')).toBe('PECBULK');
    expect(boxTypeOf('bronze')).toBe('BRONZE');
    expect(boxTypeWord({}, 'DIGITALDOMICILE')).toBe('DIGITALDOMICILE');
    expect(boxTypeWord({ PEC_BOX_TYPE_WORDS: 'vendor' }, 'PECBULK')).toBe('PECMASSIVA');
  });
});
