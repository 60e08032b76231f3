/**
 * Generated people (managers, shareholders, beneficial owners): Italian names, a birth date and
 * town, and a fiscal code with a valid check letter built from them.
 */
import { makeFiscalCode } from '../../contract/checksums.ts';
import { dayBetween, Rng } from '../random.ts';
import { pickAddress, pickTown, type StreetAddress, type Town } from './places.ts';

const MALE = [
  'MARCO',
  'LUCA',
  'GIUSEPPE',
  'GIOVANNI',
  'ANDREA',
  'FRANCESCO',
  'ALESSANDRO',
  'STEFANO',
  'PAOLO',
  'ROBERTO',
  'MASSIMO',
  'ANTONIO',
  'MATTEO',
  'DAVIDE',
  'SIMONE',
  'FABIO',
  'RICCARDO',
  'LORENZO',
  'GIORGIO',
  'CLAUDIO',
  'ALBERTO',
  'SERGIO',
  'VINCENZO',
  'SALVATORE',
  'FEDERICO',
  'EMANUELE',
  'MAURIZIO',
  'PIETRO',
  'NICOLA',
  'TOMMASO',
  'DANIELE',
  'MICHELE',
  'GABRIELE',
  'CARLO',
  'ENRICO',
] as const;

const FEMALE = [
  'MARIA',
  'GIULIA',
  'FRANCESCA',
  'CHIARA',
  'SARA',
  'LAURA',
  'ELENA',
  'VALENTINA',
  'ALESSANDRA',
  'SILVIA',
  'PAOLA',
  'FEDERICA',
  'MARTINA',
  'ANNA',
  'ROBERTA',
  'CRISTINA',
  'MONICA',
  'BARBARA',
  'SIMONA',
  'ELISA',
  'DANIELA',
  'GIORGIA',
  'SOFIA',
  'ILARIA',
  'CATERINA',
  'BEATRICE',
  'LUCIA',
  'SERENA',
  'CLAUDIA',
  'ROSSELLA',
  'AURORA',
  'ALICE',
  'VERONICA',
  'NICOLETTA',
  'TERESA',
] as const;

const SURNAMES = [
  'ROSSI',
  'RUSSO',
  'FERRARI',
  'ESPOSITO',
  'BIANCHI',
  'ROMANO',
  'COLOMBO',
  'RICCI',
  'MARINO',
  'GRECO',
  'BRUNO',
  'GALLO',
  'CONTI',
  'DE LUCA',
  'MANCINI',
  'COSTA',
  'GIORDANO',
  'RIZZO',
  'LOMBARDI',
  'MORETTI',
  'BARBIERI',
  'FONTANA',
  'SANTORO',
  'MARIANI',
  'RINALDI',
  'CARUSO',
  'FERRARA',
  'GALLI',
  'MARTINI',
  'LEONE',
  'LONGO',
  'GENTILE',
  'MARTINELLI',
  'VITALE',
  'LOMBARDO',
  'SERRA',
  'COPPOLA',
  'DE SANTIS',
  "D'ANGELO",
  'MARCHETTI',
  'PARISI',
  'VILLA',
  'CONTE',
  'FERRO',
  'FABBRI',
  'BIANCO',
  'MARINI',
  'GRASSO',
  'VALENTINI',
  'MESSINA',
  'SALA',
  'DE ANGELIS',
  'GATTI',
  'PELLEGRINI',
  'PALUMBO',
  'SANNA',
  'FARINA',
  'RIZZI',
  'MONTI',
  'CATTANEO',
  'MORELLI',
  'AMATO',
  'SILVESTRI',
  'MAZZA',
  'TESTA',
  'GRASSI',
  'PELLEGRINO',
  'CARBONE',
  'GIULIANI',
  'BENEDETTI',
  'BARONE',
  'ROSSETTI',
  'CAPUTO',
  'MONTANARI',
] as const;

export type Gender = 'M' | 'F';

/** A natural person. */
export interface Person {
  kind: 'person';
  name: string;
  surname: string;
  gender: Gender;
  /** `YYYY-MM-DD` */
  birthDate: string;
  birthTown: Town;
  taxCode: string;
  residence: StreetAddress;
}

export interface PersonSpec {
  name: string;
  surname: string;
  gender: Gender;
  birthDate: string;
  /** Cadastral code of the birth town. */
  birthTown: Town;
  residence?: StreetAddress;
  /** A fixed fiscal code (for the vendor's examples); built from the fields otherwise. */
  taxCode?: string;
}

/** Builds a person from fixed fields. */
export function personFrom(spec: PersonSpec, seed: string): Person {
  const rng = new Rng(`residence:${seed}`);
  return {
    kind: 'person',
    name: spec.name,
    surname: spec.surname,
    gender: spec.gender,
    birthDate: spec.birthDate,
    birthTown: spec.birthTown,
    taxCode: spec.taxCode ?? makeFiscalCode({ surname: spec.surname, name: spec.name, birthDate: spec.birthDate, gender: spec.gender, cadastralCode: spec.birthTown.cadastral }),
    residence: spec.residence ?? pickAddress(rng, spec.birthTown, seed),
  };
}

/** A generated person: the same seed always gives the same person. */
export function generatePerson(seed: string, opts: { surname?: string; bornFrom?: number; bornTo?: number } = {}): Person {
  const rng = new Rng(`person:${seed}`);
  const gender: Gender = rng.chance(0.62) ? 'M' : 'F';
  const name = rng.pick(gender === 'M' ? MALE : FEMALE);
  const surname = opts.surname ?? rng.pick(SURNAMES);
  const birthDate = dayBetween(rng, opts.bornFrom ?? 1945, opts.bornTo ?? 1998);
  const birthTown = pickTown(rng);
  const livesWhereBorn = rng.chance(0.6);
  const home = livesWhereBorn ? birthTown : pickTown(rng);
  return personFrom({ name, surname, gender, birthDate, birthTown, residence: pickAddress(rng, home, seed) }, seed);
}

/** A surname for company names built on a family name. */
export const pickSurname = (rng: Rng): string => rng.pick(SURNAMES);

/** Whole years between a birth date and a reference day. */
export function ageOn(birthDate: string, onDay: string): number {
  const [by, bm, bd] = birthDate.split('-').map(Number) as [number, number, number];
  const [y, m, d] = onDay.split('-').map(Number) as [number, number, number];
  return y - by - (m < bm || (m === bm && d < bd) ? 1 : 0);
}
