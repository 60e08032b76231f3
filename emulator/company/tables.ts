/**
 * Code tables of the company data: legal forms, ATECO activities (with their NACE and SIC
 * counterparts), manager roles, employee and turnover ranges, RAE/SAE sectors, SDI codes.
 * Descriptions are the emulator's own wording where the vendor does not publish its tables.
 */

/** Detailed legal forms (the company register's two-letter codes), as `GET /IT-legalforms` lists them. */
export const LEGAL_FORMS: ReadonlyArray<{ code: string; description: string }> = [
  { code: 'AA', description: "SOCIETA' IN ACCOMANDITA PER AZIONI" },
  { code: 'AC', description: 'ASSOCIAZIONE' },
  { code: 'AE', description: "SOCIETA' CONSORTILE IN ACCOMANDITA SEMPLICE" },
  { code: 'AF', description: 'ALTRE FORME' },
  { code: 'AI', description: 'ASSOCIAZIONE IMPRESA' },
  { code: 'AL', description: 'AZIENDA SPECIALE DI ENTE LOCALE' },
  { code: 'AM', description: 'AZIENDA MUNICIPALE' },
  { code: 'AN', description: "SOCIETA' CONSORTILE IN NOME COLLETTIVO" },
  { code: 'AP', description: 'AZIENDA PROVINCIALE' },
  { code: 'AR', description: 'AZIENDA REGIONALE' },
  { code: 'AS', description: "SOCIETA' IN ACCOMANDITA SEMPLICE" },
  { code: 'AT', description: 'AZIENDA AUTONOMA STATALE' },
  { code: 'AU', description: "SOCIETA' PER AZIONI CON SOCIO UNICO" },
  { code: 'AZ', description: 'AZIENDA SPECIALE' },
  { code: 'CC', description: "CONSORZIO CON ATTIVITA' ESTERNA" },
  { code: 'CE', description: 'COMUNIONE EREDITARIA' },
  { code: 'CF', description: 'CONSORZIO FIDI' },
  { code: 'CI', description: "SOCIETA' COOPERATIVA A RESPONSABILITA' ILLIMITATA" },
  { code: 'CL', description: "SOCIETA' COOPERATIVA A RESPONSABILITA' LIMITATA" },
  { code: 'CM', description: 'CONSORZIO MUNICIPALE' },
  { code: 'CN', description: "SOCIETA' CONSORTILE" },
  { code: 'CO', description: 'CONSORZIO' },
  { code: 'CR', description: 'CONSORZIO REGIONALE' },
  { code: 'CS', description: "CONSORZIO SENZA ATTIVITA' ESTERNA" },
  { code: 'CZ', description: 'CONSORZIO DI CUI AL DLGS 267/2000' },
  { code: 'DI', description: 'IMPRESA INDIVIDUALE' },
  { code: 'EC', description: 'ENTE PUBBLICO COMMERCIALE' },
  { code: 'ED', description: 'ENTE DIRITTO PUBBLICO' },
  { code: 'EE', description: 'ENTE ECCLESIASTICO' },
  { code: 'EI', description: 'ENTE IMPRESA' },
  { code: 'EL', description: 'ENTE SOCIALE' },
  { code: 'EM', description: 'ENTE MORALE' },
  { code: 'EN', description: 'ENTE' },
  { code: 'EP', description: 'ENTE PUBBLICO ECONOMICO' },
  { code: 'ER', description: 'ENTE ECCLESIASTICO CIVILMENTE RICONOSCIUTO' },
  { code: 'ES', description: 'ENTE DI CUI ALLA L.R. 21-12-93, N.88' },
  { code: 'FI', description: 'FONDAZIONE IMPRESA' },
  { code: 'FO', description: 'FONDAZIONE' },
  { code: 'GE', description: 'GRUPPO EUROPEO DI INTERESSE ECONOMICO' },
  { code: 'IC', description: 'ISTITUTO DI CREDITO' },
  { code: 'ID', description: 'ISTITUTO DI CREDITO DI DIRITTO PUBBLICO' },
  { code: 'IF', description: 'IMPRESA FAMILIARE' },
  { code: 'IR', description: 'ISTITUTO RELIGIOSO' },
  { code: 'LL', description: 'AZIENDA SPECIALE DI CUI AL DLGS 267/2000' },
  { code: 'MA', description: 'MUTUA ASSICURAZIONE' },
  { code: 'OC', description: "SOCIETA' COOPERATIVA CONSORTILE" },
  { code: 'OO', description: 'COOPERATIVA SOCIALE' },
  { code: 'OS', description: "SOCIETA' CONSORTILE COOPERATIVA A RESPONSABILITA' LIMITATA" },
  { code: 'PA', description: 'ASSOCIAZIONE IN PARTECIPAZIONE' },
  { code: 'PC', description: "PICCOLA SOCIETA' COOPERATIVA" },
  { code: 'PF', description: 'PERSONA FISICA' },
  { code: 'PS', description: "PICCOLA SOCIETA' COOPERATIVA A RESPONSABILITA' LIMITATA" },
  { code: 'RC', description: "CONTRATTO DI RETE DOTATO DI SOGGETTIVITA' GIURIDICA" },
  { code: 'RR', description: "SOCIETA' A RESPONSABILITA' LIMITATA A CAPITALE RIDOTTO" },
  { code: 'RS', description: "SOCIETA' A RESPONSABILITA' LIMITATA SEMPLIFICATA" },
  { code: 'SA', description: "SOCIETA' ANONIMA" },
  { code: 'SC', description: "SOCIETA' COOPERATIVA" },
  { code: 'SD', description: "SOCIETA' EUROPEA" },
  { code: 'SE', description: "SOCIETA' SEMPLICE" },
  { code: 'SF', description: "SOCIETA' DI FATTO" },
  { code: 'SG', description: "SOCIETA' COOPERATIVA EUROPEA" },
  { code: 'SI', description: "SOCIETA' IRREGOLARE" },
  { code: 'SL', description: "SOCIETA' CONSORTILE A RESPONSABILITA' LIMITATA" },
  { code: 'SM', description: "SOCIETA' DI MUTUO SOCCORSO" },
  { code: 'SN', description: "SOCIETA' IN NOME COLLETTIVO" },
  { code: 'SO', description: "SOCIETA' CONSORTILE PER AZIONI" },
  { code: 'SP', description: "SOCIETA' PER AZIONI" },
  { code: 'SR', description: "SOCIETA' A RESPONSABILITA' LIMITATA" },
  { code: 'SS', description: "SOCIETA' COSTITUITA IN BASE A LEGGI DI ALTRO STATO" },
  { code: 'ST', description: 'SOGGETTO ESTERO' },
  { code: 'SU', description: "SOCIETA' A RESPONSABILITA' LIMITATA CON UNICO SOCIO" },
  { code: 'SV', description: "SOCIETA' TRA PROFESSIONISTI" },
  { code: 'SZ', description: "SOCIETA' NON PREVISTA DALLA LEGISLAZIONE ITALIANA" },
  { code: 'XX', description: 'NON PRECISATA' },
];

