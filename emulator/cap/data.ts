/**
 * The postal area's data: Istat's municipalities from `data/comuni.json` (CC BY 3.0 IT, see
 * `data/NOTICE.md`), with the regions, provinces and metropolitan cities derived from them, plus two
 * lists the file does not hold:
 *
 * - suppressed municipalities (`comuni_soppressi`): no public machine-readable source was at hand in
 *   the repository or the registries, so this is a documented, realistic list of municipalities
 *   merged away by real fusions after 2014 (the vendor spec's own example, Barbarano Vicentino,
 *   among them). An Istat or cadastral code is given only where a public source at hand shows it
 *   (the vendor spec's example: Barbarano Vicentino, 24011, A627); the others have none, never an
 *   invented one. Treat the list as illustrative, not complete.
 * - street types (DUG, denominazioni urbanistiche generiche): the common Italian street types as the
 *   national street registry (ANNCSU) and the postal operator write them. The contract lists `/dug`
 *   but no public source shows it: the shape is designed from the contract's words.
 *
 * Fields the vendor shows but the Istat file cannot give are left out of the answers (surfaces, phone
 * numbers, e-mail addresses), except the civic facts of `civic.ts` (patron saints, town halls, fax
 * numbers, regional presidents, codes and seats): those are deterministic emulator fiction, so that
 * every field the layer types has a value to test against.
 */
import { comuniRows } from '../comuni.ts';
import { fold, vendorIstat } from '../../contract/istat.ts';

export interface Municipality {
  name: string;
  /** Istat code, 6 digits (`058091`); '' for a suppressed municipality whose code no source at hand gives. */
  istat: string;
  cadastral: string;
  regionCode: string;
  region: string;
  provinceCode: string;
  province: string;
  sigla: string;
  zips: string[];
  population: number;
  suppressed: boolean;
  /** Istat code of the municipality a suppressed one was merged into. */
  mergedInto?: string;
}

export interface Region {
  istat: string;
  name: string;
  capital: string;
  /** The capital's first postal code ('' when the capital is not in the file). */
  capitalZip: string;
  population: number;
  municipalities: number;
  provinces: number;
}

export interface Province {
  istat: string;
  sigla: string;
  name: string;
  region: string;
  population: number;
  municipalities: number;
}

export interface MetroCity {
  name: string;
  capital: string;
  population: number;
  municipalities: number;
}

/** Regional capitals (capoluoghi di regione), by region Istat code. */
const REGION_CAPITALS: Record<string, string> = {
  '01': 'Torino',
  '02': 'Aosta',
  '03': 'Milano',
  '04': 'Trento',
  '05': 'Venezia',
  '06': 'Trieste',
  '07': 'Genova',
  '08': 'Bologna',
  '09': 'Firenze',
  '10': 'Perugia',
  '11': 'Ancona',
  '12': 'Roma',
  '13': "L'Aquila",
  '14': 'Campobasso',
  '15': 'Napoli',
  '16': 'Bari',
  '17': 'Potenza',
  '18': 'Catanzaro',
  '19': 'Palermo',
  '20': 'Cagliari',
};

/** The 14 metropolitan cities (città metropolitane, law 56/2014), by the Istat code of their province. */
const METRO_PROVINCES: Record<string, string> = {
  '001': 'Torino',
  '010': 'Genova',
  '015': 'Milano',
  '027': 'Venezia',
  '037': 'Bologna',
  '048': 'Firenze',
  '058': 'Roma',
  '063': 'Napoli',
  '072': 'Bari',
  '080': 'Reggio Calabria',
  '092': 'Cagliari',
  '082': 'Palermo',
  '083': 'Messina',
  '087': 'Catania',
};

/**
 * Suppressed municipalities (see the file's comment): name, province sigla, the municipality it was
 * merged into (a living one of the Istat file), and its Istat and cadastral codes where a public
 * source at hand gives them (the vendor spec's example), else null: never invented.
 */
const SUPPRESSED: ReadonlyArray<readonly [name: string, sigla: string, mergedInto: string, istat: string | null, cadastral: string | null]> = [
  ['Barbarano Vicentino', 'VI', 'Barbarano Mossano', '024011', 'A627'],
  ['Mossano', 'VI', 'Barbarano Mossano', null, null],
  ['Lu', 'AL', 'Lu e Cuccaro Monferrato', null, null],
  ['Cuccaro Monferrato', 'AL', 'Lu e Cuccaro Monferrato', null, null],
  ['Maccagno', 'VA', 'Maccagno con Pino e Veddasca', null, null],
  ['Pino sulla Sponda del Lago Maggiore', 'VA', 'Maccagno con Pino e Veddasca', null, null],
  ['Veddasca', 'VA', 'Maccagno con Pino e Veddasca', null, null],
  ['Figline Valdarno', 'FI', 'Figline e Incisa Valdarno', null, null],
  ["Incisa in Val d'Arno", 'FI', 'Figline e Incisa Valdarno', null, null],
  ['Bleggio Superiore', 'TN', 'Comano Terme', null, null],
  ['Lomaso', 'TN', 'Comano Terme', null, null],
  ['Corigliano Calabro', 'CS', 'Corigliano-Rossano', null, null],
  ['Rossano', 'CS', 'Corigliano-Rossano', null, null],
  ['Sillano', 'LU', 'Sillano Giuncugnano', null, null],
  ['Giuncugnano', 'LU', 'Sillano Giuncugnano', null, null],
];

