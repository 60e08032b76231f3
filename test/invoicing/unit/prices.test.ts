/** The invoicing price table: pay-as-you-go by default, the subscription's prices selectable, a bad plan refused. */
import { describe, expect, it } from 'vitest';
import { loadPrices, priceOf, subscribedSurchargeOf, surchargeOf } from '../../../contract/prices.ts';

describe('invoicing prices', () => {
  it('pay-as-you-go by default: invoices 0.154, France/Germany 0.090, receipts 0.019, custom signature 0.045, the eleventh configuration 1', () => {
    const t = loadPrices({});
    expect(priceOf('invoice', 'POST', '/IT-invoices', t)).toBe(0.154);
    expect(priceOf('invoice', 'POST', '/WW-invoices', t)).toBe(0.09);
    expect(priceOf('invoice', 'POST', '/IT-receipts', t)).toBe(0.019);
    expect(priceOf('invoice', 'PATCH', '/IT-receipts/0123456789abcdef01234567', t)).toBe(0.019);
    expect(priceOf('invoice', 'DELETE', '/IT-receipts/0123456789abcdef01234567', t)).toBe(0.019);
    expect(priceOf('invoice', 'GET', '/IT-receipts/0123456789abcdef01234567', t)).toBe(0);
    expect(surchargeOf('invoice', 'custom-signature', t)).toBe(0.045);
    expect(surchargeOf('invoice', 'extra-configuration', t)).toBe(1);
  });

  it('OPENAPI_PRICE_PLAN=subscription never prices below pay-as-you-go: a subscription not known to be active is no discount', () => {
    const t = loadPrices({ OPENAPI_PRICE_PLAN: 'subscription' });
    expect(priceOf('invoice', 'POST', '/IT-invoices', t)).toBe(0.154);
    expect(priceOf('invoice', 'POST', '/WW-invoices', t)).toBe(0.09);
    expect(priceOf('invoice', 'POST', '/IT-receipts', t)).toBe(0.019);
    expect(surchargeOf('invoice', 'custom-signature', t)).toBe(0.045);
    // Under an active subscription the signature is still due, on top, at its subscription price.
    expect(subscribedSurchargeOf('invoice', 'custom-signature', t)).toBe(0.013);
    expect(subscribedSurchargeOf('invoice', 'extra-configuration', t)).toBe(1);
    expect(priceOf('company', 'GET', '/IT-start/12485671007', t)).toBe(priceOf('company', 'GET', '/IT-start/12485671007', loadPrices({})));
    expect(() => loadPrices({ OPENAPI_PRICE_PLAN: 'gold' })).toThrow(/OPENAPI_PRICE_PLAN/);
  });
});
