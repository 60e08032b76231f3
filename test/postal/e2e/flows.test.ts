/**
 * The postal area through the gateway against the emulator's Istat data: every endpoint, exact
 * upstream calls and euro, public data shared across tenants, and address completion while typing.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { bureauInput } from '../../support/risk.ts';

let t: TestStack;

beforeAll(async () => {
  t = await startTestStack();
}, 60_000);
afterAll(async () => {
  await t?.close();
});
beforeEach(async () => {
  // Every test starts cold: no postal answer cached, no call logged.
  await t.cold();
});

const paths = async (): Promise<string[]> => (await t.calls('cap')).map((c) => `${c.method} ${c.path}`);

describe('postal lookups (Istat data)', () => {
  it('00136 → Roma, with province and region, in one call', async () => {
    const res = await t.gql<{
      postalCode: {
        code: string;
        places: Array<{ municipality: { istatCode: string; name: string }; hamlet: string | null }>;
        province: { code: string; name: string };
        region: string;
      };
    }>('{ postalCode(code: "00136") { code places { municipality { istatCode name } hamlet } province { code name } region } }');
    expect(res.errors).toBeUndefined();
    expect(res.data!.postalCode).toEqual({
      code: '00136',
      places: [{ municipality: { istatCode: '058091', name: 'Roma' }, hamlet: null }],
      province: { code: 'RM', name: 'Roma' },
      region: 'Lazio',
    });
    expect(await paths()).toEqual(['GET /cap/00136']);
    expect(res.extensions!.cost!.euro).toBe(0.04);
  });

  it('a postal code across a province line: each place has its own province (12071: Cuneo and Savona), from its Istat code and the province list', async () => {
    await t.clearCalls();
    const res = await t.gql<{
      postalCode: { places: Array<{ municipality: { name: string }; province: { code: string; name: string }; region: string }>; province: unknown; region: string };
    }>('{ postalCode(code: "12071") { places { municipality { name } province { code name } region } province { code } region } }');
    expect(res.errors).toBeUndefined();
    const pc = res.data!.postalCode;
    const sigle = new Set(pc.places.map((p) => p.province.code));
    expect([...sigle].sort()).toEqual(['CN', 'SV']);
    for (const p of pc.places) expect(p.province.name).toBe(p.province.code === 'CN' ? 'Cuneo' : 'Savona');
    // No single province for the area; both provinces are in Piemonte and Liguria: no single region either.
    expect(pc.province).toBeNull();
    expect(pc.region).toBeNull();
    expect(pc.places.map((p) => p.region)).toEqual(pc.places.map((p) => (p.province.code === 'CN' ? 'Piemonte' : 'Liguria')));
    expect(await paths()).toEqual(['GET /cap/12071', 'GET /province']);
  });

  it('H501 → Roma; Istat 058091 → Roma, with codes, province, region and postal codes', async () => {
    const byCadastral = await t.gql<{ municipality: { istatCode: string; name: string; suppressed: boolean } }>(
      '{ municipality(cadastralCode: "H501") { istatCode name suppressed } }',
    );
    expect(byCadastral.errors).toBeUndefined();
    expect(byCadastral.data!.municipality).toEqual({ istatCode: '058091', name: 'Roma', suppressed: false });
    expect(await paths()).toEqual(['GET /cerca_comuni']);
    // inside the day's free tier of cerca_comuni (1,440 calls): not charged
    expect((await t.calls('cap'))[0]).toMatchObject({ status: 200, price: 0 });

    await t.clearCalls();
    const byIstat = await t.gql<{
      municipality: {
        istatCode: string;
        cadastralCode: string;
        name: string;
        province: { code: string; name: string };
        region: { code: string; name: string };
        postalCodes: string[];
      };
    }>('{ municipality(istatCode: "058091") { istatCode cadastralCode name province { code name } region { code name } postalCodes } }');
    expect(byIstat.errors).toBeUndefined();
    const m = byIstat.data!.municipality;
    expect(m).toMatchObject({ istatCode: '058091', cadastralCode: 'H501', name: 'Roma', province: { code: 'RM', name: 'Roma' }, region: { code: '12', name: 'Lazio' } });
    expect(m.postalCodes).toContain('00136');
    // identity (cerca_comuni), comuni_base, the province and region lists (for codes), comuni_advance (cadastral code)
    expect((await paths()).sort()).toEqual(['GET /cerca_comuni', 'GET /comuni_advance/58091', 'GET /comuni_base/58091', 'GET /province', 'GET /regioni'].sort());
    // comuni_base €0.04 + comuni_advance €0.05; the search and the lists are inside their free tiers
    expect(byIstat.extensions!.cost!.euro).toBe(0.09);
  });

  it('unknown codes are null; malformed ones are refused before any call', async () => {
    const res = await t.gql('{ a: municipality(cadastralCode: "Z999") { name } b: postalCode(code: "99999") { code } }');
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({ a: null, b: null });
    await t.clearCalls();
    for (const q of [
      '{ postalCode(code: "0013") { code } }',
      '{ municipality(cadastralCode: "H50") { name } }',
      '{ municipality { name } }',
      '{ municipality(istatCode: "58091", cadastralCode: "H501") { name } }',
      '{ searchMunicipalities { name } }',
      '{ completeMunicipality(prefix: "Ro", limit: 0) { name } }',
    ]) {
      const bad = await t.gql(q);
      expect(bad.errors?.[0]?.extensions?.code, q).toBe('BAD_USER_INPUT');
    }
    expect(await t.calls('cap')).toEqual([]);
  });

  it('search combines the vendor filters', async () => {
    const res = await t.gql<{ searchMunicipalities: Array<{ istatCode: string; name: string }> }>('{ searchMunicipalities(name: "campo", province: "CB") { istatCode name } }');
    expect(res.errors).toBeUndefined();
    const names = res.data!.searchMunicipalities.map((m) => m.name);
    expect(names).toContain('Campobasso');
    expect(names).toContain('Campodipietra');
    expect(names.every((n) => n.toLowerCase().includes('campo'))).toBe(true);
    const call = (await t.calls('cap'))[0];
    expect(call.path).toBe('/cerca_comuni');
    const both = await t.gql<{ searchMunicipalities: Array<{ name: string }> }>('{ searchMunicipalities(postalCode: "86100", region: "Molise") { name } }');
    expect(both.data!.searchMunicipalities.map((m) => m.name)).toEqual(['Campobasso']);
  });

  it('lists: regions, provinces (all, of a region, one), metropolitan cities, suppressed municipalities, street types', async () => {
    const res = await t.gql<{
      regions: Array<{ istatCode: string; name: string; capital: string; municipalityCount: number; provinceCount: number }>;
      provinces: Array<{ code: string }>;
      lazio: Array<{ code: string }>;
      province: { code: string; name: string; istatCode: string; region: string };
      metropolitanCities: Array<{ name: string; capital: string }>;
      suppressedMunicipalities: Array<{ istatCode: string | null; name: string; cadastralCode: string | null; province: { code: string } }>;
      streetTypes: string[];
      via: string[];
    }>(`{
      regions { istatCode name capital municipalityCount provinceCount }
      provinces { code }
      lazio: provinces(region: "Lazio") { code }
      province(code: "rm") { code name istatCode region }
      metropolitanCities { name capital }
      suppressedMunicipalities(province: "VI") { istatCode name cadastralCode province { code } }
      streetTypes
      via: streetTypes(prefix: "VIA")
    }`);
    expect(res.errors).toBeUndefined();
    const d = res.data!;
    expect(d.regions).toHaveLength(20);
    expect(d.regions.find((r) => r.name === 'Lazio')).toEqual({ istatCode: '12', name: 'Lazio', capital: 'Roma', municipalityCount: 378, provinceCount: 5 });
    expect(d.provinces).toHaveLength(107);
    expect(d.lazio.map((p) => p.code).sort()).toEqual(['FR', 'LT', 'RI', 'RM', 'VT']);
    expect(d.province).toEqual({ code: 'RM', name: 'Roma', istatCode: '058', region: 'Lazio' });
    expect(d.metropolitanCities).toHaveLength(14);
    expect(d.metropolitanCities).toContainEqual({ name: 'ROMA', capital: 'Roma' });
    // Istat codes only where a source gives them (the vendor spec's example), never invented.
    expect(d.suppressedMunicipalities).toContainEqual({ istatCode: '024011', name: 'Barbarano Vicentino', cadastralCode: 'A627', province: { code: 'VI' } });
    expect(d.suppressedMunicipalities).toContainEqual({ istatCode: null, name: 'Mossano', cadastralCode: null, province: { code: 'VI' } });
    expect(d.streetTypes).toContain('PIAZZA');
    expect(d.via).toEqual(['VIA', 'VIALE']);
    expect((await paths()).sort()).toEqual(
      ['GET /citta_metropolitane', 'GET /comuni_soppressi', 'GET /dug', 'GET /dug', 'GET /province', 'GET /province/RM', 'GET /provincia', 'GET /regioni'].sort(),
    );
    // €0.01 each, but every list is inside its monthly free tier (10,000; 44,640 for /dug)
    expect(res.extensions!.cost!.euro).toBe(0);
    expect(res.extensions!.cost!.upstreamCalls).toBe(8);
  });
});

describe('public postal data is cached for days and shared across tenants', () => {
  it("a second tenant's lookup is answered by the first tenant's call", async () => {
    const a = await t.createToken(10);
    const b = await t.createToken(10);
    const q = '{ postalCode(code: "86100") { places { municipality { name } } } }';
    const first = await t.gql(q, {}, { authorization: `Bearer ${a}` });
    expect(first.extensions!.cost!.upstreamCalls).toBe(1);
    const second = await t.gql(q, {}, { authorization: `Bearer ${b}` });
    expect(second.data).toEqual(first.data);
    expect(second.extensions!.cost).toMatchObject({ upstreamCalls: 0, cacheHits: 1, euro: 0 });
    expect(await t.calls('cap')).toHaveLength(1);
    expect(await t.credit(b)).toBe(10);
  });
});

describe('address completion while typing', () => {
  it('10 prefixes of "Campobasso" make exactly one cerca_comuni call (€0.001 list price, €0 inside the free tier)', async () => {
    const word = 'Campobasso';
    const answers: string[][] = [];
    let euro = 0;
    let upstreamCalls = 0;
    for (let i = 1; i <= word.length; i++) {
      const res = await t.gql<{ completeMunicipality: Array<{ name: string; istatCode: string }> }>(
        'query ($p: String!) { completeMunicipality(prefix: $p, limit: 5) { name istatCode } }',
        { p: word.slice(0, i) },
      );
      expect(res.errors).toBeUndefined();
      answers.push(res.data!.completeMunicipality.map((m) => m.name));
      euro += res.extensions!.cost!.euro;
      upstreamCalls += res.extensions!.cost!.upstreamCalls;
    }
    expect(answers[0]).toEqual([]); // one letter: nothing called
    expect(answers[1].every((n) => n.toLowerCase().startsWith('ca'))).toBe(true);
    expect(answers[1]).toHaveLength(5);
    expect(answers[5]).toEqual(['Campobasso', 'Campobello di Licata', 'Campobello di Mazara']);
    expect(answers[6]).toEqual(['Campobasso']);
    expect(answers[9]).toEqual(['Campobasso']);
    expect(await t.calls('cap')).toMatchObject([{ method: 'GET', path: '/cerca_comuni', status: 200 }]);
    expect((await t.calls('cap'))[0].price).toBe(0);
    expect(upstreamCalls).toBe(1);
    expect(euro).toBe(0);
  });

  it('exact names come first and a province narrows the search', async () => {
    const res = await t.gql<{ completeMunicipality: Array<{ name: string }> }>('{ completeMunicipality(prefix: "roma", limit: 3) { name } }');
    expect(res.data!.completeMunicipality[0].name).toBe('Roma');
    const rm = await t.gql<{ completeMunicipality: Array<{ name: string }> }>('{ completeMunicipality(prefix: "Ro", province: "RM", limit: 50) { name } }');
    expect(rm.data!.completeMunicipality.map((m) => m.name)).toEqual(expect.arrayContaining(['Roma', 'Rocca di Papa', 'Roviano']));
  });
});

describe('Company.address.municipality through the gateway', () => {
  it('a company address names its municipality, resolved by the postal subgraph', async () => {
    const res = await t.gql<{
      company: {
        address: {
          town: string;
          province: { code: string };
          municipality: {
            istatCode: string;
            cadastralCode: string;
            name: string;
            province: { code: string; name: string };
            region: { code: string; name: string };
            postalCodes: string[];
          };
        };
      };
    }>(
      '{ company(vatCode: "12485671007") { address { town province { code } municipality { istatCode cadastralCode name province { code name } region { code name } postalCodes } } } }',
    );
    expect(res.errors).toBeUndefined();
    const a = res.data!.company.address;
    expect(a.town).toBe('ROMA');
    expect(a.municipality).toMatchObject({
      istatCode: '058091',
      cadastralCode: 'H501',
      name: 'Roma',
      province: { code: 'RM', name: 'Roma' },
      region: { code: '12', name: 'Lazio' },
    });
    expect(a.municipality.postalCodes).toContain('00136');
    // the company's cheapest source of its address, then the municipality by cadastral code
    expect((await t.calls('company')).map((c) => `${c.method} ${c.path}`)).toEqual(['GET /IT-address/12485671007']);
    expect((await paths()).sort()).toEqual(['GET /cerca_comuni', 'GET /comuni_base/58091', 'GET /province', 'GET /regioni']);
    // IT-address €0.03 + comuni_base €0.04 (the search and the lists inside their free tiers)
    expect(res.extensions!.cost!.euro).toBe(0.07);
    // the estimate (list prices, nothing assumed free or cached) covers it
    expect(res.extensions!.cost!.estimate!.euro).toBeGreaterThanOrEqual(0.091);
  });

  it('an address known by town and province (a beneficial owner residence) resolves by name', async () => {
    const res = await t.gql<{
      company: {
        beneficialOwners: Array<{ address: { town: string | null; province: { code: string } | null; municipality: { istatCode: string; name: string } | null } | null }>;
      };
    }>('{ company(vatCode: "12485671007") { beneficialOwners { address { town province { code } municipality { istatCode name } } } } }');
    expect(res.errors).toBeUndefined();
    const addresses = res.data!.company.beneficialOwners.map((o) => o.address).filter((a) => a?.town);
    const italian = addresses.filter((a) => /^[A-Z]{2}$/.test(a!.province?.code ?? ''));
    const foreign = addresses.filter((a) => !/^[A-Z]{2}$/.test(a!.province?.code ?? ''));
    expect(italian.length).toBeGreaterThan(0);
    for (const a of italian) {
      expect(a!.municipality?.name.toUpperCase()).toBe(a!.town!.toUpperCase());
      expect(a!.municipality?.istatCode).toMatch(/^\d{6}$/);
    }
    // a residence abroad (no Italian province) names no municipality and costs nothing
    for (const a of foreign) expect(a!.municipality).toBeNull();
    const search = (await t.calls('cap')).filter((c) => c.path === '/cerca_comuni');
    expect(search.length).toBe(new Set(italian.map((a) => `${a!.town}@${a!.province?.code}`)).size);
  });
});

describe('every Italian address type names its municipality', () => {
  it("a person bureau request's birth place and residence (risk subgraph) resolve through the postal subgraph", async () => {
    const res = await t.gql<{
      orderPersonBureauReport: {
        birthPlace: { city: string; municipality: { istatCode: string; cadastralCode: string; name: string } };
        residence: { municipality: { postalCodes: string[] } };
      };
    }>(
      `mutation ($input: PersonBureauInput!) { orderPersonBureauReport(input: $input) {
        birthPlace { city municipality { istatCode cadastralCode name } }
        residence { municipality { postalCodes } }
      } }`,
      { input: bureauInput() },
    );
    expect(res.errors).toBeUndefined();
    const r = res.data!.orderPersonBureauReport;
    expect(r.birthPlace.municipality).toEqual({ istatCode: '055032', cadastralCode: 'L117', name: 'Terni' });
    expect(r.residence.municipality.postalCodes).toContain('05100');
    // Terni@TR is searched once for both places; the cadastral code comes from comuni_advance
    expect((await paths()).sort()).toEqual(['GET /cerca_comuni', 'GET /comuni_advance/55032', 'GET /comuni_base/55032']);
  });
});