/** Street types (DUG). */
export const STREET_TYPES: readonly string[] = [
  'VIA',
  'VIALE',
  'PIAZZA',
  'PIAZZALE',
  'PIAZZETTA',
  'CORSO',
  'LARGO',
  'VICOLO',
  'VICO',
  'STRADA',
  'STRADA COMUNALE',
  'STRADA PROVINCIALE',
  'STRADA STATALE',
  'STRADA VICINALE',
  'STRADA REGIONALE',
  'CONTRADA',
  'LOCALITA',
  'FRAZIONE',
  'BORGO',
  'BORGATA',
  'CASCINA',
  'CORTE',
  'CALLE',
  'CAMPO',
  'FONDAMENTA',
  'SALIZADA',
  'RIO TERA',
  'SESTIERE',
  'LUNGOMARE',
  'LUNGOLAGO',
  'LUNGOTEVERE',
  'LUNGARNO',
  'LUNGOPO',
  'RIVIERA',
  'SALITA',
  'DISCESA',
  'SCALINATA',
  'RAMPA',
  'GALLERIA',
  'PASSAGGIO',
  'PASSEGGIATA',
  'TRAVERSA',
  'TRATTURO',
  'VIOTTOLO',
  'SENTIERO',
  'SOTTOPORTICO',
  'PORTICO',
  'CIRCONVALLAZIONE',
  'RACCORDO',
  'ROTONDA',
  'ZONA',
  'QUARTIERE',
  'RIONE',
  'PARCO',
  'VILLAGGIO',
  'MASSERIA',
];

function load(): Municipality[] {
  return comuniRows().map((c) => ({
    name: c.nome,
    istat: c.codice,
    cadastral: c.codiceCatastale,
    regionCode: c.regione.codice,
    region: c.regione.nome,
    provinceCode: c.provincia.codice,
    province: c.provincia.nome,
    sigla: c.sigla,
    zips: c.cap,
    population: c.popolazione,
    suppressed: false,
  }));
}

export interface PostalData {
  municipalities: Municipality[];
  suppressed: Municipality[];
  regions: Region[];
  provinces: Province[];
  metroCities: MetroCity[];
  byIstat: Map<string, Municipality>;
  byZip: Map<string, Municipality[]>;
}

let cached: PostalData | null = null;

/** The data set, built once per process. */
export function postalData(): PostalData {
  if (cached) return cached;
  const municipalities = load();
  const suppressed: Municipality[] = [];
  const byName = new Map(municipalities.map((m) => [m.name, m]));
  for (const [name, sigla, mergedInto, istatCode, cadastral] of SUPPRESSED) {
    const p = byName.get(mergedInto);
    if (!p || p.sigla !== sigla) continue;
    suppressed.push({
      name,
      istat: istatCode ?? '',
      cadastral: cadastral ?? '',
      regionCode: p.regionCode,
      region: p.region,
      provinceCode: p.provinceCode,
      province: p.province,
      sigla,
      zips: [],
      population: 0,
      suppressed: true,
      mergedInto: p.istat,
    });
  }
  const regions = new Map<string, Region>();
  const provinces = new Map<string, Province>();
  for (const m of municipalities) {
    const r = regions.get(m.regionCode) ?? {
      istat: m.regionCode,
      name: m.region,
      capital: REGION_CAPITALS[m.regionCode] ?? '',
      capitalZip: '',
      population: 0,
      municipalities: 0,
      provinces: 0,
    };
    r.population += m.population;
    r.municipalities++;
    if (m.name === r.capital) r.capitalZip = m.zips[0] ?? '';
    regions.set(m.regionCode, r);
    let p = provinces.get(m.provinceCode);
    if (!p) {
      p = { istat: m.provinceCode, sigla: m.sigla, name: m.province, region: m.region, population: 0, municipalities: 0 };
      provinces.set(m.provinceCode, p);
      r.provinces++;
    }
    p.population += m.population;
    p.municipalities++;
  }
  const metroCities: MetroCity[] = Object.entries(METRO_PROVINCES).map(([code, capital]) => {
    const p = provinces.get(code);
    return { name: (p?.name ?? capital).toUpperCase(), capital, population: p?.population ?? 0, municipalities: p?.municipalities ?? 0 };
  });
  const byIstat = new Map<string, Municipality>();
  for (const m of [...municipalities, ...suppressed]) if (m.istat) byIstat.set(m.istat, m);
  const byZip = new Map<string, Municipality[]>();
  for (const m of municipalities) for (const z of m.zips) byZip.set(z, [...(byZip.get(z) ?? []), m]);
  cached = {
    municipalities,
    suppressed,
    regions: [...regions.values()].sort((a, b) => a.name.localeCompare(b.name)),
    provinces: [...provinces.values()].sort((a, b) => a.sigla.localeCompare(b.sigla)),
    metroCities,
    byIstat,
    byZip,
  };
  return cached;
}

/** A municipality's Istat code as the vendor writes it (`58091`); null for a suppressed one without a code. */
export const vendorIstatOf = (istat: string): string | null => (istat ? vendorIstat(istat) : null);

export { fold };
