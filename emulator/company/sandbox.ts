/**
 * Companies whose data is pinned rather than left to the generator: the vendor's example company
 * (OPENAPI S.P.A. and its holding), a set of sandbox companies that cover the interesting cases
 * (legal forms, a ceased company, company shareholders, a group with several levels, a sole
 * proprietorship, a public body), and the audit firms that generated companies name as auditors.
 *
 * Pinned companies take part in ownership only through the `parents` declared here, so their
 * links are exact and always consistent in both directions.
 */
import type { ActivityStatus, YearFigures } from './model.ts';
import type { Gender } from './people.ts';
import type { RoleCode } from './tables.ts';

export interface PinnedPerson {
  name: string;
  surname: string;
  gender: Gender;
  birthDate: string;
  /** Cadastral code of the birth town (`Z…` codes for foreign countries, see `FOREIGN_BIRTH_PLACES`). */
  birthTown: string;
  /** The fiscal code as the vendor's example prints it; computed when absent. */
  taxCode?: string;
}

export interface PinnedStreet {
  toponym: string;
  street: string;
  streetNumber: string;
  zip: string;
  gps?: [number, number];
}

export interface PinnedCompany {
  vat: string;
  name: string;
  legalForm: string;
  /** ATECO code (see `tables.ts`). */
  activity: string;
  /** Cadastral code of the registered office's town. */
  town: string;
  street?: PinnedStreet;
  status?: ActivityStatus;
  incorporationDate?: string;
  endDate?: string;
  /** Company shareholders (the ownership links). */
  parents: Array<{ vat: string; percent: number; since: string }>;
  /** Natural-person shareholders; generated for the remainder of the capital when absent. */
  personHolders?: Array<{ person: PinnedPerson; percent: number; since: string }>;
  /** People who hold offices; generated when absent. */
  personManagers?: Array<{ person: PinnedPerson; roles: Array<{ code: RoleCode; start: string }>; legalRep: boolean }>;
  /** A sole proprietorship's fiscal code (the owner's). */
  ownerTaxCode?: string;
  employees?: number;
  publicAdministration?: boolean;
  splitPayment?: boolean;
  innovativeStartup?: boolean;
  /** Extra data of the vendor's example company. */
  details?: {
    rea: string;
    pec: string;
    pecHistory: Array<{ pec: string; timestamp: number }>;
    sdiCode: string;
    sdiCodeTimestamp: number;
    creationTimestamp: number;
    lastUpdateTimestamp: number;
    registrationDate: string;
    startDate: string;
    email: string;
    phone: string;
    fax: string;
    website: string;
    socials: Record<string, string>;
    openapiNumber: string;
    years?: YearFigures[];
    employeeTrend?: number;
    turnoverTrend?: number;
    localUnits?: Array<{ town: string; cciaa: string; rea: string; street: PinnedStreet; openapiNumber: string }>;
  };
  /** What the company is good for in tests; null for pinned companies not listed as sandbox companies. */
  note: string | null;
}

/** Foreign birth places used by pinned people (cadastral `Z` codes). */
export const FOREIGN_BIRTH_PLACES: Record<string, { name: string; province: string }> = {
  Z114: { name: 'STOKE ON TRENT', province: 'E' },
};

const SCURIATTI: PinnedPerson = { name: 'LUCA', surname: 'SCURIATTI', gender: 'M', birthDate: '1973-10-02', birthTown: 'H501', taxCode: 'SCRLCU73R02H501H' };
const DESANTIS: PinnedPerson = { name: 'SIMONE', surname: 'DESANTIS', gender: 'M', birthDate: '1980-08-11', birthTown: 'L117', taxCode: 'DSNSMN80M11L117F' };
const DE_LUCIA: PinnedPerson = { name: 'SHAUN', surname: 'DE LUCIA', gender: 'M', birthDate: '1977-11-29', birthTown: 'Z114', taxCode: 'DLCSHN77S29Z114J' };
const MARIO_ROSSI: PinnedPerson = { name: 'MARIO', surname: 'ROSSI', gender: 'M', birthDate: '1980-01-01', birthTown: 'H501' };
const GIOVANNI_ESPOSITO: PinnedPerson = { name: 'GIOVANNI', surname: 'ESPOSITO', gender: 'M', birthDate: '1962-05-14', birthTown: 'F839' };
const ANNA_ESPOSITO: PinnedPerson = { name: 'ANNA', surname: 'ESPOSITO', gender: 'F', birthDate: '1965-09-23', birthTown: 'H703' };
const PAOLO_BIANCHI: PinnedPerson = { name: 'PAOLO', surname: 'BIANCHI', gender: 'M', birthDate: '1950-02-17', birthTown: 'D612' };
const LAURA_BIANCHI: PinnedPerson = { name: 'LAURA', surname: 'BIANCHI', gender: 'F', birthDate: '1954-07-03', birthTown: 'G999' };