const LEGAL_FORM_BY_CODE = new Map(LEGAL_FORMS.map((f) => [f.code, f]));

export function legalFormByCode(code: string): { code: string; description: string } | undefined {
  return LEGAL_FORM_BY_CODE.get(code.toUpperCase());
}

/** English descriptions of the detailed legal forms the generator uses (Full-family `detailedLegalForm`). */
export const LEGAL_FORM_EN: Record<string, string> = {
  SR: 'Limited liability company/ limited company',
  SU: 'Single-member limited liability company',
  RS: 'Simplified limited liability company',
  SP: 'Joint-stock company',
  AU: 'Single-member joint-stock company',
  SN: 'General partnership',
  AS: 'Limited partnership',
  SC: 'Cooperative company',
  OO: 'Social cooperative',
  DI: 'Sole proprietorship',
  AZ: 'Special agency',
  CO: 'Consortium',
};

/** Name suffix of a legal form, as companies write it. */
export const LEGAL_FORM_SUFFIX: Record<string, string> = {
  SR: 'S.R.L.',
  SU: 'S.R.L.',
  RS: 'S.R.L.S.',
  SP: 'S.P.A.',
  AU: 'S.P.A.',
  SN: 'S.N.C.',
  AS: 'S.A.S.',
  SC: "SOCIETA' COOPERATIVA",
  OO: "SOCIETA' COOPERATIVA SOCIALE",
  DI: '',
  AZ: '',
  CO: '',
};

