/**
 * Companies outside Italy (FR, DE, ES, PT, GB, BE, AT, CH, PL, and any ISO country for WW-*):
 * deterministic records shaped like the vendor's examples, keyed by a per-country "core"
 * identifier (SIREN, VAT digits, NIF, …). Every accepted identifier of a company (VAT number with
 * or without prefix, company number, tax code, 24-hex id) maps back to the same core where the
 * identifiers are derived from one another.
 */
import { EU_VAT_COUNTRIES, vatPrefixOf } from '../../contract/eu.ts';
import { hexId } from '../core.ts';
import { hash32, hashMod, Rng, dayBetween, dayToSeconds } from '../random.ts';
import { ACTIVITIES, type Activity } from './tables.ts';

export const COUNTRIES = ['FR', 'DE', 'ES', 'PT', 'GB', 'BE', 'AT', 'CH', 'PL'] as const;
export type Country = (typeof COUNTRIES)[number];
export const isCountry = (c: string): c is Country => (COUNTRIES as readonly string[]).includes(c);

/** ISO 3166-1 alpha-2 codes (WW endpoints answer 406 error 2000 for anything else). */
export const ISO_COUNTRIES = new Set(
  (
    'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH ' +
    'CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN ' +
    'GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI ' +
    'LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM ' +
    'PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD ' +
    'TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW'
  ).split(' '),
);

/** The VAT-number prefixes VIES knows: the EU member states and Northern Ireland (XI), Greece as EL. */
export const EU_VAT_PREFIXES: ReadonlySet<string> = new Set(EU_VAT_COUNTRIES.map(vatPrefixOf));

type TownRow = readonly [name: string, zip: string, lon: number, lat: number, extra?: { dept?: string; deptName?: string; insee?: string; region?: string; regionName?: string }];

interface CountryDef {
  /** Length of the core identifier (zero-padded). */
  coreLength: number;
  towns: readonly TownRow[];
  streets: readonly string[];
  forms: readonly string[];
  phone: string;
  tld: string;
  numberFirst: boolean;
  /** Parses an accepted identifier into the core, or null when it is not valid. */
  parse(raw: string): string | null;
  /** Identifiers of a company, from its core. */
  identifiers(core: string): Record<string, string>;
}

const digits = (s: string): string => s.replace(/\D/g, '');

