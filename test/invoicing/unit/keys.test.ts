/**
 * The invoicing area's default idempotency keys and the configuration's place (unit): a receipt
 * without the till's key is keyed by its content for exactly the retry window after its first
 * order; a return by the sale and the items returned in any order; a configuration's place among
 * the account's by creation.
 */
import { describe, expect, it } from 'vitest';
import { invoiceKeyOf, placeOf, receiptKeyAt, receiptKeysOf, RECEIPT_RETRY_WINDOW_MS, returnKeyOf } from '../../../subgraphs/invoicing/service.ts';

const SALE = {
  fiscal_id: '12485671007',
  items: [{ description: 'Caffè', quantity: 1, unit_price: 1.2, vat_rate_code: '10' }],
  cash_payment_amount: 1.2,
  electronic_payment_amount: 0,
};
const W = RECEIPT_RETRY_WINDOW_MS;

describe('receipt content keys', () => {
  it('a retry within the window after the first order gets its key, also across a window boundary', () => {
    const first = 5 * W + W - 1000; // one second before a boundary
    const k1 = receiptKeyAt(receiptKeysOf(SALE, first), null, first);
    const retry = first + 2000; // next window
    const keys = receiptKeysOf(SALE, retry);
    expect(keys.previous).toBe(k1);
    expect(receiptKeyAt(keys, first, retry)).toBe(k1);
  });

  it('an identical sale a window or more after the first order is another key', () => {
    const first = 5 * W + 1000;
    const k1 = receiptKeyAt(receiptKeysOf(SALE, first), null, first);
    const later = first + W;
    const keys = receiptKeysOf(SALE, later);
    expect(receiptKeyAt(keys, first, later)).not.toBe(k1);
    expect(receiptKeyAt(keys, first, later)).toBe(keys.current);
    expect(receiptKeysOf(SALE, first + 2 * W).previous).not.toBe(k1);
  });

  it('another content is another key', () => {
    expect(receiptKeysOf({ ...SALE, tags: ['sale-2'] }, 0).current).not.toBe(receiptKeysOf(SALE, 0).current);
  });
});

describe('return keys', () => {
  it('the same items in any order are one key; other quantities or another sale another', () => {
    const a = { id: '100001', quantity: 1 };
    const b = { id: '100002', quantity: 2 };
    expect(returnKeyOf('s1', [a, b])).toBe(returnKeyOf('s1', [b, a]));
    expect(returnKeyOf('s1', [a, { ...b, quantity: 1 }])).not.toBe(returnKeyOf('s1', [a, b]));
    expect(returnKeyOf('s2', [a, b])).not.toBe(returnKeyOf('s1', [a, b]));
    expect(returnKeyOf('s1', [a])).toMatch(/^return:s1:/);
  });
});

describe('a configuration\u2019s place', () => {
  it('by creation time, the list order among equals; null when not listed', () => {
    const list = [
      { fiscal_id: 'C', create_timestamp: 30 },
      { fiscal_id: 'A', create_timestamp: 10 },
      { fiscal_id: 'B', create_timestamp: 30 },
    ];
    expect(['A', 'C', 'B', 'D'].map((f) => placeOf(list, f))).toEqual([0, 1, 2, null]);
  });
});

describe('invoice keys', () => {
  it('a self-invoice (TD16–TD20) of the company never shares the key of its TD01 of the same number and year', () => {
    const doc = { fiscalId: '12485671007', number: '1', date: '2025-03-10' };
    expect(invoiceKeyOf({ ...doc, documentType: 'TD01' })).toBe(invoiceKeyOf(doc));
    expect(invoiceKeyOf({ ...doc, documentType: 'TD17' })).not.toBe(invoiceKeyOf({ ...doc, documentType: 'TD01' }));
    expect(invoiceKeyOf({ ...doc, documentType: 'TD17' })).not.toBe(invoiceKeyOf({ ...doc, documentType: 'TD18' }));
    expect(invoiceKeyOf({ ...doc, documentType: 'TD17', date: '2025-12-01' })).toBe(invoiceKeyOf({ ...doc, documentType: 'TD17' }));
  });
});