/** The legal-form family of the contract's `legalForm.legalForm`: SC capital companies, SP partnerships, AL others. */
export function legalFormFamily(detailed: string): { code: string; description: string } {
  if (['SR', 'SU', 'RS', 'RR', 'SP', 'AU', 'AA', 'SA', 'SD', 'SO', 'SL', 'CN'].includes(detailed)) return { code: 'SC', description: 'Joint stock business' };
  if (['SN', 'AS', 'SE', 'SF', 'SI', 'AN', 'AE'].includes(detailed)) return { code: 'SP', description: 'Partnership' };
  return { code: 'AL', description: 'Other legal forms' };
}

/** An ATECO activity, with its international counterparts and the words companies use for it. */
export interface Activity {
  /** ATECO code, four digits without dots (2007 and 2022 editions share it here). */
  code: string;
  /** Italian description of the code. */
  it: string;
  /** Three-digit group and its Italian description (IT-advanced's `ateco`). */
  group: string;
  groupIt: string;
  /** English description (Full-family sections). */
  en: string;
  nace: string;
  sic: { code: string; description: string };
  /** Words for generated company names. */
  words: readonly string[];
  /** Typical turnover per employee, euro. */
  turnoverPerEmployee: number;
}

export const ACTIVITIES: readonly Activity[] = [
  {
    code: '6201',
    it: "Produzione di software non connesso all'edizione",
    group: '621',
    groupIt: 'Attività di programmazione informatica',
    en: 'Production of software not related to editing',
    nace: 'Computer programming activities',
    sic: { code: '7372', description: 'Computer programming & software services' },
    words: ['SOFTWARE', 'DIGITAL', 'TECH', 'INFORMATICA', 'SYSTEMS'],
    turnoverPerEmployee: 110_000,
  },
  {
    code: '6202',
    it: "Consulenza nel settore delle tecnologie dell'informatica",
    group: '620',
    groupIt: 'Consulenza informatica',
    en: 'IT consultancy',
    nace: 'Computer consultancy activities',
    sic: { code: '7373', description: 'Computer integrated systems design' },
    words: ['CONSULTING', 'IT SERVICES', 'DATA', 'NETWORK'],
    turnoverPerEmployee: 95_000,
  },
  {
    code: '4120',
    it: 'Costruzione di edifici residenziali e non residenziali',
    group: '412',
    groupIt: 'Costruzione di edifici',
    en: 'Construction of residential and non-residential buildings',
    nace: 'Construction of residential and non-residential buildings',
    sic: { code: '1521', description: 'General contractors-single-family houses' },
    words: ['COSTRUZIONI', 'EDILIZIA', 'IMMOBILIARE COSTRUZIONI', 'EDIL'],
    turnoverPerEmployee: 150_000,
  },
  {
    code: '4321',
    it: 'Installazione di impianti elettrici',
    group: '432',
    groupIt: 'Installazione di impianti elettrici, idraulici ed altri lavori di costruzione',
    en: 'Electrical installation',
    nace: 'Electrical installation',
    sic: { code: '1731', description: 'Electrical work' },
    words: ['IMPIANTI', 'ELETTRICA', 'IMPIANTI ELETTRICI'],
    turnoverPerEmployee: 90_000,
  },
  {
    code: '5610',
    it: 'Ristoranti e attività di ristorazione mobile',
    group: '561',
    groupIt: 'Ristoranti e attività di ristorazione mobile',
    en: 'Restaurants and mobile food service activities',
    nace: 'Restaurants and mobile food service activities',
    sic: { code: '5812', description: 'Eating places' },
    words: ['RISTORAZIONE', 'TRATTORIA', 'OSTERIA', 'FOOD'],
    turnoverPerEmployee: 55_000,
  },
  {
    code: '5510',
    it: 'Alberghi e strutture simili',
    group: '551',
    groupIt: 'Alberghi e strutture simili',
    en: 'Hotels and similar accommodation',
    nace: 'Hotels and similar accommodation',
    sic: { code: '7011', description: 'Hotels and motels' },
    words: ['HOTEL', 'ALBERGHI', 'TURISMO', 'RESORT'],
    turnoverPerEmployee: 70_000,
  },
  {
    code: '4711',
    it: 'Commercio al dettaglio in esercizi non specializzati con prevalenza di prodotti alimentari e bevande',
    group: '471',
    groupIt: 'Commercio al dettaglio in esercizi non specializzati',
    en: 'Retail sale in non-specialised stores with food, beverages or tobacco predominating',
    nace: 'Retail sale in non-specialised stores',
    sic: { code: '5411', description: 'Grocery stores' },
    words: ['MARKET', 'SUPERMERCATI', 'ALIMENTARI', 'DISCOUNT'],
    turnoverPerEmployee: 180_000,
  },
  {
    code: '4690',
    it: "Commercio all'ingrosso non specializzato",
    group: '469',
    groupIt: "Commercio all'ingrosso non specializzato",
    en: 'Non-specialised wholesale trade',
    nace: 'Non-specialised wholesale trade',
    sic: { code: '5199', description: 'Nondurable goods, nec' },
    words: ['DISTRIBUZIONE', 'COMMERCIALE', 'TRADING', 'INGROSSO'],
    turnoverPerEmployee: 320_000,
  },
  {
    code: '4941',
    it: 'Trasporto di merci su strada',
    group: '494',
    groupIt: 'Trasporto di merci su strada e servizi di trasloco',
    en: 'Freight transport by road',
    nace: 'Freight transport by road',
    sic: { code: '4213', description: 'Trucking, except local' },
    words: ['TRASPORTI', 'AUTOTRASPORTI', 'CARGO', 'EXPRESS'],
    turnoverPerEmployee: 120_000,
  },
  {
    code: '5210',
    it: 'Magazzinaggio e custodia',
    group: '521',
    groupIt: 'Magazzinaggio e custodia',
    en: 'Warehousing and storage',
    nace: 'Warehousing and storage',
    sic: { code: '4225', description: 'General warehousing and storage' },
    words: ['LOGISTICA', 'LOGISTICS', 'MAGAZZINI'],
    turnoverPerEmployee: 130_000,
  },
  {
    code: '2511',
    it: 'Fabbricazione di strutture metalliche e di parti di strutture',
    group: '251',
    groupIt: 'Fabbricazione di elementi da costruzione in metallo',
    en: 'Manufacture of metal structures and parts of structures',
    nace: 'Manufacture of metal structures and parts of structures',
    sic: { code: '3441', description: 'Fabricated structural metal' },
    words: ['CARPENTERIA METALLICA', 'METALLI', 'ACCIAI', 'STRUTTURE'],
    turnoverPerEmployee: 160_000,
  },
  {
    code: '2829',
    it: 'Fabbricazione di altre macchine di impiego generale',
    group: '282',
    groupIt: 'Fabbricazione di altre macchine di impiego generale',
    en: 'Manufacture of other general-purpose machinery',
    nace: 'Manufacture of other general-purpose machinery',
    sic: { code: '3569', description: 'General industrial machinery, nec' },
    words: ['MECCANICA', 'MACCHINE', 'INDUSTRIE', 'AUTOMATION'],
    turnoverPerEmployee: 200_000,
  },
  {
    code: '1071',
    it: 'Produzione di pane e prodotti di pasticceria freschi',
    group: '107',
    groupIt: 'Produzione di prodotti da forno e farinacei',
    en: 'Manufacture of bread; manufacture of fresh pastry goods and cakes',
    nace: 'Manufacture of bread and fresh pastry goods',
    sic: { code: '2051', description: 'Bread and other bakery products' },
    words: ['PANIFICIO', 'FORNO', 'PASTICCERIA', 'DOLCIARIA'],
    turnoverPerEmployee: 75_000,
  },
  {
    code: '1102',
    it: 'Produzione di vini da uve',
    group: '110',
    groupIt: 'Industria delle bevande',
    en: 'Manufacture of wine from grape',
    nace: 'Manufacture of wine from grape',
    sic: { code: '2084', description: 'Wines, brandy, and brandy spirits' },
    words: ['VINI', 'CANTINE', 'AGRICOLA VITIVINICOLA', 'TENUTA'],
    turnoverPerEmployee: 230_000,
  },
  {
    code: '6920',
    it: 'Attività degli studi commerciali, tributari e revisione contabile',
    group: '692',
    groupIt: 'Contabilità, controllo e revisione contabile, consulenza fiscale',
    en: 'Accounting, bookkeeping and auditing activities; tax consultancy',
    nace: 'Accounting, bookkeeping and auditing activities',
    sic: { code: '8721', description: 'Accounting, auditing, and bookkeeping' },
    words: ['REVISIONE', 'AUDIT', 'STUDIO ASSOCIATO', 'CONSULENZA FISCALE'],
    turnoverPerEmployee: 85_000,
  },
  {
    code: '7022',
    it: 'Consulenza imprenditoriale e altra consulenza amministrativo-gestionale',
    group: '702',
    groupIt: 'Attività di consulenza gestionale',
    en: 'Business and other management consultancy activities',
    nace: 'Business and other management consultancy activities',
    sic: { code: '8742', description: 'Management consulting services' },
    words: ['MANAGEMENT', 'CONSULENZE', 'ADVISORY', 'PARTNERS'],
    turnoverPerEmployee: 100_000,
  },
  {
    code: '6420',
    it: 'Attività delle società di partecipazione (holding)',
    group: '642',
    groupIt: 'Attività delle società di partecipazione (holding)',
    en: 'Activities of holding companies',
    nace: 'Activities of holding companies',
    sic: { code: '6719', description: 'Holding companies, nec' },
    words: ['HOLDING', 'PARTECIPAZIONI', 'INVESTIMENTI'],
    turnoverPerEmployee: 250_000,
  },
  {
    code: '6820',
    it: 'Affitto e gestione di immobili di proprietà o in leasing',
    group: '682',
    groupIt: 'Affitto e gestione di immobili di proprietà o in leasing',
    en: 'Rental and operating of own or leased real estate',
    nace: 'Rental and operating of own or leased real estate',
    sic: { code: '6512', description: 'Nonresidential building operators' },
    words: ['IMMOBILIARE', 'REAL ESTATE', 'GESTIONI IMMOBILIARI'],
    turnoverPerEmployee: 260_000,
  },
  {
    code: '8810',
    it: 'Assistenza sociale non residenziale per anziani e disabili',
    group: '881',
    groupIt: 'Assistenza sociale non residenziale',
    en: 'Social work activities without accommodation for the elderly and disabled',
    nace: 'Social work activities without accommodation',
    sic: { code: '8322', description: 'Individual and family services' },
    words: ['SERVIZI SOCIALI', 'ASSISTENZA', 'SOLIDARIETA'],
    turnoverPerEmployee: 40_000,
  },
  {
    code: '3511',
    it: 'Produzione di energia elettrica',
    group: '351',
    groupIt: 'Produzione, trasmissione e distribuzione di energia elettrica',
    en: 'Production of electricity',
    nace: 'Production of electricity',
    sic: { code: '4911', description: 'Electric services' },
    words: ['ENERGIA', 'ENERGY', 'SOLARE', 'RINNOVABILI'],
    turnoverPerEmployee: 400_000,
  },
  {
    code: '7311',
    it: 'Agenzie pubblicitarie',
    group: '731',
    groupIt: 'Pubblicità',
    en: 'Advertising agencies',
    nace: 'Advertising agencies',
    sic: { code: '7311', description: 'Advertising agencies' },
    words: ['COMUNICAZIONE', 'MEDIA', 'ADV', 'CREATIVE'],
    turnoverPerEmployee: 90_000,
  },
  {
    code: '4520',
    it: 'Manutenzione e riparazione di autoveicoli',
    group: '452',
    groupIt: 'Manutenzione e riparazione di autoveicoli',
    en: 'Maintenance and repair of motor vehicles',
    nace: 'Maintenance and repair of motor vehicles',
    sic: { code: '7538', description: 'General automotive repair shops' },
    words: ['AUTOFFICINA', 'CAR SERVICE', 'AUTORIPARAZIONI'],
    turnoverPerEmployee: 80_000,
  },
  {
    code: '3811',
    it: 'Raccolta di rifiuti non pericolosi',
    group: '381',
    groupIt: 'Raccolta dei rifiuti',
    en: 'Collection of non-hazardous waste',
    nace: 'Collection of non-hazardous waste',
    sic: { code: '4953', description: 'Refuse systems' },
    words: ['AMBIENTE', 'ECOLOGIA', 'SERVIZI AMBIENTALI'],
    turnoverPerEmployee: 110_000,
  },
];

