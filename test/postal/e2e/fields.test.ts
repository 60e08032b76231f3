/**
 * Issue 22 (postal): the vendor fields the layer used to drop, through the gateway against the
 * emulator: `comuni_advance`'s patrono, municipio and fax (MunicipalityDetails), `/regioni`'s
 * presidente, cod_fiscale, piva, pec, sito and sede (Region), with exact upstream calls.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { isValidItalianVat } from '../../../contract/checksums.ts';

let t: TestStack;

beforeAll(async () => {
  t = await startTestStack();
}, 60_000);
afterAll(async () => {
  await t?.close();
});
beforeEach(async () => {
  await t.cold();
});

const paths = async (): Promise<string[]> => (await t.calls('cap')).map((c) => `${c.method} ${c.path}`);

interface Details {
  patronSaint: { name: string | null; feastDay: string | null } | null;
  townHallAddress: string | null;
  fax: string | null;
}

describe('comuni_advance: patron saint, town hall, fax', () => {
  it("Roma's details carry the vendor's example values, from one comuni_advance call", async () => {
    const res = await t.gql<{ municipality: { details: Details } }>('{ municipality(istatCode: "058091") { details { patronSaint { name feastDay } townHallAddress fax } } }');
    expect(res.errors).toBeUndefined();
    expect(res.data!.municipality.details).toEqual({
      patronSaint: { name: 'SS. Pietro e Paolo', feastDay: '29 giugno' },
      townHallAddress: 'Via del Campidoglio',
      fax: '+39 06/67103590',
    });
    // The municipality's identity (cerca_comuni, inside its free tier) and comuni_advance (€0.05).
    expect((await paths()).sort()).toEqual(['GET /cerca_comuni', 'GET /comuni_advance/58091']);
    expect(res.extensions!.cost!.euro).toBe(0.05);
  });

  it('any other municipality has them too, the same on every call', async () => {
    const q = '{ municipality(istatCode: "070006") { details { patronSaint { name feastDay } townHallAddress fax } } }';
    const first = await t.gql<{ municipality: { details: Details } }>(q);
    expect(first.errors).toBeUndefined();
    const d = first.data!.municipality.details;
    expect(d.patronSaint?.name).toMatch(/^S/);
    expect(d.patronSaint?.feastDay).toMatch(/^\d{1,2} [a-z]+$/);
    expect(d.townHallAddress).toMatch(/ \d+$/);
    expect(d.fax).toMatch(/^\+39 0\d+\/\d{7}$/);
    expect((await paths()).sort()).toEqual(['GET /cerca_comuni', 'GET /comuni_advance/70006']);
    // A second read is served by the cache (shared, for days): no further call, no euro.
    await t.clearCalls();
    const again = await t.gql<{ municipality: { details: Details } }>(q);
    expect(again.data!.municipality.details).toEqual(d);
    expect(await paths()).toEqual([]);
    expect(again.extensions!.cost!.euro).toBe(0);
  });
});

describe('/regioni: president, codes, PEC, web site, seat', () => {
  it('every region has them, from one /regioni call; Abruzzo as in the vendor spec, piva "" as null', async () => {
    const res = await t.gql<{
      regions: Array<{
        name: string;
        president: string | null;
        taxCode: string | null;
        vatCode: string | null;
        pec: string | null;
        website: string | null;
        headquarters: string | null;
      }>;
    }>('{ regions { name president taxCode vatCode pec website headquarters } }');
    expect(res.errors).toBeUndefined();
    const regions = res.data!.regions;
    expect(regions).toHaveLength(20);
    expect(regions.find((r) => r.name === 'Abruzzo')).toEqual({
      name: 'Abruzzo',
      president: 'Marco Marsilio',
      taxCode: '80003170661',
      vatCode: null,
      pec: 'urp@pec.regione.abruzzo.it',
      website: 'www.regione.abruzzo.it',
      headquarters: "Regione Abruzzo / Palazzo Silone - Via Leonardo da Vinci 6, 67100 L'Aquila",
    });
    for (const r of regions) {
      expect(r.president, r.name).toMatch(/^\S+ \S+$/);
      expect(isValidItalianVat(r.taxCode!), r.name).toBe(true);
      if (r.vatCode !== null) expect(isValidItalianVat(r.vatCode), r.name).toBe(true);
      expect(r.pec, r.name).toMatch(/@pec\.regione\.[a-z]+\.it$/);
      expect(r.website, r.name).toMatch(/^www\.regione\.[a-z]+\.it$/);
      expect(r.headquarters, r.name).toMatch(/^Regione /);
    }
    const lazio = regions.find((r) => r.name === 'Lazio')!;
    expect(lazio.website).toBe('www.regione.lazio.it');
    expect(lazio.headquarters).toMatch(/, 00\d{3} Roma$/);
    expect(await paths()).toEqual(['GET /regioni']);
    // €0.01 list price, inside the monthly free tier (10,000)
    expect((await t.calls('cap'))[0]).toMatchObject({ status: 200, price: 0 });
    expect(res.extensions!.cost!.upstreamCalls).toBe(1);
  });
});
