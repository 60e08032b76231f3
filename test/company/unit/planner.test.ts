/**
 * The company planner buys the least total euro: its plan equals a brute-force minimum over every
 * combination of purchasable sources (tiers and single-purpose endpoints), for every need of up to
 * three facets and for 500 random needs, with and without random sources already cached (free),
 * and with the identifiers each source accepts respected.
 */
import { describe, expect, it } from 'vitest';
import {
  FACETS,
  planCost,
  planIsCallable,
  planPurchase,
  SOURCE_COVERAGE,
  SOURCES,
  sourcePrice,
  type Facet,
  type IdentifierKind,
  type Source,
} from '../../../subgraphs/company/facets.ts';

/** A set of facets as two 32-bit words (there are fewer than 64 facets). */
type Mask = [number, number];
const maskOf = (facets: Iterable<Facet>): Mask => {
  const m: Mask = [0, 0];
  for (const f of facets) {
    const i = FACETS.indexOf(f);
    m[i >> 5] = (m[i >> 5] | (1 << (i & 31))) >>> 0;
  }
  return m;
};
const holds = (have: Mask, need: Mask): boolean => (have[0] & need[0]) >>> 0 === need[0] && (have[1] & need[1]) >>> 0 === need[1];

/** Every combination of sources (computed once), with what it covers. */
const COMBINATIONS = Array.from({ length: (1 << SOURCES.length) - 1 }, (_, i) => {
  const plan = SOURCES.filter((_, j) => (i + 1) & (1 << j));
  return { plan, mask: maskOf(plan.flatMap((s) => [...SOURCE_COVERAGE[s]])), idx: plan.map((s) => SOURCES.indexOf(s)) };
});

const lexLess = (a: readonly number[], b: readonly number[]): boolean => {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] < b[i];
  return a.length < b.length;
};

/** Every combination ordered by the tie rules: least euro, fewer paid calls, fewer calls, table order. */
function ranked(cached: ReadonlySet<Source>): Array<(typeof COMBINATIONS)[number] & { euro: number }> {
  return COMBINATIONS.map((c) => {
    const paid = c.plan.filter((s) => !cached.has(s));
    return { ...c, euro: Math.round(paid.reduce((sum, s) => sum + sourcePrice(s), 0) * 1e6) / 1e6, paid: paid.length };
  }).sort((a, b) =>
    Math.abs(a.euro - b.euro) > 1e-9
      ? a.euro - b.euro
      : a.paid !== b.paid
        ? a.paid - b.paid
        : a.plan.length !== b.plan.length
          ? a.plan.length - b.plan.length
          : lexLess(a.idx, b.idx)
            ? -1
            : 1,
  );
}

const RANKED_FRESH = ranked(new Set());

/** The brute-force minimum: the first combination, in that order, that covers the need and can be called. */
function bruteForce(
  need: readonly Facet[],
  cached: ReadonlySet<Source>,
  known: ReadonlySet<IdentifierKind>,
  order = cached.size === 0 ? RANKED_FRESH : ranked(cached),
): { plan: Source[]; euro: number } | null {
  const m = maskOf(need);
  const hit = order.find((c) => holds(c.mask, m) && planIsCallable(c.plan, known));
  return hit ? { plan: hit.plan, euro: hit.euro } : null;
}

/** Deterministic RNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALL_KINDS = new Set<IdentifierKind>(['vatCode', 'taxCode', 'id']);
const NONE = new Set<Source>();

function check(need: readonly Facet[], cached: ReadonlySet<Source>, known: ReadonlySet<IdentifierKind>): void {
  const expected = bruteForce(need, cached, known);
  if (!expected) {
    expect(() => planPurchase(need, { cached, known }), need.join(',')).toThrow();
    return;
  }
  const plan = planPurchase(need, { cached, known });
  // Same euro as the brute-force minimum, and (same tie rules) the same plan.
  expect(planCost(plan, cached).euro, `${need.join(',')} cached=${[...cached].join(',')}`).toBeCloseTo(expected.euro, 9);
  expect(plan, `${need.join(',')} cached=${[...cached].join(',')} known=${[...known].join(',')}`).toEqual(expected.plan);
}

describe('planPurchase is the least-euro set of sources', () => {
  it('for every need of one, two and three facets (nothing cached)', () => {
    const F = FACETS;
    for (let i = 0; i < F.length; i++) {
      check([F[i]], NONE, ALL_KINDS);
      for (let j = i + 1; j < F.length; j++) {
        check([F[i], F[j]], NONE, ALL_KINDS);
        for (let k = j + 1; k < F.length; k++) check([F[i], F[j], F[k]], NONE, ALL_KINDS);
      }
    }
  }, 120_000);

  it('for 500 random needs, with random sources cached and random identifiers known (seeded)', () => {
    const r = rng(8);
    const kindsChoices: IdentifierKind[][] = [['vatCode', 'taxCode', 'id'], ['vatCode'], ['taxCode'], ['id']];
    for (let n = 0; n < 500; n++) {
      const size = 1 + Math.floor(r() * 12);
      const need = [...new Set(Array.from({ length: size }, () => FACETS[Math.floor(r() * FACETS.length)]))];
      const cached = new Set(SOURCES.filter(() => r() < 0.2));
      const known = new Set(kindsChoices[Math.floor(r() * kindsChoices.length)]);
      check(need, n % 2 === 0 ? NONE : cached, known);
    }
  }, 120_000);

  it('buys the two cheaper sources of the issue’s examples', () => {
    // identity + address + managers + shareholders + ecofin: €0.65, not IT-aml's €0.90.
    const profile: Facet[] = ['companyName', 'vatCode', 'address', 'managers', 'shareholdersSummary', 'ecofinSummary'];
    expect(planPurchase(profile)).toEqual(['IT-advanced', 'IT-stakeholders']);
    expect(planCost(planPurchase(profile)).euro).toBe(0.65);
    // status + managers: €0.55, not IT-full's €1.50.
    const statusManagers: Facet[] = ['activityStatus', 'managers'];
    expect(planCost(planPurchase(statusManagers)).euro).toBe(0.55);
    expect(planPurchase(statusManagers)).toEqual(['IT-start', 'IT-stakeholders']);
  });

  it('weighs the single-purpose endpoints like tiers, and counts cached sources as free', () => {
    expect(planPurchase(['sdiCode'])).toEqual(['IT-sdicode']);
    expect(planPurchase(['pec'])).toEqual(['IT-pec']);
    expect(planPurchase(['companyName'])).toEqual(['IT-name']);
    expect(planPurchase(['address', 'companyName'])).toEqual(['IT-address']);
    expect(planPurchase(['vatGroup'])).toEqual(['IT-vatgroup']);
    expect(planPurchase(['sdiCode'], { cached: new Set<Source>(['IT-start']) })).toEqual(['IT-start']);
  });

  it('respects the identifiers each source accepts', () => {
    // Known by tax code only: IT-vatgroup (VAT number or id) needs a source telling the VAT number first.
    const plan = planPurchase(['vatGroup'], { known: new Set<IdentifierKind>(['taxCode']) });
    expect(plan).toEqual(['IT-name', 'IT-vatgroup']);
    // Known by id only: the composite tiers need a source that accepts the id and tells the VAT number.
    expect(planPurchase(['managers'], { byIdOnly: true })).toEqual(['IT-stakeholders', 'IT-name']);
  });
});
