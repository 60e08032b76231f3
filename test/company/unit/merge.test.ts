/**
 * Merging what several tiers answered for one company: precedence by tier rank (not by arrival),
 * leaf by leaf, so a partial section of a lower tier never replaces a fuller one.
 */
import { describe, expect, it } from 'vitest';
import { vendorData } from '../../../subgraphs/company/fixtures/examples.ts';
import { TIER_COVERAGE, type Tier } from '../../../subgraphs/company/facets.ts';
import { CompanyPurchases } from '../../../subgraphs/company/loaders.ts';
import type { CompanyModel } from '../../../subgraphs/company/model.ts';
import { mergeModels, normalizeComposite, normalizeItAdvanced, normalizeItStart } from '../../../subgraphs/company/normalize.ts';
import type { VComposite, VItAdvanced } from '../../../subgraphs/company/upstream.ts';

const VAT = '12485671007';
const first = <T>(key: string): T => (vendorData(key) as T[])[0];
const start = (): CompanyModel => normalizeItStart(first<VItAdvanced>('GET /IT-start/{vatCode_taxCode_or_id}'));
const advanced = (): CompanyModel => normalizeItAdvanced(first<VItAdvanced>('GET /IT-advanced/{vatCode_taxCode_or_id}'));
const composite = (tier: string): CompanyModel => normalizeComposite(vendorData(`GET /${tier}/{vatCode_or_taxCode} #synchronous`) as VComposite);

/** The merged model after recording `answers` in the given order. */
function recorded(answers: Array<[Tier, CompanyModel]>): CompanyModel {
  const purchases = new CompanyPurchases();
  const entry = purchases.entryFor({ vatCode: VAT });
  for (const [tier, model] of answers) purchases.record(entry, model, TIER_COVERAGE[tier], tier);
  return entry.model;
}

describe('merging the tiers of one company', () => {
  it('gives the same model whatever order IT-advanced and IT-full arrive in', () => {
    const advancedFirst = recorded([
      ['IT-advanced', advanced()],
      ['IT-full', composite('IT-full')],
    ]);
    const fullFirst = recorded([
      ['IT-full', composite('IT-full')],
      ['IT-advanced', advanced()],
    ]);
    expect(fullFirst).toEqual(advancedFirst);
  });

  it('keeps the composite tier’s fuller sections when IT-advanced arrives last', () => {
    const m = recorded([
      ['IT-full', composite('IT-full')],
      ['IT-advanced', advanced()],
    ]);
    // sections IT-advanced holds only in part
    expect(m.ecofin?.turnoverRange).toEqual({ code: 'TR7', description: '1000000 - 4999999' });
    expect(m.ecofin?.enterpriseSize?.code).toBe('SMALL');
    expect(m.ecofin?.turnover).toBe(4432761);
    expect(m.shareholders?.[0]?.owners[0]).toMatchObject({ sinceDate: '2022-11-23T00:00:00.000Z', town: 'ROMA', serviceNumber: 'IT8A380807S0001' });
    expect(m.dates?.incorporationDate).toBe('2013-07-11T00:00:00.000Z');
    expect(m.employees).toEqual({ range: { code: 'ER4', description: '11 - 20' }, count: 15, trend: 7.14 });
    expect(m.atecoClassification?.secondaryAteco).toBe('6202');
    // what only IT-advanced holds is kept too
    expect(m.balanceSheets?.length).toBeGreaterThan(0);
    expect(m.address).toMatchObject({ streetNumber: '221', townCode: 'H501', province: { code: 'RM', description: 'ROMA' }, country: { code: 'IT' } });
  });

  it('lets a lower tier fill only the leaves a higher one lacks', () => {
    const m = recorded([
      ['IT-aml', { vatCode: VAT, ecofin: { turnoverRange: { code: 'TR7', description: null }, turnover: null } }],
      ['IT-start', start()],
      ['IT-advanced', { vatCode: VAT, ecofin: { turnover: 4043407, turnoverRange: null }, dates: { startDate: '2013-10-20T00:00:00.000Z' } }],
    ]);
    expect(m.ecofin).toEqual({ turnoverRange: { code: 'TR7', description: null }, turnover: 4043407 });
    expect(m.dates).toEqual({ registrationDate: '2013-07-19T00:00:00.000Z', startDate: '2013-10-20T00:00:00.000Z' });
    expect(m.companyName).toBe('OPENAPI S.P.A.');
  });

  it('ranks search results below every tier', () => {
    const purchases = new CompanyPurchases();
    const entry = purchases.entryFor({ vatCode: VAT });
    purchases.record(entry, { vatCode: VAT, companyName: 'FROM START', pec: null }, TIER_COVERAGE['IT-start'], 'IT-start');
    purchases.seed({ vatCode: VAT, companyName: 'FROM SEARCH', pec: 'x@pec.it' }, []);
    expect(entry.model.companyName).toBe('FROM START');
    expect(entry.model.pec).toBe('x@pec.it');
  });
});

describe('mergeModels', () => {
  it('takes a list whole: the primary’s unless it is empty', () => {
    const owners = [{ percentShare: 100, shareType: null, owners: [] }];
    expect(mergeModels({ shareholders: [] }, { shareholders: owners }).shareholders).toEqual(owners);
    const other = [{ percentShare: 50, shareType: { code: 'P', description: null }, owners: [] }];
    expect(mergeModels({ shareholders: other }, { shareholders: owners }).shareholders).toEqual(other);
  });

  it('does not mix coded values with different codes', () => {
    const m = mergeModels({ address: { province: { code: 'RM', description: null } } }, { address: { province: { code: 'MI', description: 'MILANO' } } });
    expect(m.address?.province).toEqual({ code: 'RM', description: null });
    const same = mergeModels({ address: { province: { code: 'RM', description: null } } }, { address: { province: { code: 'RM', description: 'ROMA' } } });
    expect(same.address?.province).toEqual({ code: 'RM', description: 'ROMA' });
  });

  it('keeps null where neither side knows a value, and leaves absent sections absent', () => {
    const m = mergeModels({ pec: null }, { sdiCode: 'USAL8PV' });
    expect(m).toEqual({ pec: null, sdiCode: 'USAL8PV' });
    expect('ecofin' in m).toBe(false);
  });
});
