/**
 * The one coercion of upstream values (`subgraphs/upstream/coerce.ts`), and that the company and
 * risk areas both use it: an integer field given a fraction is rounded in both (it used to be
 * rounded by company and dropped to null by risk).
 */
import { describe, expect, it } from 'vitest';
import { bool, dateTime, float, int, str, unixSeconds } from '../../../subgraphs/upstream/coerce.ts';
import { normalizeItAdvanced } from '../../../subgraphs/company/normalize.ts';
import { callbackOf, kycQueryOf, toCreditScore } from '../../../subgraphs/risk/model.ts';

describe('coerce', () => {
  it('str: trimmed text, numbers as text; blanks and "NULL" are null', () => {
    expect(str(' ROMA ')).toBe('ROMA');
    expect(str(42)).toBe('42');
    for (const v of ['', '   ', 'NULL', null, undefined, Number.NaN, {}, true]) expect(str(v)).toBeNull();
  });

  it('float: numbers and numeric strings', () => {
    expect(float(12.5)).toBe(12.5);
    expect(float(' 12.5 ')).toBe(12.5);
    expect(float('-3')).toBe(-3);
    for (const v of ['', 'abc', '12,5', Number.POSITIVE_INFINITY, null, true]) expect(float(v)).toBeNull();
  });

  it('int: a fraction is rounded to the nearest integer, never dropped', () => {
    expect(int(12)).toBe(12);
    expect(int(12.7)).toBe(13);
    expect(int('12.7')).toBe(13);
    expect(int(12.5)).toBe(13);
    expect(int(12.49)).toBe(12);
    expect(int(-0.4)).toBe(0);
    expect(Object.is(int(-0.4), 0)).toBe(true);
    for (const v of ['', 'twelve', null, undefined, false]) expect(int(v)).toBeNull();
  });

  it('bool: booleans, 1/0 and "true"/"false" in any case', () => {
    expect([bool(true), bool(1), bool('1'), bool('TRUE'), bool(' true ')]).toEqual([true, true, true, true, true]);
    expect([bool(false), bool(0), bool('0'), bool('False')]).toEqual([false, false, false, false]);
    for (const v of ['yes', 2, null, '']) expect(bool(v)).toBeNull();
  });

  it('dateTime: Unix seconds or milliseconds, ISO and SQL spellings, UTC without a zone', () => {
    expect(dateTime(1622452306)).toBe('2021-05-31T09:11:46.000Z');
    expect(dateTime('1622452306')).toBe('2021-05-31T09:11:46.000Z');
    expect(dateTime(1622452306123)).toBe('2021-05-31T09:11:46.123Z');
    expect(dateTime('2013-07-19')).toBe('2013-07-19T00:00:00.000Z');
    expect(dateTime('2025-05-16 18:10:10')).toBe('2025-05-16T18:10:10.000Z');
    expect(dateTime('2021-12-31T00:00:00')).toBe('2021-12-31T00:00:00.000Z');
    expect(dateTime('2023-03-08T11:25:08.0331456Z')).toBe('2023-03-08T11:25:08.033Z');
    expect(dateTime('2020-01-01T10:00:00+02:00')).toBe('2020-01-01T08:00:00.000Z');
    expect(dateTime('2020-01-01T10:00:00+0200')).toBe('2020-01-01T08:00:00.000Z');
    for (const v of [0, -5, '', 'yesterday', '2021-13-45', '2023-02-30', 'March 7, 2023', null]) expect(dateTime(v)).toBeNull();
    expect(unixSeconds('2025-05-16 18:10:10')).toBe(1747419010);
  });
});

describe('both areas use it', () => {
  it('company: a fractional employee count is rounded', () => {
    const m = normalizeItAdvanced({ vatCode: '12485671007', balanceSheets: { last: { year: 2023, employees: 12.7, turnover: 1000.5 }, all: [] } });
    expect(m.employees?.count).toBe(13);
    expect(m.ecofin?.turnover).toBe(1000.5);
  });

  it('risk: a fractional severity, profile score or retry is rounded (it used to become null)', () => {
    const score = toCreditScore('ADVANCED', { risk_severity: '412.6', data: { profiles: { positions_count: 3.2, profiles: [{ name: 'x', score: 7.5 }] } } });
    expect(score.severity).toBe(413);
    expect(score.profiles?.positionsCount).toBe(3);
    expect(score.profiles?.profiles[0]?.score).toBe(8);
    expect(callbackOf({ url: 'https://x.example/', retry: '2.0' })?.retry).toBe(2);
  });

  it('risk: booleans sent as 1/0 are read, not dropped; text is trimmed and a blank is null', () => {
    expect(kycQueryOf({ name: ' Mario Rossi ', removeDeceased: 1, entityType: '' })).toMatchObject({ name: 'Mario Rossi', removeDeceased: true, entityType: null });
    expect(callbackOf({ url: ' https://x.example/ ', field: '' })).toMatchObject({ url: 'https://x.example/', field: 'data' });
  });
});
