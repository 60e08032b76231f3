/**
 * Italian places for generated companies and people: municipalities from `data/comuni.json`
 * (Istat codes, provinces, regions, postal codes, cadastral codes), approximate coordinates, and
 * street names.
 */
import { hash32, type Rng } from '../random.ts';
import { comuniRows } from '../comuni.ts';

/** A municipality as the generator uses it. */
export interface Town {
  /** Upper-case name, as the company register writes it (`ROMA`). */
  name: string;
  /** Istat code (6 digits). */
  istat: string;
  /** Cadastral (Belfiore) code, e.g. `H501`. */
  cadastral: string;
  /** Province acronym, e.g. `RM`. */
  province: string;
  /** Province name, upper case. */
  provinceName: string;
  regionCode: string;
  /** Region name, upper case (`LAZIO`). */
  regionName: string;
  zips: string[];
  population: number;
  /** Approximate centre [longitude, latitude]. */
  gps: [number, number];
}

/** Approximate centres of the regions (by Istat code), used for towns without their own entry. */
const REGION_CENTRES: Record<string, [number, number]> = {
  '01': [7.9, 45.05],
  '02': [7.35, 45.74],
  '03': [9.6, 45.6],
  '04': [11.2, 46.4],
  '05': [11.9, 45.6],
  '06': [13.1, 46.1],
  '07': [8.7, 44.3],
  '08': [11.0, 44.5],
  '09': [11.1, 43.4],
  '10': [12.5, 42.95],
  '11': [13.2, 43.3],
  '12': [12.7, 41.9],
  '13': [13.9, 42.2],
  '14': [14.5, 41.6],
  '15': [14.6, 40.9],
  '16': [16.6, 41.0],
  '17': [16.1, 40.5],
  '18': [16.4, 39.0],
  '19': [14.1, 37.5],
  '20': [9.0, 40.0],
};

/** Centres of the largest cities (by cadastral code), so that radius searches around them work. */
const CITY_CENTRES: Record<string, [number, number]> = {
  H501: [12.4964, 41.9028],
  F205: [9.19, 45.4642],
  F839: [14.2681, 40.8518],
  L219: [7.6869, 45.0703],
  G273: [13.3615, 38.1157],
  D969: [8.9463, 44.4056],
  A944: [11.3426, 44.4949],
  D612: [11.2558, 43.7696],
  A662: [16.8719, 41.1171],
  C351: [15.0873, 37.5079],
  L736: [12.3155, 45.4408],
  L781: [10.9916, 45.4384],
  F158: [15.5542, 38.1938],
  G224: [11.8768, 45.4064],
  L424: [13.7768, 45.6495],
  L049: [17.247, 40.4644],
  G337: [10.3279, 44.8015],
  A271: [13.5189, 43.6158],
  L117: [12.6466, 42.5636],
  B157: [10.2118, 45.5416],
  E506: [18.172, 40.3515],
  G999: [11.0968, 43.8777],
  C933: [9.0852, 45.8081],
  L682: [8.8258, 45.8206],
  B354: [9.1217, 39.2238],
  E625: [10.3159, 43.5485],
  H703: [14.7681, 40.6824],
  L378: [11.1217, 46.0748],
  A952: [11.3548, 46.4983],
  G478: [12.3888, 43.1107],
  D643: [15.5447, 41.4622],
};

function upper(s: string): string {
  return s.split('/')[0].trim().toUpperCase();
}

function jitter(seed: string, span: number): number {
  return ((hash32(seed) % 10_000) / 10_000 - 0.5) * span;
}

function load(): Town[] {
  const raw = comuniRows();
  return raw.map((c) => {
    const centre = CITY_CENTRES[c.codiceCatastale];
    const region = REGION_CENTRES[c.regione.codice] ?? [12.5, 42.5];
    const gps: [number, number] = centre
      ? [centre[0], centre[1]]
      : [Math.round((region[0] + jitter(`lon:${c.codice}`, 1.2)) * 1e5) / 1e5, Math.round((region[1] + jitter(`lat:${c.codice}`, 0.9)) * 1e5) / 1e5];
    return {
      name: upper(c.nome),
      istat: c.codice,
      cadastral: c.codiceCatastale,
      province: c.sigla,
      provinceName: upper(c.provincia.nome),
      regionCode: c.regione.codice,
      regionName: upper(c.regione.nome),
      zips: c.cap.length > 0 ? c.cap : ['00000'],
      population: c.popolazione,
      gps,
    };
  });
}