export const activityByCode = (code: string): Activity | undefined => ACTIVITIES.find((a) => a.code === code);

/** Manager roles: code, English description (Full family) and Italian (IT-ubo). */
export const ROLES = {
  AUN: { en: 'Managing director', it: 'AMMINISTRATORE UNICO' },
  PCA: { en: 'Chairman of the board of directors', it: 'PRESIDENTE CONSIGLIO AMMINISTRAZIONE' },
  ADE: { en: 'Chief executive officer', it: 'AMMINISTRATORE DELEGATO' },
  CON: { en: 'Board member', it: 'CONSIGLIERE' },
  PP: { en: 'Special representative/agent', it: 'PROCURATORE SPECIALE' },
  SOU: { en: 'Sole owner', it: 'SOCIO UNICO' },
  SOC: { en: 'Partner', it: 'SOCIO' },
  SOA: { en: 'General partner', it: 'SOCIO ACCOMANDATARIO' },
  SAC: { en: 'Limited partner', it: 'SOCIO ACCOMANDANTE' },
  PCS: { en: 'Chairman of the board of statutory auditors', it: 'PRESIDENTE DEL COLLEGIO SINDACALE' },
  SIN: { en: 'Statutory auditor', it: 'SINDACO EFFETTIVO' },
  REV: { en: 'Auditor', it: 'REVISORE LEGALE' },
  TIT: { en: 'Owner', it: 'TITOLARE FIRMATARIO' },
  LIQ: { en: 'Liquidator', it: 'LIQUIDATORE' },
} as const;

