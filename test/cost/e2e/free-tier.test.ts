/**
 * Free tiers through the gateway: the 1,441st `cerca_comuni` of a day is the first one priced (by
 * the layer's meter and by the emulator's wallet alike), `extensions.cost.freeTier` says what
 * remains, and a new day (fake clocks, layer and emulator, crossing Italian midnight) is free again.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack.ts';

let t: TestStack;
/** The layer's clock: the emulator's (manual) clock plus what the test moved both by. */
let now = 0;

interface Cost {
  upstreamCalls: number;
  euro: number;
  freeTier?: Array<{ endpoint: string; period: string; limit: number; used: number; remaining: number }>;
}

beforeAll(async () => {
  t = await startTestStack({}, { clock: () => now });
  const clock = (await t.control('clock', { mode: 'manual' })) as { nowMs: number };
  now = clock.nowMs;
}, 60_000);
afterAll(async () => {
  await t?.close();
});

/** Moves the emulator's clock and the layer's by `ms`. */
async function advance(ms: number): Promise<void> {
  await t.control('clock', { advanceMs: ms });
  now += ms;
}

/** Milliseconds from `ms` to the next midnight in Rome. */
function toRomeMidnight(ms: number): number {
  const hm = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Rome', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).format(new Date(ms));
  const [h, m, s] = hm.split(':').map(Number) as [number, number, number];
  return 86_400_000 - ((h * 60 + m) * 60 + s) * 1000 - (ms % 1000);
}

/** `n` distinct searches (distinct Istat codes, so none is a cache hit) in one operation. */
async function searches(from: number, n: number, token: string): Promise<Cost> {
  const fields = Array.from({ length: n }, (_, i) => `s${from + i}: searchMunicipalities(istatCode: "${from + i}") { istatCode }`).join(' ');
  const res = await t.gql(`{ ${fields} }`, {}, { authorization: `Bearer ${token}` });
  expect(res.errors).toBeUndefined();
  return res.extensions!.cost as Cost;
}

it('the 1,441st cerca_comuni of a day is the first priced; the next day starts free again', async () => {
  const token = await t.createToken(10);
  let sent = 0;
  let euro = 0;
  for (let i = 0; i < 8; i++) {
    const cost = await searches(1 + sent, 180, token);
    expect(cost.upstreamCalls).toBe(180);
    sent += 180;
    euro += cost.euro;
    expect(cost.freeTier).toEqual([{ endpoint: 'cap GET cerca_comuni', period: 'day', limit: 1440, used: sent, remaining: 1440 - sent }]);
  }
  expect(sent).toBe(1440);
  expect(euro).toBe(0);
  expect(await t.credit(token)).toBe(10);

  const first = await searches(5001, 1, token);
  expect(first).toMatchObject({ upstreamCalls: 1, euro: 0.001, freeTier: [{ endpoint: 'cap GET cerca_comuni', period: 'day', limit: 1440, used: 1441, remaining: 0 }] });
  // the emulator's wallet agrees: the 1,441st is the first it charges
  expect(await t.credit(token)).toBe(9.999);
  const charged = (await t.calls('cap')).filter((c) => c.price > 0);
  expect(charged).toHaveLength(1);

  // Past midnight in Rome (both clocks), the day's free calls are back.
  await advance(toRomeMidnight(now) + 60_000);
  const nextDay = await searches(6001, 2, token);
  expect(nextDay).toMatchObject({ upstreamCalls: 2, euro: 0, freeTier: [{ endpoint: 'cap GET cerca_comuni', period: 'day', limit: 1440, used: 2, remaining: 1438 }] });
  expect(await t.credit(token)).toBe(9.999);
}, 120_000);

it('each tenant has its own free tier; endpoints without one are priced from the first call', async () => {
  const other = await t.createToken(10);
  const cost = await searches(7001, 1, other);
  expect(cost).toMatchObject({ euro: 0, freeTier: [{ used: 1, remaining: 1439 }] });
  const res = await t.gql('{ municipality(istatCode: "058091") { postalCodes } }', {}, { authorization: `Bearer ${other}` });
  const c = res.extensions!.cost as Cost;
  // cerca_comuni (free) for the identity, comuni_base (no free tier) for the postal codes
  expect(c.euro).toBe(0.04);
  expect(c.freeTier).toEqual([{ endpoint: 'cap GET cerca_comuni', period: 'day', limit: 1440, used: 2, remaining: 1438 }]);
  expect(await t.credit(other)).toBe(9.96);
});