export const OPENAPI_VAT = '12485671007';
export const OPEN_HOLDING_VAT = '16935371001';

export const PINNED_COMPANIES: readonly PinnedCompany[] = [
  {
    vat: OPENAPI_VAT,
    name: 'OPENAPI S.P.A.',
    legalForm: 'SP',
    activity: '6201',
    town: 'H501',
    street: { toponym: 'VIALE', street: 'F TOMMASO MARINETTI', streetNumber: '221', zip: '00143', gps: [12.47843, 41.8071] },
    incorporationDate: '2013-07-11',
    parents: [{ vat: OPEN_HOLDING_VAT, percent: 100, since: '2022-11-23' }],
    personManagers: [
      { person: SCURIATTI, roles: [{ code: 'AUN', start: '2020-09-10' }], legalRep: true },
      { person: DESANTIS, roles: [{ code: 'PP', start: '2013-10-17' }], legalRep: false },
      { person: DE_LUCIA, roles: [{ code: 'PP', start: '2013-10-17' }], legalRep: false },
    ],
    employees: 15,
    details: {
      rea: '1378273',
      pec: 'openapi@legalmail.it',
      pecHistory: [{ pec: 'altraviaservizi@legalmail.it', timestamp: 1623759855 }],
      sdiCode: 'USAL8PV',
      sdiCodeTimestamp: 1622452306,
      creationTimestamp: 1622452306,
      lastUpdateTimestamp: 1708705000,
      registrationDate: '2013-07-19',
      startDate: '2013-10-20',
      email: 'info@altravia.com',
      phone: '0697276223;',
      fax: '0687420311',
      website: 'www.altravia.com',
      socials: { facebook: 'https://www.facebook.com/openapisrl', linkedin: 'https://www.linkedin.com/company/openapi-srl/' },
      openapiNumber: 'IT93E20F0DS0001',
      employeeTrend: 7.14,
      turnoverTrend: 5.74,
      years: [
        { year: 2024, employees: 15, balanceSheetDate: null, turnover: null, netWorth: null, shareCapital: 50000 },
        { year: 2023, employees: 15, balanceSheetDate: null, turnover: null, netWorth: null, shareCapital: 50000 },
        {
          year: 2022,
          employees: 14,
          balanceSheetDate: '2022-12-31',
          turnover: 4043407,
          netWorth: 166491,
          shareCapital: 50000,
          totalStaffCost: 604997,
          totalAssets: 1483126,
          avgGrossSalary: 43214.07142857143,
        },
        { year: 2021, employees: 15, balanceSheetDate: '2021-12-31', turnover: 4432761, netWorth: 469366, shareCapital: 50000 },
        { year: 2020, employees: 14, balanceSheetDate: '2020-12-31', turnover: 4192138, netWorth: 170234, shareCapital: 10000 },
        { year: 2019, employees: 14, balanceSheetDate: '2019-12-31', turnover: 1799587, netWorth: 11309, shareCapital: 10000 },
        { year: 2018, employees: null, balanceSheetDate: '2018-12-31', turnover: 1325358, netWorth: 826, shareCapital: null },
        { year: 2017, employees: null, balanceSheetDate: '2017-12-31', turnover: 1120176, netWorth: 2928, shareCapital: null },
      ],
      localUnits: [
        {
          town: 'L117',
          cciaa: 'TR',
          rea: '353472',
          street: { toponym: 'PIAZZA', street: 'SAN GIOVANNI DECOLLATO', streetNumber: '6', zip: '05100' },
          openapiNumber: 'IT93E20F0DU8001',
        },
      ],
    },
    note: "The vendor's example company (spec example data); owned 100% by OPEN HOLDING S.R.L.",
  },
  {
    vat: OPEN_HOLDING_VAT,
    name: 'OPEN HOLDING S.R.L.',
    legalForm: 'SR',
    activity: '6420',
    town: 'H501',
    street: { toponym: 'VIALE', street: 'FILIPPO TOMMASO MARINETTI', streetNumber: '221', zip: '00143', gps: [12.47843, 41.8071] },
    incorporationDate: '2022-11-10',
    parents: [],
    personHolders: [
      { person: SCURIATTI, percent: 50, since: '2022-11-10' },
      { person: DE_LUCIA, percent: 50, since: '2022-11-10' },
    ],
    personManagers: [{ person: SCURIATTI, roles: [{ code: 'AUN', start: '2022-11-10' }], legalRep: true }],
    employees: 1,
    note: 'Holding of OPENAPI S.P.A. (the shareholder in the spec examples); two natural-person owners.',
  },
  {
    vat: '03456780158',
    name: 'GRUPPO ALFA HOLDING S.P.A.',
    legalForm: 'SP',
    activity: '6420',
    town: 'F205',
    incorporationDate: '1998-03-16',
    parents: [],
    employees: 12,
    note: 'Top of a four-level group: ALFA HOLDING → ALFA INDUSTRIE → ALFA LOGISTICA → ALFA TRASPORTI.',
  },
  {
    vat: '03456781057',
    name: 'ALFA INDUSTRIE S.R.L.',
    legalForm: 'SR',
    activity: '2829',
    town: 'B157',
    incorporationDate: '2001-05-21',
    parents: [{ vat: '03456780158', percent: 80, since: '2001-05-21' }],
    employees: 140,
    note: 'Level 1 of the ALFA group: 80% GRUPPO ALFA HOLDING, 20% a natural person; holds ALFA LOGISTICA and half of BETA SERVIZI.',
  },
  {
    vat: '03456782055',
    name: 'ALFA LOGISTICA S.R.L.',
    legalForm: 'SU',
    activity: '5210',
    town: 'L781',
    incorporationDate: '2008-09-01',
    parents: [{ vat: '03456781057', percent: 100, since: '2008-09-01' }],
    employees: 45,
    note: 'Level 2 of the ALFA group: single-member S.R.L. owned 100% by ALFA INDUSTRIE.',
  },
  {
    vat: '03456783053',
    name: 'ALFA TRASPORTI S.R.L.',
    legalForm: 'SR',
    activity: '4941',
    town: 'G224',
    incorporationDate: '2012-02-14',
    parents: [{ vat: '03456782055', percent: 60, since: '2015-06-30' }],
    employees: 38,
    note: 'Level 3 of the ALFA group (walk up three company shareholders to the top); 60% ALFA LOGISTICA, 40% natural persons.',
  },
  {
    vat: '04123450159',
    name: 'BETA SERVIZI S.R.L.',
    legalForm: 'SR',
    activity: '7022',
    town: 'L219',
    incorporationDate: '2016-10-03',
    parents: [
      { vat: '03456781057', percent: 50, since: '2016-10-03' },
      { vat: '04123450787', percent: 50, since: '2016-10-03' },
    ],
    employees: 9,
    note: 'Joint venture with two company shareholders (ALFA INDUSTRIE 50%, DELTA COSTRUZIONI 50%) and no natural-person shareholder.',
  },
  {
    vat: '04123450787',
    name: 'DELTA COSTRUZIONI DI ESPOSITO GIOVANNI & C. S.A.S.',
    legalForm: 'AS',
    activity: '4120',
    town: 'F839',
    incorporationDate: '1994-04-11',
    parents: [],
    personHolders: [
      { person: GIOVANNI_ESPOSITO, percent: 70, since: '1994-04-11' },
      { person: ANNA_ESPOSITO, percent: 30, since: '1994-04-11' },
    ],
    personManagers: [
      { person: GIOVANNI_ESPOSITO, roles: [{ code: 'SOA', start: '1994-04-11' }], legalRep: true },
      { person: ANNA_ESPOSITO, roles: [{ code: 'SAC', start: '1994-04-11' }], legalRep: false },
    ],
    employees: 22,
    note: 'Limited partnership (S.A.S.): a general and a limited partner; holds half of BETA SERVIZI.',
  },
  {
    vat: '05234560158',
    name: 'VECCHIA FORNACE DI BIANCHI & C. S.N.C.',
    legalForm: 'SN',
    activity: '1071',
    town: 'D612',
    status: 'CESSATA',
    incorporationDate: '1987-02-02',
    endDate: '2021-06-30',
    parents: [],
    personHolders: [
      { person: PAOLO_BIANCHI, percent: 50, since: '1987-02-02' },
      { person: LAURA_BIANCHI, percent: 50, since: '1987-02-02' },
    ],
    personManagers: [
      {
        person: PAOLO_BIANCHI,
        roles: [
          { code: 'SOC', start: '1987-02-02' },
          { code: 'LIQ', start: '2020-11-15' },
        ],
        legalRep: true,
      },
      { person: LAURA_BIANCHI, roles: [{ code: 'SOC', start: '1987-02-02' }], legalRep: true },
    ],
    employees: 0,
    note: 'Ceased general partnership (activityStatus CESSATA, endDate set, IT-closed says taxCodeCeased true).',
  },
  {
    vat: '06345671462',
    name: "IL GIRASOLE SOCIETA' COOPERATIVA SOCIALE",
    legalForm: 'OO',
    activity: '8810',
    town: 'A944',
    incorporationDate: '2004-12-01',
    parents: [],
    employees: 64,
    note: 'Social cooperative: board of directors, no listed shareholders.',
  },
  {
    vat: '07456780159',
    name: 'ROSSI MARIO',
    legalForm: 'DI',
    activity: '4520',
    town: 'H501',
    incorporationDate: '2010-04-12',
    parents: [],
    ownerTaxCode: 'RSSMRA80A01H501U',
    personHolders: [{ person: MARIO_ROSSI, percent: 100, since: '2010-04-12' }],
    personManagers: [{ person: MARIO_ROSSI, roles: [{ code: 'TIT', start: '2010-04-12' }], legalRep: true }],
    employees: 3,
    note: "Sole proprietorship: its fiscal code is the owner's (RSSMRA80A01H501U), not the VAT number; lookups by either work.",
  },
  {
    vat: '08567891000',
    name: 'AZIENDA SPECIALE SERVIZI MUNICIPALI',
    legalForm: 'AZ',
    activity: '3811',
    town: 'A662',
    incorporationDate: '1999-01-01',
    parents: [],
    employees: 210,
    publicAdministration: true,
    splitPayment: true,
    note: 'Public body: found by IT-pa and IT-splitpayment (other companies answer 404 there).',
  },
  {
    vat: '09678900151',
    name: 'NUOVA IDEA DIGITALE S.R.L.S.',
    legalForm: 'RS',
    activity: '6201',
    town: 'L219',
    incorporationDate: '2022-03-08',
    parents: [],
    employees: 4,
    innovativeStartup: true,
    note: 'Simplified S.R.L. (S.R.L.S.), innovative start-up.',
  },
  {
    vat: '01789011465',
    name: 'REVISIONE CONTABILE ITALIA S.P.A.',
    legalForm: 'SP',
    activity: '6920',
    town: 'F205',
    incorporationDate: '1985-06-20',
    parents: [],
    employees: 320,
    note: null,
  },
  {
    vat: '02890120583',
    name: 'AUDIT PARTNERS S.R.L.',
    legalForm: 'SR',
    activity: '6920',
    town: 'H501',
    incorporationDate: '2003-09-15',
    parents: [],
    employees: 48,
    note: null,
  },
];

const BY_VAT = new Map(PINNED_COMPANIES.map((c) => [c.vat, c]));
const BY_TAX_CODE = new Map(PINNED_COMPANIES.filter((c) => c.ownerTaxCode).map((c) => [c.ownerTaxCode as string, c]));

export const pinnedByVat = (vat: string): PinnedCompany | undefined => BY_VAT.get(vat);
export const pinnedByOwnerTaxCode = (taxCode: string): PinnedCompany | undefined => BY_TAX_CODE.get(taxCode.toUpperCase());

/** Audit firms that generated joint-stock companies name as auditors (company managers). */
export const AUDIT_FIRMS = ['01789011465', '02890120583'] as const;