function luhnValid(num: string): boolean {
  let sum = 0;
  for (let i = 0; i < num.length; i++) {
    let d = num.charCodeAt(num.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** Completes a number with the digit that makes it Luhn-valid. */
function luhnComplete(num: string): string {
  for (let d = 0; d <= 9; d++) if (luhnValid(num + d)) return num + d;
  return `${num}0`;
}

const frKey = (siren: string): string => String((12 + 3 * (Number(siren) % 97)) % 97).padStart(2, '0');

/** ISO 7064 MOD 11,10 check digit (German VAT numbers). */
function mod1110(num: string): number {
  let product = 10;
  for (const ch of num) {
    let sum = (Number(ch) + product) % 10;
    if (sum === 0) sum = 10;
    product = (2 * sum) % 11;
  }
  return (11 - product) % 10;
}

function weightedMod11(num: string, weights: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < weights.length; i++) sum += Number(num[i]) * weights[i];
  return sum % 11;
}

const PT_WEIGHTS = [9, 8, 7, 6, 5, 4, 3, 2];
const ptCheck = (eight: string): number => {
  const r = 11 - weightedMod11(eight, PT_WEIGHTS);
  return r >= 10 ? 0 : r;
};
const CH_WEIGHTS = [5, 4, 3, 2, 7, 6, 5, 4];
const chCheck = (eight: string): number | null => {
  const r = 11 - weightedMod11(eight, CH_WEIGHTS);
  return r === 11 ? 0 : r === 10 ? null : r;
};
const PL_NIP_WEIGHTS = [6, 5, 7, 2, 3, 4, 5, 6, 7];
const plNipCheck = (nine: string): number | null => {
  const r = weightedMod11(nine, PL_NIP_WEIGHTS);
  return r === 10 ? null : r;
};
const PL_REGON_WEIGHTS = [8, 9, 2, 3, 4, 5, 6, 7];
const plRegonCheck = (eight: string): number => weightedMod11(eight, PL_REGON_WEIGHTS) % 10;
const beValid = (ten: string): boolean => 97 - (Number(ten.slice(0, 8)) % 97) === Number(ten.slice(8));

/** Spanish tax ids: letter + 7 digits + letter/digit, 8 digits + letter, or X/Y/Z + 7 digits + letter. */
const ES_RE = /^([A-Z]\d{7}[A-Z0-9]|\d{8}[A-Z])$/;

/** The town of a company's registered office (identifiers such as German register numbers name it). */
function townOf(country: Country, core: string): TownRow {
  const towns = DEFS[country].towns;
  return towns[hashMod(`town:${country}:${core}`, towns.length)];
}

const DEFS: Record<Country, CountryDef> = {
  FR: {
    coreLength: 9,
    towns: [
      ['PARIS', '75008', 2.3522, 48.8566, { dept: '75', deptName: 'Paris', insee: '75056', region: '11', regionName: 'Île-de-France' }],
      ['LYON', '69002', 4.8357, 45.764, { dept: '69', deptName: 'Rhône', insee: '69123', region: '84', regionName: 'Auvergne-Rhône-Alpes' }],
      ['MARSEILLE', '13001', 5.3698, 43.2965, { dept: '13', deptName: 'Bouches-du-Rhône', insee: '13055', region: '93', regionName: "Provence-Alpes-Côte d'Azur" }],
      ['TOULOUSE', '31000', 1.4442, 43.6047, { dept: '31', deptName: 'Haute-Garonne', insee: '31555', region: '76', regionName: 'Occitanie' }],
      ['NANTES', '44000', -1.5536, 47.2184, { dept: '44', deptName: 'Loire-Atlantique', insee: '44109', region: '52', regionName: 'Pays de la Loire' }],
      ['LILLE', '59000', 3.0573, 50.6292, { dept: '59', deptName: 'Nord', insee: '59350', region: '32', regionName: 'Hauts-de-France' }],
    ],
    streets: ['Rue de la Paix', 'Avenue Victor Hugo', 'Boulevard Voltaire', 'Rue du Faubourg', 'Place de la République', 'Rue Nationale'],
    forms: ['SAS', 'SARL', 'SA', 'EURL'],
    phone: '+33',
    tld: 'fr',
    numberFirst: true,
    parse(raw) {
      const s = raw.replace(/\s/g, '').toUpperCase();
      if (/^FR[0-9A-Z]{2}\d{9}$/.test(s)) {
        const siren = s.slice(4);
        return /^\d{2}$/.test(s.slice(2, 4)) && s.slice(2, 4) === frKey(siren) && luhnValid(siren) ? siren : null;
      }
      if (/^\d{14}$/.test(s)) return luhnValid(s) && luhnValid(s.slice(0, 9)) ? s.slice(0, 9) : null;
      if (/^\d{9}$/.test(s)) return luhnValid(s) ? s : null;
      return null;
    },
    identifiers(core) {
      const vat = `FR${frKey(core)}${core}`;
      return { sirenCode: core, siretCode: luhnComplete(`${core}0001`), vatCode: vat, coCode: vat };
    },
  },
  DE: {
    coreLength: 8,
    towns: [
      ['Berlin', '10115', 13.405, 52.52],
      ['München', '80331', 11.582, 48.1351],
      ['Hamburg', '20095', 9.9937, 53.5511],
      ['Köln', '50667', 6.9603, 50.9375],
      ['Frankfurt am Main', '60311', 8.6821, 50.1109],
      ['Stuttgart', '70173', 9.1829, 48.7758],
    ],
    streets: ['Hauptstraße', 'Bahnhofstraße', 'Schillerstraße', 'Goethestraße', 'Industriestraße', 'Gartenstraße'],
    forms: ['GmbH', 'AG', 'GmbH & Co. KG'],
    phone: '+49',
    tld: 'de',
    numberFirst: false,
    parse(raw) {
      const s = raw.replace(/\s/g, '').toUpperCase();
      const vat = /^(?:DE)?(\d{9})$/.exec(s);
      if (vat) return mod1110(vat[1].slice(0, 8)) === Number(vat[1][8]) ? vat[1].slice(0, 8) : null;
      const hr = /^HR[AB](\d{1,8})/.exec(s);
      return hr ? hr[1].padStart(8, '0') : null;
    },
    identifiers(core) {
      const town = townOf('DE', core)[0];
      return { vatCode: `DE${core}${mod1110(core)}`, companyNumber: `HRB ${Number(core)} (${town})` };
    },
  },
  ES: {
    coreLength: 9,
    towns: [
      ['Madrid', '28001', -3.7038, 40.4168],
      ['Barcelona', '08001', 2.1734, 41.3851],
      ['Valencia', '46001', -0.3763, 39.4699],
      ['Sevilla', '41001', -5.9845, 37.3891],
      ['Bilbao', '48001', -2.935, 43.263],
      ['Zaragoza', '50001', -0.8891, 41.6488],
    ],
    streets: ['Calle Mayor', 'Avenida de la Constitución', 'Calle Real', 'Plaza de España', 'Calle del Sol', 'Paseo de Gracia'],
    forms: ['S.L.', 'S.A.', 'Sociedad Limitada', 'Sociedad Anonima'],
    phone: '+34',
    tld: 'es',
    numberFirst: false,
    parse(raw) {
      const s = raw
        .replace(/\s/g, '')
        .toUpperCase()
        .replace(/^ES(?=[A-Z0-9]{9}$)/, '');
      return ES_RE.test(s) ? s : null;
    },
    identifiers(core) {
      return { taxCode: core, vatCode: `ES${core}` };
    },
  },
  PT: {
    coreLength: 9,
    towns: [
      ['Lisboa', '1100-148', -9.1393, 38.7223],
      ['Porto', '4000-322', -8.6291, 41.1579],
      ['Braga', '4700-435', -8.4292, 41.5454],
      ['Coimbra', '3000-150', -8.4103, 40.2033],
      ['Faro', '8000-138', -7.9304, 37.0194],
      ['Aveiro', '3800-200', -8.6538, 40.6405],
    ],
    streets: ['Rua Augusta', 'Avenida da Liberdade', 'Rua do Comércio', 'Rua de Santa Catarina', 'Avenida da República', 'Rua Direita'],
    forms: ['Lda', 'S.A.', 'Unipessoal Lda'],
    phone: '+351',
    tld: 'pt',
    numberFirst: false,
    parse(raw) {
      const s = raw.replace(/\s/g, '').toUpperCase().replace(/^PT/, '');
      return /^\d{9}$/.test(s) && ptCheck(s.slice(0, 8)) === Number(s[8]) ? s : null;
    },
    identifiers(core) {
      return { taxCode: core, vatCode: `PT${core}` };
    },
  },
  GB: {
    coreLength: 9,
    towns: [
      ['London', 'EC1A 1BB', -0.1276, 51.5072],
      ['Manchester', 'M1 1AE', -2.2426, 53.4808],
      ['Birmingham', 'B1 1AA', -1.8904, 52.4862],
      ['Leeds', 'LS1 4AP', -1.5491, 53.8008],
      ['Glasgow', 'G1 1XQ', -4.2518, 55.8642],
      ['Bristol', 'BS1 4DJ', -2.5879, 51.4545],
    ],
    streets: ['High Street', 'Station Road', 'Church Lane', 'Victoria Road', 'Park Avenue', 'King Street'],
    forms: ['Limited', 'Ltd', 'PLC', 'LLP'],
    phone: '+44',
    tld: 'co.uk',
    numberFirst: true,
    parse(raw) {
      const s = raw.replace(/\s/g, '').toUpperCase();
      const vat = /^(?:GB)?(\d{9})$/.exec(s);
      if (vat) return vat[1];
      if (/^\d{8}$/.test(s)) return s + String(hash32(s) % 10);
      return null;
    },
    identifiers(core) {
      return { companyNumber: core.slice(0, 8), vatCode: `GB${core}` };
    },
  },
  BE: {
    coreLength: 10,
    towns: [
      ['Bruxelles', '1000', 4.3517, 50.8503],
      ['Antwerpen', '2000', 4.4025, 51.2194],
      ['Gent', '9000', 3.7174, 51.0543],
      ['Liège', '4000', 5.5797, 50.6326],
      ['Brugge', '8000', 3.2247, 51.2093],
      ['Namur', '5000', 4.8719, 50.4674],
    ],
    streets: ['Rue Royale', 'Kerkstraat', 'Stationsstraat', 'Avenue Louise', 'Grote Markt', 'Nieuwstraat'],
    forms: ['BV', 'NV', 'SRL', 'SA'],
    phone: '+32',
    tld: 'be',
    numberFirst: false,
    parse(raw) {
      const s = digits(raw.toUpperCase().replace(/^BE/, ''));
      const ten = s.length === 9 ? `0${s}` : s;
      return ten.length === 10 && beValid(ten) ? ten : null;
    },
    identifiers(core) {
      return { companyNumber: `${core.slice(0, 4)}.${core.slice(4, 7)}.${core.slice(7)}`, vatCode: `BE${core}`, taxCode: core };
    },
  },
  AT: {
    coreLength: 8,
    towns: [
      ['Wien', '1010', 16.3738, 48.2082],
      ['Graz', '8010', 15.4395, 47.0707],
      ['Linz', '4020', 14.2858, 48.3069],
      ['Salzburg', '5020', 13.055, 47.8095],
      ['Innsbruck', '6020', 11.4041, 47.2692],
      ['Klagenfurt', '9020', 14.3055, 46.6247],
    ],
    streets: ['Hauptstraße', 'Mariahilfer Straße', 'Landstraße', 'Ringstraße', 'Bahnhofstraße', 'Kirchengasse'],
    forms: ['GmbH', 'AG', 'KG'],
    phone: '+43',
    tld: 'at',
    numberFirst: false,
    parse(raw) {
      const s = raw.replace(/\s/g, '').toUpperCase();
      const vat = /^(?:AT)?U(\d{8})$/.exec(s);
      if (vat) return vat[1];
      const fn = /^FN(\d{1,8})[A-Z]?$/.exec(s);
      return fn ? fn[1].padStart(8, '0') : null;
    },
    identifiers(core) {
      const town = townOf('AT', core)[0];
      return { vatCode: `ATU${core}`, companyNumber: `FN ${Number(core)} ${'abdfhikmpstvwxyz'[hashMod(core, 16)]} (${town})` };
    },
  },
  CH: {
    coreLength: 9,
    towns: [
      ['Zürich', '8001', 8.5417, 47.3769],
      ['Genève', '1201', 6.1432, 46.2044],
      ['Basel', '4051', 7.5886, 47.5596],
      ['Bern', '3011', 7.4474, 46.948],
      ['Lausanne', '1003', 6.6323, 46.5197],
      ['Lugano', '6900', 8.9511, 46.0037],
    ],
    streets: ['Bahnhofstrasse', 'Seestrasse', 'Hauptstrasse', 'Rue du Rhône', 'Via Nassa', 'Dorfstrasse'],
    forms: ['AG', 'GmbH', 'SA', 'Sàrl'],
    phone: '+41',
    tld: 'ch',
    numberFirst: false,
    parse(raw) {
      const s = raw.replace(/\s/g, '').toUpperCase();
      let nine: string | null = null;
      const uid = /^CHE-?(\d{3})\.?(\d{3})\.?(\d{3})(?:MWST|TVA|IVA)?$/.exec(s);
      if (uid) nine = uid.slice(1, 4).join('');
      else if (/^CH-[\d.]+-\d$/.test(s)) nine = digits(s).slice(0, 9);
      else if (/^\d{9}$/.test(s)) nine = s;
      if (!nine || nine.length !== 9) return null;
      return chCheck(nine.slice(0, 8)) === Number(nine[8]) ? nine : null;
    },
    identifiers(core) {
      return {
        companyNumber: `CH-${core.slice(0, 3)}.${core.slice(3, 4)}.${core.slice(4, 7)}.${core.slice(7, 9)}0-${core[8]}`,
        vatCode: `CHE-${core.slice(0, 3)}.${core.slice(3, 6)}.${core.slice(6)}`,
        taxCode: core,
      };
    },
  },
  PL: {
    coreLength: 10,
    towns: [
      ['Warszawa', '00-001', 21.0122, 52.2297],
      ['Kraków', '31-001', 19.945, 50.0647],
      ['Wrocław', '50-001', 17.0385, 51.1079],
      ['Poznań', '60-001', 16.9252, 52.4064],
      ['Gdańsk', '80-001', 18.6466, 54.352],
      ['Łódź', '90-001', 19.456, 51.7592],
    ],
    streets: ['ul. Marszałkowska', 'ul. Długa', 'ul. Polna', 'ul. Kościuszki', 'ul. Mickiewicza', 'ul. Piłsudskiego'],
    forms: ['Sp. z o.o.', 'S.A.', 'Sp.k.'],
    phone: '+48',
    tld: 'pl',
    numberFirst: false,
    parse(raw) {
      const s = raw.replace(/[\s-]/g, '').toUpperCase().replace(/^PL/, '');
      const nipFrom = (nine: string): string | null => {
        for (let k = 0; k < 10; k++) {
          const candidate = nine.slice(0, 8) + String((Number(nine[8]) + k) % 10);
          const c = plNipCheck(candidate);
          if (c !== null) return candidate + c;
        }
        return null;
      };
      if (/^0000\d{6}$/.test(s)) return nipFrom(`1${s.slice(4)}00`);
      if (/^\d{10}$/.test(s)) return plNipCheck(s.slice(0, 9)) === Number(s[9]) ? s : null;
      if (/^\d{9}$/.test(s)) return plRegonCheck(s.slice(0, 8)) === Number(s[8]) ? nipFrom(`${s.slice(0, 8)}0`) : null;
      return null;
    },
    identifiers(core) {
      const regon8 = core.slice(0, 8);
      return { companyNumber: `0000${core.slice(1, 7)}`, regonNumber: regon8 + plRegonCheck(regon8), taxCode: core, vatCode: `PL${core}` };
    },
  },
};

// ---------------------------------------------------------------------------------------------
// Ids: 10 hex of a hash of (country, core), then the core in base 36 masked by that hash.

const PAYLOAD_SPACE = 16n ** 14n;

const maskOf = (tag: string): bigint => BigInt(`0x${hexId(`fmask:${tag}`).slice(0, 14)}`) % PAYLOAD_SPACE;

function base36(s: string): bigint {
  let n = 0n;
  for (const ch of s.toLowerCase()) n = n * 36n + BigInt(parseInt(ch, 36));
  return n;
}

export function foreignIdOf(country: string, core: string): string {
  if (!isCountry(country)) return hexId(`foreign:${country}:${core}`);
  const tag = hexId(`foreign:${country}:${core}`).slice(0, 10);
  return tag + (base36(core) ^ maskOf(tag)).toString(16).padStart(14, '0');
}

function coreOfForeignId(country: Country, id: string): string | null {
  const lower = id.toLowerCase();
  if (!/^[0-9a-f]{24}$/.test(lower)) return null;
  const tag = lower.slice(0, 10);
  const value = BigInt(`0x${lower.slice(10)}`) ^ maskOf(tag);
  const core = value.toString(36).toUpperCase().padStart(DEFS[country].coreLength, '0');
  return foreignIdOf(country, core) === lower ? core : null;
}

// ---------------------------------------------------------------------------------------------
// Records

/** A foreign company. */
export interface ForeignCompany {
  country: string;
  core: string;
  id: string;
  name: string;
  identifiers: Record<string, string>;
  leiCode: string;
  town: TownRow;
  street: string;
  streetNumber: string;
  gps: [number, number];
  active: boolean;
  incorporationDate: string;
  creationTimestamp: number;
  lastUpdateTimestamp: number;
  activity: Activity;
  form: string;
  phone: string;
  fax: string | null;
  website: string;
  creditWorthy: number;
  years: Array<{ year: number; employees: number; turnover: number; netWorth: number; equity: number; totalAssets: number }>;
}

const WORDS = ['NOVA', 'EURO', 'ALPHA', 'PRIME', 'BLUE', 'NORD', 'GLOBAL', 'UNITED', 'SMART', 'GREEN', 'OMEGA', 'ATLAS'] as const;
const TRADES = ['SOLUTIONS', 'TECHNOLOGIES', 'CONSULTING', 'LOGISTICS', 'TRADING', 'ENGINEERING', 'SERVICES', 'FOODS', 'ENERGY', 'SYSTEMS', 'CONSTRUCTION', 'MEDIA'] as const;

/** Capitals for WW lookups in countries without their own table. */
const CAPITALS: Record<string, TownRow> = {
  US: ['New York', '10001', -74.006, 40.7128],
  NL: ['Amsterdam', '1012', 4.9041, 52.3676],
  IE: ['Dublin', 'D02', -6.2603, 53.3498],
  LT: ['Vilnius', '01100', 25.2797, 54.6872],
  SE: ['Stockholm', '111 20', 18.0686, 59.3293],
  DK: ['København', '1050', 12.5683, 55.6761],
  NO: ['Oslo', '0150', 10.7522, 59.9139],
  FI: ['Helsinki', '00100', 24.9384, 60.1699],
  CZ: ['Praha', '110 00', 14.4378, 50.0755],
  RO: ['București', '010011', 26.1025, 44.4268],
  GR: ['Athína', '105 57', 23.7275, 37.9838],
  HU: ['Budapest', '1051', 19.0402, 47.4979],
  CN: ['Shanghai', '200000', 121.4737, 31.2304],
  JP: ['Tokyo', '100-0001', 139.6917, 35.6895],
  BR: ['São Paulo', '01000-000', -46.6333, -23.5505],
  IN: ['Mumbai', '400001', 72.8777, 19.076],
  LU: ['Luxembourg', 'L-1009', 6.1296, 49.6116],
  SI: ['Ljubljana', '1000', 14.5058, 46.0569],
};

function buildCompany(country: string, core: string): ForeignCompany {
  const rng = new Rng(`foreign:${country}:${core}`);
  const def = isCountry(country) ? DEFS[country] : null;
  const town = isCountry(country) ? townOf(country, core) : (CAPITALS[country] ?? [`${country} Capital`, '00000', 0, 0]);
  const form = def ? rng.pick(def.forms) : rng.pick(['Ltd', 'Inc.', 'S.A.', 'GmbH', 'B.V.']);
  const activity = rng.pick(ACTIVITIES);
  const active = rng.chance(0.92);
  const incorporationDate = dayBetween(rng, 1960, 2022);
  const employeesNow = rng.int(1, 400);
  const years: ForeignCompany['years'] = [];
  for (let y = 2023; y >= Math.max(2016, Number(incorporationDate.slice(0, 4))); y--) {
    const f = (1 - 0.04 * (2023 - y)) * (0.9 + rng.next() * 0.2);
    const turnover = Math.round(employeesNow * activity.turnoverPerEmployee * f);
    const equity = Math.round(turnover * (0.1 + rng.next() * 0.3));
    years.push({
      year: y,
      employees: Math.max(1, Math.round(employeesNow * f)),
      turnover,
      netWorth: Math.round(equity * (0.2 + rng.next() * 0.6)),
      equity,
      totalAssets: Math.round(turnover * (0.5 + rng.next())),
    });
  }
  const name = `${rng.pick(WORDS)} ${rng.pick(TRADES)}`;
  const slug = name.toLowerCase().replace(/[^a-z]/g, '');
  const identifiers = def ? def.identifiers(core) : { vatCode: `${country}${core}`, companyNumber: core };
  return {
    country,
    core,
    id: foreignIdOf(country, core),
    name: `${name} ${form}`,
    identifiers,
    leiCode: hexId(`lei:${country}:${core}`).slice(0, 18).toUpperCase() + String((hash32(core) % 90) + 10),
    town,
    street: def ? rng.pick(def.streets) : 'Main Street',
    streetNumber: String(rng.int(1, 180)),
    gps: [Math.round((town[2] + (rng.next() - 0.5) * 0.05) * 1e5) / 1e5, Math.round((town[3] + (rng.next() - 0.5) * 0.04) * 1e5) / 1e5],
    active,
    incorporationDate,
    creationTimestamp: dayToSeconds(dayBetween(rng, 2023, 2024)),
    lastUpdateTimestamp: dayToSeconds(dayBetween(rng, 2024, 2025)),
    activity,
    form,
    phone: `${def?.phone ?? '+1'} ${rng.int(10, 99)} ${rng.int(1_000_000, 9_999_999)}`,
    fax: rng.chance(0.5) ? `${def?.phone ?? '+1'} ${rng.int(10, 99)} ${rng.int(1_000_000, 9_999_999)}` : null,
    website: `www.${slug}.${def?.tld ?? 'com'}`,
    creditWorthy: rng.chance(0.8) ? 1 : 0,
    years,
  };
}

export type ForeignLookup = { kind: 'found'; company: ForeignCompany } | { kind: 'missing' } | { kind: 'invalid' } | { kind: 'notFound' };

/** Most identifiers name a company; a few (by hash) are unknown (404). */
const exists = (country: string, core: string): boolean => hashMod(`fexists:${country}:${core}`, 25) !== 0;

/** Ids of WW companies in countries without a table, as they were handed out. */
const wwIds = new Map<string, { country: string; core: string }>();

/** Finds a company of a country by any of its identifiers. */
export function foreignLookup(country: string, raw: string | undefined): ForeignLookup {
  const value = (raw ?? '').trim();
  if (value === '') return { kind: 'missing' };
  if (isCountry(country)) {
    if (/^[0-9a-fA-F]{24}$/.test(value)) {
      const byId = coreOfForeignId(country, value);
      return byId !== null && exists(country, byId) ? { kind: 'found', company: buildCompany(country, byId) } : { kind: 'notFound' };
    }
    const core = DEFS[country].parse(value);
    if (core === null) return { kind: 'invalid' };
    return exists(country, core) ? { kind: 'found', company: buildCompany(country, core) } : { kind: 'notFound' };
  }
  const known = wwIds.get(value.toLowerCase());
  if (known && known.country === country) return { kind: 'found', company: buildCompany(known.country, known.core) };
  const core = value
    .toUpperCase()
    .replace(/[^A-Z0-9]/g, '')
    .replace(new RegExp(`^${country}(?=.{5,})`), '');
  if (core.length < 5 || core.length > 20) return { kind: 'invalid' };
  if (!exists(country, core)) return { kind: 'notFound' };
  const company = buildCompany(country, core);
  if (wwIds.size > 10_000) wwIds.clear();
  wwIds.set(company.id, { country, core });
  return { kind: 'found', company };
}

/** A company of a country from its core identifier (search pools). */
export const foreignByCore = (country: Country, core: string): ForeignCompany => buildCompany(country, core);

/** A valid core identifier for generated pools. */
export function sampleCore(country: Country, seed: string): string {
  const def = DEFS[country];
  for (let attempt = 0; attempt < 1000; attempt++) {
    const n = String(hash32(`${seed}:${attempt}:a`)).padStart(10, '0') + String(hash32(`${seed}:${attempt}:b`)).padStart(10, '0');
    let candidate: string | null;
    if (country === 'FR') candidate = luhnComplete(`${(Number(n[0]) % 9) + 1}${n.slice(1, 8)}`);
    else if (country === 'DE' || country === 'AT') candidate = `${(Number(n[0]) % 9) + 1}${n.slice(1, 8)}`;
    else if (country === 'PT') candidate = `5${n.slice(0, 7)}${ptCheck(`5${n.slice(0, 7)}`)}`;
    else if (country === 'GB') candidate = `${(Number(n[0]) % 9) + 1}${n.slice(1, 9)}`;
    else if (country === 'BE') {
      const eight = `0${n.slice(0, 7)}`;
      candidate = eight + String(97 - (Number(eight) % 97)).padStart(2, '0');
    } else if (country === 'CH') {
      const c = chCheck(n.slice(0, 8));
      candidate = c === null ? null : n.slice(0, 8) + c;
    } else if (country === 'PL') {
      const c = plNipCheck(n.slice(0, 9));
      candidate = c === null ? null : n.slice(0, 9) + c;
    } else candidate = `B${n.slice(0, 8)}`;
    if (candidate && candidate.length === def.coreLength && def.parse(candidate) === candidate) return candidate;
  }
  throw new Error(`no sample identifier for ${country}`);
}

type Json = Record<string, unknown>;

function registeredOffice(c: ForeignCompany, top: boolean): Json {
  const [town, zip] = c.town;
  const def = isCountry(c.country) ? DEFS[c.country] : null;
  const streetName = def?.numberFirst ? `${c.streetNumber} ${c.street}` : `${c.street} ${c.streetNumber}`;
  const out: Json = { town, country: c.country, zipCode: zip, streetName, streetNumber: c.streetNumber, gps: { coordinates: c.gps } };
  if (top) Object.assign(out, { nativeTown: town, county: '', nuts1: '', nuts2: '', nuts3: '', usMetropolitanArea: '', usState: '', locationArea: [] });
  return out;
}

/** Start record (data array element) of DE, ES, PT, GB, BE, AT, CH, PL and WW-start. */
export function foreignStart(c: ForeignCompany): Json {
  if (c.country === 'FR') return frStart(c);
  const ids = c.identifiers;
  const out: Json = { id: c.id, lastUpdateTimestamp: c.lastUpdateTimestamp, companyName: c.name };
  if (ids.companyNumber) out.companyNumber = ids.companyNumber;
  if (ids.regonNumber) out.regonNumber = ids.regonNumber;
  if (ids.taxCode) out.taxCode = ids.taxCode;
  out.leiCode = c.leiCode;
  out.vatCode = ids.vatCode ?? null;
  out.address = { registeredOffice: registeredOffice(c, false) };
  out.activityStatus = c.active ? 'ACTIVE' : 'INACTIVE';
  out.incorporationDate = c.incorporationDate;
  return out;
}

function wwBalanceSheets(c: ForeignCompany): Json {
  const all = c.years.map((y) => ({
    year: y.year,
    balanceSheetDate: `${y.year}-12-31`,
    employees: y.employees,
    netWorth: y.netWorth,
    operatingRevenue: y.turnover,
    equity: y.equity,
    totalAssets: y.totalAssets,
  }));
  return { last: all[0] ?? null, all };
}

/** Advanced record of DE, ES, PT, GB, BE, AT, CH, PL and WW-advanced. */
export function foreignAdvanced(c: ForeignCompany): Json {
  if (c.country === 'FR') return frAdvanced(c);
  return {
    ...foreignStart(c),
    contacts: { fax: c.fax, phone: c.phone, website: c.website },
    internationalClassification: {
      nace: { code: c.activity.code, description: c.activity.nace },
      sic: { code: c.activity.sic.code, description: c.activity.sic.description },
    },
    balanceSheets: wwBalanceSheets(c),
  };
}

/** WW-top record. */
export function wwTop(c: ForeignCompany): Json {
  const employees = c.years[0]?.employees ?? 0;
  return {
    id: c.id,
    lastUpdateTimestamp: c.lastUpdateTimestamp,
    companyName: c.name,
    nativeCompanyName: c.name,
    companySize: employees >= 250 ? 'Large company' : employees >= 50 ? 'Medium sized company' : 'Small company',
    vatCode: c.identifiers.vatCode ?? null,
    markers: [
      ...(c.identifiers.companyNumber ? [{ label: 'Trade register number', number: c.identifiers.companyNumber, types: ['Trade register number'] }] : []),
      ...(c.identifiers.vatCode ? [{ label: 'VAT number, European VAT number', number: c.identifiers.vatCode, types: ['VAT/Tax number', 'European VAT number'] }] : []),
    ],
    address: { registeredOffice: { ...registeredOffice(c, true), country: c.country } },
    activityStatus: c.active ? 'ACTIVE' : 'INACTIVE',
    incorporationDate: c.incorporationDate,
    contacts: { fax: c.fax, phone: c.phone, website: c.website },
    internationalClassification: {
      nace: {
        primary: [
          { code: c.activity.code, description: c.activity.nace, core: c.activity.nace, section: '', division: c.activity.code.slice(0, 2), group: c.activity.code.slice(0, 3) },
        ],
        secondary: [],
      },
      sic: {
        primary: [
          { code: c.activity.sic.code, description: c.activity.sic.description, section: '', division: c.activity.sic.code.slice(0, 2), group: c.activity.sic.code.slice(0, 3) },
        ],
        secondary: [],
      },
    },
    nationalClassification: { type: ['NACE Rev. 2'], primary: [c.activity.code], secondary: [] },
    balanceSheets: wwBalanceSheets(c),
  };
}

function frAddress(c: ForeignCompany): Json {
  const [town, zip, , , extra] = c.town;
  return {
    street: c.street,
    streetNumber: c.streetNumber,
    streetName: `${c.streetNumber} ${c.street.toUpperCase()}`,
    streetName2: null,
    streetName3: null,
    streetName4: `${zip} ${town}`,
    town,
    zipCode: zip,
    country: 'FR',
    gps: { coordinates: c.gps },
    townCode: extra?.insee ?? null,
    department: { code: extra?.dept ?? null, description: extra?.deptName ?? null },
    region: { code: extra?.region ?? null, description: extra?.regionName ?? null },
  };
}

function frStart(c: ForeignCompany): Json {
  return {
    siretCode: c.identifiers.siretCode,
    companyName: c.name,
    tradingName: null,
    aliasName: null,
    sirenCode: c.identifiers.sirenCode,
    coCode: c.identifiers.coCode,
    activityStatus: c.active ? 'ACTIVE' : 'CEASED',
    registrationDate: c.incorporationDate,
    vatCode: c.identifiers.vatCode,
    address: { registeredOffice: frAddress(c) },
    creationTimestamp: c.creationTimestamp,
    lastUpdateTimestamp: c.lastUpdateTimestamp,
    id: c.id,
  };
}

function frAdvanced(c: ForeignCompany): Json {
  const start = frStart(c);
  const all = c.years.map((y) => ({ year: y.year, balanceSheetDate: `${y.year}-12-31`, turnover: y.turnover, netWorth: y.netWorth, employees: y.employees }));
  return {
    siretCode: start.siretCode,
    companyName: start.companyName,
    tradingName: null,
    aliasName: null,
    sirenCode: start.sirenCode,
    coCode: start.coCode,
    activityStatus: start.activityStatus,
    creditWorthy: c.creditWorthy,
    registrationDate: start.registrationDate,
    vatCode: start.vatCode,
    address: start.address,
    internationalClassification: {
      naf: { code: `${c.activity.code}Z`, description: c.activity.en },
      nace: { code: c.activity.code, description: c.activity.nace },
    },
    detailedLegalForm: { code: c.form, description: null },
    balanceSheets: { last: all[0] ?? null, all },
    creationTimestamp: c.creationTimestamp,
    lastUpdateTimestamp: c.lastUpdateTimestamp,
    allOffices: [],
    id: c.id,
  };
}

/** FR-search fields of a company, for filtering. */
export function frSearchFields(c: ForeignCompany): {
  name: string;
  town: string;
  townCode: string | null;
  nafCode: string;
  departmentCode: string | null;
  regionCode: string | null;
  turnover: number;
  employees: number;
  creditWorthy: number;
  legalForm: string;
  status: 'ACTIVE' | 'CEASED';
  gps: [number, number];
} {
  const extra = c.town[4];
  return {
    name: c.name,
    town: c.town[0],
    townCode: extra?.insee ?? null,
    nafCode: `${c.activity.code}Z`,
    departmentCode: extra?.dept ?? null,
    regionCode: extra?.region ?? null,
    turnover: c.years[0]?.turnover ?? 0,
    employees: c.years[0]?.employees ?? 0,
    creditWorthy: c.creditWorthy,
    legalForm: c.form,
    status: c.active ? 'ACTIVE' : 'CEASED',
    gps: c.gps,
  };
}
