/**
 * The emulator's postal-code area (`cap.openapi.it`), from Istat's municipalities (`data.ts`).
 * Paths, parameters and shapes follow the vendor spec (REFERENCE §6): every answer in the standard
 * envelope, Istat codes written without leading zeros as the vendor does (`58091`), any form
 * accepted in paths and filters.
 *
 * Designed here (the contract lists them, no public source shows them):
 * - `GET /provincia[?regione=&sigla=]`: the contract's second name for the province list, with the
 *   filters its singular name suggests (a region's provinces, one province by code), same items
 *   as `/province`;
 * - `GET /dug[?dug=]`: street types, `[{"dug":"VIA"}]`, optionally those starting with `dug`.
 *
 * The spec documents no errors: unknown codes answer 404 (`error` 404, "… not found"), a search
 * without any filter 400 (`error` 400), as the other areas do.
 *
 * `comuni_advance` and `/regioni` carry the vendor's civic fields (patron saint, town hall, fax;
 * president, codes, PEC, site, seat) from `civic.ts`: the spec's own examples, else deterministic fiction.
 *
 * `cerca_comuni` filters combine (AND): `comune` (name contains, case and accents ignored),
 * `cap`, `istat`, `codice_catasto`, `regione` (name or Istat code), `provincia` (name or sigla).
 * Suppressed municipalities match too, with `suppressed: true`.
 */
import { fail, ok, type AreaModule, type EmuResponse, type Route } from '../core.ts';
import { istat6 } from '../../contract/istat.ts';
import { fold, postalData, STREET_TYPES, vendorIstatOf, type Municipality, type Province } from './data.ts';
import { municipalityCivic, regionCivic } from './civic.ts';

const notFound = (what: string): EmuResponse => fail(404, 404, `${what} not found`);

const province = (p: Province): Record<string, unknown> => ({
  sigla: p.sigla,
  provincia: p.name,
  residenti: p.population,
  num_comuni: p.municipalities,
  istat: p.istat,
  regione: p.region,
});

function matchesRegion(m: Municipality, q: string): boolean {
  const f = fold(q);
  return fold(m.region) === f || (/^\d{1,2}$/.test(q.trim()) && m.regionCode === q.trim().padStart(2, '0'));
}

function matchesProvince(m: Municipality, q: string): boolean {
  const t = q.trim();
  return m.sigla.toLowerCase() === t.toLowerCase() || fold(m.province) === fold(t) || (/^\d{1,3}$/.test(t) && m.provinceCode === t.padStart(3, '0'));
}

const search: Route['handler'] = (req) => {
  const q = (k: string): string | null => {
    const v = req.query.get(k)?.trim();
    return v ? v : null;
  };
  const comune = q('comune');
  const cap = q('cap');
  const istat = q('istat');
  const catasto = q('codice_catasto');
  const regione = q('regione');
  const provincia = q('provincia');
  if (!comune && !cap && !istat && !catasto && !regione && !provincia) return fail(400, 400, 'at least one of comune, cap, istat, codice_catasto, regione, provincia is required');
  const data = postalData();
  const name = comune ? fold(comune) : null;
  const istatFull = istat ? istat6(istat) : null;
  if (istat && !istatFull) return ok([]);
  const out: Array<Record<string, unknown>> = [];
  for (const m of [...data.municipalities, ...data.suppressed]) {
    if (name && !fold(m.name).includes(name)) continue;
    if (cap && !m.zips.includes(cap)) continue;
    if (istatFull && m.istat !== istatFull) continue;
    if (catasto && m.cadastral !== catasto.toUpperCase()) continue;
    if (regione && !matchesRegion(m, regione)) continue;
    if (provincia && !matchesProvince(m, provincia)) continue;
    out.push({ istat: vendorIstatOf(m.istat), comune: m.name, suppressed: m.suppressed });
  }
  return ok(out);
};

function municipality(code: string): Municipality | null {
  const istat = istat6(code);
  return istat ? (postalData().byIstat.get(istat) ?? null) : null;
}