export type RoleCode = keyof typeof ROLES;

/** Employee ranges (`employees.employeeRange`). */
export function employeeRange(n: number): { code: string; description: string } {
  const bands: Array<[number, string, string]> = [
    [1, 'ER1', '0 - 1'],
    [5, 'ER2', '2 - 5'],
    [10, 'ER3', '6 - 10'],
    [20, 'ER4', '11 - 20'],
    [50, 'ER5', '21 - 50'],
    [100, 'ER6', '51 - 100'],
    [250, 'ER7', '101 - 250'],
    [500, 'ER8', '251 - 500'],
    [1000, 'ER9', '501 - 1000'],
  ];
  for (const [max, code, description] of bands) if (n <= max) return { code, description };
  return { code: 'ER10', description: '> 1000' };
}

/** Turnover ranges (`ecofin.turnoverRange`). */
export function turnoverRange(t: number): { code: string; description: string } {
  const bands: Array<[number, string]> = [
    [49_999, 'TR1'],
    [99_999, 'TR2'],
    [249_999, 'TR3'],
    [499_999, 'TR4'],
    [749_999, 'TR5'],
    [999_999, 'TR6'],
    [4_999_999, 'TR7'],
    [9_999_999, 'TR8'],
    [49_999_999, 'TR9'],
    [249_999_999, 'TR10'],
  ];
  let low = 0;
  for (const [max, code] of bands) {
    if (t <= max) return { code, description: `${low} - ${max}` };
    low = max + 1;
  }
  return { code: 'TR11', description: '> 250000000' };
}

