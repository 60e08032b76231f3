import { describe, expect, it } from 'vitest';
import { periodOf } from '../../../contract/prices.ts';

/** Italy's calendar day of `ms`, formatted for that instant (what `periodOf` remembers per UTC hour). */
const ROME = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Rome', year: 'numeric', month: '2-digit', day: '2-digit' });
const romeDay = (ms: number): string => ROME.format(new Date(ms));

describe('periodOf: the day, month and year in Italy', () => {
  it('changes at midnight in Rome, in winter (UTC+1) and in summer (UTC+2)', () => {
    expect(periodOf('day', Date.parse('2026-01-14T22:59:59.999Z'))).toBe('2026-01-14');
    expect(periodOf('day', Date.parse('2026-01-14T23:00:00.000Z'))).toBe('2026-01-15');
    expect(periodOf('day', Date.parse('2026-07-01T21:59:59.999Z'))).toBe('2026-07-01');
    expect(periodOf('day', Date.parse('2026-07-01T22:00:00.000Z'))).toBe('2026-07-02');
    expect(periodOf('month', Date.parse('2026-07-31T22:00:00.000Z'))).toBe('2026-08');
    expect(periodOf('year', Date.parse('2026-12-31T23:00:00.000Z'))).toBe('2027');
    expect(periodOf('year', Date.parse('2026-12-31T22:59:59.999Z'))).toBe('2026');
  });

  it('agrees with a fresh time-zone formatting every 13 minutes over a year and a half, clock changes included, in any order', () => {
    const start = Date.parse('2026-01-01T00:00:00Z');
    const times: number[] = [];
    for (let t = start; t < start + 550 * 86_400_000; t += 13 * 60_000) times.push(t);
    // Out of order too: what is remembered per hour must not leak into another hour.
    const shuffled = times.map((t, i) => times[(i * 7_919) % times.length]);
    const wrong = [...times, ...shuffled].filter((t) => periodOf('day', t) !== romeDay(t)).map((t) => new Date(t).toISOString());
    expect(wrong).toEqual([]);
  });
});