const routes: Route[] = [
  { method: 'GET', pattern: '/cerca_comuni', handler: search },
  {
    method: 'GET',
    pattern: '/comuni_base/:istat',
    handler: (_req, p) => {
      const m = municipality(p.istat ?? '');
      if (!m) return notFound('city');
      return ok({ istat: vendorIstatOf(m.istat), comune: m.name, regione: m.region, provincia: m.province, cap: m.zips });
    },
  },
  {
    method: 'GET',
    pattern: '/comuni_advance/:istat',
    handler: (_req, p) => {
      const m = municipality(p.istat ?? '');
      if (!m) return notFound('city');
      return ok({
        istat: vendorIstatOf(m.istat),
        comune: m.name,
        regione: m.region,
        provincia: m.province,
        cod_fisco: m.cadastral,
        num_residenti: m.population,
        istat_old: null,
        sigla_provincia: m.sigla,
        ...municipalityCivic(m.istat),
        frazioni: [],
        cap: m.zips,
      });
    },
  },
  {
    method: 'GET',
    pattern: '/cap/:cap',
    handler: (_req, p) => {
      const towns = postalData().byZip.get(p.cap ?? '') ?? [];
      if (towns.length === 0) return notFound('cap');
      // A postal code may cross a province line (12071: CN and SV). As in the vendor's OAS, a town
      // carries no province or region of its own (its Istat code says which): the top-level fields
      // are given only when every town shares them.
      const one = <T>(vals: T[]): T | undefined => (vals.every((v) => v === vals[0]) ? vals[0] : undefined);
      return ok({
        comuni: towns.map((m) => ({ istat: vendorIstatOf(m.istat), comune: m.name, frazione: null, comune_istat: vendorIstatOf(m.istat) })),
        provincia: one(towns.map((m) => m.province)),
        sigla_provincia: one(towns.map((m) => m.sigla)),
        regione: one(towns.map((m) => m.region)),
      });
    },
  },
  {
    method: 'GET',
    pattern: '/regioni',
    handler: () =>
      ok(
        postalData().regions.map((r) => ({
          regione: r.name,
          capoluogo: r.capital,
          num_residenti: r.population,
          num_comuni: r.municipalities,
          ...regionCivic(r.istat, r.name, r.capital, r.capitalZip),
          istat: r.istat,
          num_province: r.provinces,
        })),
      ),
  },
  { method: 'GET', pattern: '/province', handler: () => ok(postalData().provinces.map(province)) },
  {
    method: 'GET',
    pattern: '/province/:code',
    handler: (_req, p) => {
      const code = (p.code ?? '').trim().toUpperCase();
      const found = postalData().provinces.find((x) => x.sigla === code || x.istat === code.padStart(3, '0'));
      return found ? ok(province(found)) : notFound('province');
    },
  },
  {
    method: 'GET',
    pattern: '/provincia',
    handler: (req) => {
      const regione = req.query.get('regione')?.trim();
      const sigla = req.query.get('sigla')?.trim().toUpperCase();
      const list = postalData().provinces.filter((x) => (!regione || fold(x.region) === fold(regione) || x.istat === regione) && (!sigla || x.sigla === sigla));
      return ok(list.map(province));
    },
  },
  {
    method: 'GET',
    pattern: '/citta_metropolitane',
    handler: () => ok(postalData().metroCities.map((c) => ({ denominazione: c.name, capoluogo: c.capital, popolazione: c.population, num_comuni: c.municipalities }))),
  },
  {
    method: 'GET',
    pattern: '/comuni_soppressi',
    handler: (req) => {
      const sigla = req.query.get('sigla_provincia')?.trim().toUpperCase();
      return ok(
        postalData()
          .suppressed.filter((m) => !sigla || m.sigla === sigla)
          .map((m) => ({ istat: vendorIstatOf(m.istat), comune: m.name, cod_fisco: m.cadastral || null, sigla_provincia: m.sigla, regione: m.region, provincia: m.province })),
      );
    },
  },
  {
    method: 'GET',
    pattern: '/dug',
    handler: (req) => {
      const prefix = req.query.get('dug')?.trim().toUpperCase();
      return ok(STREET_TYPES.filter((d) => !prefix || d.startsWith(prefix)).map((dug) => ({ dug })));
    },
  },
];

export function createCapModule(): AreaModule {
  return { area: 'cap', routes };
}
