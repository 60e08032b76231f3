/**
 * The civic facts the vendor's `comuni_advance` and `/regioni` carry and Istat's file does not:
 * a municipality's patron saint (`patrono {nome, data}`), town-hall address (`municipio {municipio}`)
 * and fax number; a region's president, tax code, VAT number, PEC address, web site and seat.
 *
 * Where the vendor spec's own example shows a value (Roma for `comuni_advance`, Abruzzo for
 * `/regioni`), that value is served. Every other value is emulator fiction, derived from the Istat
 * code so that it is the same on every call and every run, and well-formed like the real thing
 * (regional tax codes are 11 digits with a valid check digit, PEC addresses lie in a `pec.` domain,
 * saints' feast days are their real ones), but it describes no real town hall or regional
 * government: never read it as a fact about the place.
 */
import { createHash } from 'node:crypto';
import { makeItalianVat } from '../../contract/checksums.ts';
import { fold } from '../../contract/istat.ts';

/** A number in [0, mod) derived from the seed (the same on every run). */
function pick(seed: string, mod: number): number {
  return createHash('sha256').update(seed).digest().readUInt32BE(0) % mod;
}

/** Patron saints with their feast days, as `patrono` writes them (`{nome, data}`). */
const SAINTS: ReadonlyArray<readonly [name: string, day: string]> = [
  ['San Giovanni Battista', '24 giugno'],
  ['San Michele Arcangelo', '29 settembre'],
  ['San Martino di Tours', '11 novembre'],
  ['San Nicola di Bari', '6 dicembre'],
  ['San Rocco', '16 agosto'],
  ['San Lorenzo', '10 agosto'],
  ['Santa Maria Assunta', '15 agosto'],
  ['San Giorgio', '23 aprile'],
  ['San Biagio', '3 febbraio'],
  ['San Sebastiano', '20 gennaio'],
  ['Sant’Antonio Abate', '17 gennaio'],
  ['San Pietro Apostolo', '29 giugno'],
  ['San Bartolomeo Apostolo', '24 agosto'],
  ['Santo Stefano', '26 dicembre'],
  ['San Vito', '15 giugno'],
  ['Santa Lucia', '13 dicembre'],
];

/** Town-hall streets, as `municipio.municipio` writes them. */
const TOWN_HALL_STREETS: readonly string[] = [
  'Piazza del Municipio',
  'Piazza Municipio',
  'Via Roma',
  'Piazza Vittorio Emanuele II',
  'Piazza Garibaldi',
  'Corso Italia',
  'Piazza della Repubblica',
  'Via Umberto I',
];

/** Fictional presidents' names (first names and surnames common in Italy). */
const FIRST_NAMES: readonly string[] = ['Marco', 'Giulia', 'Luca', 'Francesca', 'Alessandro', 'Chiara', 'Paolo', 'Elena', 'Giorgio', 'Silvia'];
const SURNAMES: readonly string[] = ['Rossi', 'Bianchi', 'Esposito', 'Ferrari', 'Romano', 'Colombo', 'Ricci', 'Marino', 'Greco', 'Bruno', 'Gallo', 'Conti'];

/** What `comuni_advance` adds about a municipality. */
export interface MunicipalityCivic {
  patrono: { nome: string; data: string };
  municipio: { municipio: string };
  fax: string;
}

/** The vendor spec's own example (Roma, 58091). */
const ROMA: MunicipalityCivic = { patrono: { nome: 'SS. Pietro e Paolo', data: '29 giugno' }, municipio: { municipio: 'Via del Campidoglio' }, fax: '+39 06/67103590' };

/** A municipality's patron saint, town hall and fax, by its 6-digit Istat code. */
export function municipalityCivic(istat: string): MunicipalityCivic {
  if (istat === '058091') return ROMA;
  const [nome, data] = SAINTS[pick(`patrono|${istat}`, SAINTS.length)];
  const street = TOWN_HALL_STREETS[pick(`municipio|${istat}`, TOWN_HALL_STREETS.length)];
  const number = 1 + pick(`civico|${istat}`, 30);
  // A fax number in the vendor's form (`+39 06/67103590`): a prefix of the province's digits.
  const prefix = `0${String(Number(istat.slice(0, 3)) % 100).padStart(2, '0')}`;
  const line = String(pick(`fax|${istat}`, 9_000_000) + 1_000_000);
  return { patrono: { nome, data }, municipio: { municipio: `${street} ${number}` }, fax: `+39 ${prefix}/${line}` };
}

/** What `/regioni` adds about a region. */
export interface RegionCivic {
  presidente: string;
  cod_fiscale: string;
  piva: string;
  pec: string;
  sito: string;
  sede: string;
}

/** The vendor spec's own example (Abruzzo, 13). */
const ABRUZZO: RegionCivic = {
  presidente: 'Marco Marsilio',
  cod_fiscale: '80003170661',
  piva: '',
  pec: 'urp@pec.regione.abruzzo.it',
  sito: 'www.regione.abruzzo.it',
  sede: "Regione Abruzzo / Palazzo Silone - Via Leonardo da Vinci 6, 67100 L'Aquila",
};

/** The part of a region's name a domain carries (`Friuli-Venezia Giulia` → `friuliveneziagiulia`; the Italian name of a bilingual one). */
const slug = (name: string): string => fold(name.split('/')[0] ?? name).replace(/[^a-z]/g, '');

/**
 * A region's president, codes and addresses, by its 2-digit Istat code, name, capital and the
 * capital's first postal code. Like the vendor's example, a region has a tax code and no VAT
 * number (`piva` empty) unless its code says otherwise.
 */
export function regionCivic(istat: string, name: string, capital: string, capitalZip: string): RegionCivic {
  if (istat === '13') return ABRUZZO;
  const first = FIRST_NAMES[pick(`presidente|${istat}`, FIRST_NAMES.length)];
  const last = SURNAMES[pick(`cognome|${istat}`, SURNAMES.length)];
  // Public bodies' tax codes start with 8 or 9; the eleventh digit is the VAT-style check digit.
  const codFiscale = makeItalianVat(`80${String(pick(`cf|${istat}`, 10_000_000)).padStart(7, '0')}${istat.slice(-1)}`);
  // Every third region is given a VAT number of its own (the same Luhn form).
  const piva = pick(`piva|${istat}`, 3) === 0 ? makeItalianVat(`0${String(pick(`pivanum|${istat}`, 1_000_000_000)).padStart(9, '0')}`) : '';
  const domain = `regione.${slug(name)}.it`;
  const street = TOWN_HALL_STREETS[pick(`sede|${istat}`, TOWN_HALL_STREETS.length)];
  return {
    presidente: `${first} ${last}`,
    cod_fiscale: codFiscale,
    piva,
    pec: `protocollo@pec.${domain}`,
    sito: `www.${domain}`,
    sede: `Regione ${name} / Palazzo della Regione - ${street} ${1 + pick(`sedenum|${istat}`, 40)}, ${capitalZip} ${capital}`,
  };
}