/** Enterprise size from employees and turnover (EU thresholds). */
export function enterpriseSize(employees: number, turnover: number): { code: string; description: string } {
  if (employees < 10 && turnover <= 2_000_000) return { code: 'MICRO', description: 'Micro enterprise' };
  if (employees < 50 && turnover <= 10_000_000) return { code: 'SMALL', description: 'Small enterprise' };
  if (employees < 250 && turnover <= 50_000_000) return { code: 'MEDIUM', description: 'Medium enterprise' };
  return { code: 'LARGE', description: 'Large enterprise' };
}

/** Bank of Italy activity (RAE) by ATECO division. */
export function raeOf(ateco: string): { code: string; description: string } {
  const div = ateco.slice(0, 2);
  if (['41', '42', '43'].includes(div)) return { code: '500', description: 'EDILIZIA E OPERE PUBBLICHE' };
  if (['45', '46', '47'].includes(div)) return { code: '610', description: 'SERVIZI DEL COMMERCIO' };
  if (['55', '56'].includes(div)) return { code: '660', description: 'SERVIZI ALBERGHI E PUBBLICI ESERCIZI' };
  if (['49', '52'].includes(div)) return { code: '710', description: 'SERVIZI DEI TRASPORTI E MAGAZZINAGGIO' };
  if (['10', '11', '25', '28'].includes(div)) return { code: '320', description: 'PRODOTTI INDUSTRIALI' };
  if (div === '35') return { code: '160', description: 'PRODOTTI ENERGETICI' };
  return { code: '830', description: 'SERV.FIN./IMM./FISCALI/TECNICI' };
}

/** Bank of Italy economic sector (SAE). */
export function saeOf(legalForm: string, ateco: string): { code: string; description: string } {
  if (legalForm === 'DI') return { code: '615', description: 'Altre famiglie produttrici' };
  if (['AZ', 'AL', 'EP', 'EC'].includes(legalForm)) return { code: '475', description: 'Imprese produttive pubbliche' };
  if (ateco === '6420') return { code: '257', description: 'Holding private' };
  return { code: '430', description: 'Imprese produttive' };
}

/** SDI (e-invoice recipient) codes of intermediaries that companies commonly use. */
export const SDI_CODES = ['USAL8PV', 'KRRH6B9', 'M5UXCR1', 'SUBM70N', 'T04ZHR3', 'W7YVJK9', '5RUO82D', 'X2PH38J', 'BA6ET11', 'MJEGRSK', '0000000'] as const;

/** Certified-mail provider domains. */
export const PEC_DOMAINS = ['legalmail.it', 'pec.it', 'arubapec.it', 'pec.cgn.it', 'registerpec.it', 'postecert.it'] as const;