let towns: Town[] | null = null;
let byCadastral: Map<string, Town> | null = null;
let companyTowns: Town[] | null = null;

/** Every municipality. */
export function allTowns(): Town[] {
  towns ??= load();
  return towns;
}

/** The municipality with this cadastral code. */
export function townByCadastral(code: string): Town | undefined {
  byCadastral ??= new Map(allTowns().map((t) => [t.cadastral, t]));
  return byCadastral.get(code.toUpperCase());
}

/** Municipalities with at least 15,000 inhabitants, where generated companies and people live. */
function bigTowns(): Town[] {
  companyTowns ??= allTowns().filter((t) => t.population >= 15_000);
  return companyTowns;
}

/**
 * A town for a company or person. Large cities come up more often (a fifth of the picks are
 * among the ten largest), the rest spread over towns above 15,000 inhabitants.
 */
export function pickTown(rng: Rng): Town {
  const big = bigTowns();
  if (rng.chance(0.2)) {
    const top = big
      .slice()
      .sort((a, b) => b.population - a.population)
      .slice(0, 10);
    return rng.pick(top);
  }
  return rng.pick(big);
}

export const TOPONYMS = ['VIA', 'VIA', 'VIA', 'VIA', 'VIALE', 'PIAZZA', 'CORSO', 'LARGO', 'VICOLO', 'STRADA'] as const;

export const STREETS = [
  'GIUSEPPE GARIBALDI',
  'GIUSEPPE MAZZINI',
  'ROMA',
  'DANTE ALIGHIERI',
  'GIUSEPPE VERDI',
  'CAVOUR',
  'VITTORIO EMANUELE II',
  'XX SETTEMBRE',
  'IV NOVEMBRE',
  'DELLA REPUBBLICA',
  'DEI MILLE',
  'MARCONI',
  'ALESSANDRO MANZONI',
  'GIACOMO LEOPARDI',
  'DELLA LIBERTA',
  'NAZIONALE',
  "DELL'INDUSTRIA",
  'DEL LAVORO',
  'DELLE ROSE',
  'DEI PINI',
  'SAN FRANCESCO',
  'SANTA MARIA',
  'DEL COMMERCIO',
  'ENRICO FERMI',
  'LEONARDO DA VINCI',
  'GALILEO GALILEI',
  'ANTONIO GRAMSCI',
  'ALDO MORO',
  "DELL'ARTIGIANATO",
  'TORINO',
  'MILANO',
  'NAPOLI',
  'FIRENZE',
  'VENEZIA',
  'DEGLI ULIVI',
] as const;

/** A street address in a town. */
export interface StreetAddress {
  toponym: string;
  street: string;
  streetNumber: string;
  town: Town;
  zip: string;
  /** [longitude, latitude] */
  gps: [number, number];
}

export function pickAddress(rng: Rng, town: Town, seed: string): StreetAddress {
  const toponym = rng.pick(TOPONYMS);
  const street = rng.pick(STREETS);
  const streetNumber = String(rng.int(1, 250));
  const zip = rng.pick(town.zips);
  const gps: [number, number] = [Math.round((town.gps[0] + jitter(`alon:${seed}`, 0.04)) * 1e5) / 1e5, Math.round((town.gps[1] + jitter(`alat:${seed}`, 0.03)) * 1e5) / 1e5];
  return { toponym, street, streetNumber, town, zip, gps };
}

/** Great-circle distance in metres between two [longitude, latitude] points. */
export function distanceMetres(a: [number, number], b: [number, number]): number {
  const rad = Math.PI / 180;
  const dLat = (b[1] - a[1]) * rad;
  const dLon = (b[0] - a[0]) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a[1] * rad) * Math.cos(b[1] * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * 6_371_000 * Math.asin(Math.min(1, Math.sqrt(h)));
}
