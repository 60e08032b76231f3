/**
 * Every 200 example of the vendor's company spec (subgraphs/company/fixtures/vendor-examples.json,
 * all 62 examples of company.openapi.json) goes through the whole stack (gateway → company
 * subgraph → upstream client → a stub answering the example, envelope included) and comes out of
 * the gateway with its values intact, or is listed in `NOT_REACHED` with the reason no operation
 * makes the layer receive it.
 *
 * One table, one row per example. A row holds the GraphQL operation that makes the layer buy exactly
 * that endpoint and the one upstream request it must cause. The GraphQL `data` the example must come
 * out as is written down as data, one entry per row, in `test/company/fixtures/vendor-examples.expected.json`
 * (the documented mapping of schema.graphql applied to the example; no second normaliser computes it):
 *
 * - strings as given (surrounding blanks trimmed; an empty string and the vendor's `"NULL"` are "no value", null);
 * - dates as the `DateTime` the schema promises: ISO 8601 in UTC with milliseconds (`2013-07-19` →
 *   `2013-07-19T00:00:00.000Z`, Unix seconds → their instant, extra fraction digits cut to ms);
 * - `{code, description}` objects as `CodedValue`, null without a code;
 * - GPS coordinates in GeoJSON order (`[longitude, latitude]`);
 * - enums as their mapped values (register status ATTIVA → ACTIVE, dataset IT-advanced → IT_ADVANCED …),
 *   and the code as written in the `raw…` field beside each;
 * - sections the payload lacks as null.
 *
 * And no value of the example is lost on the way: every value of the example must be in the row's
 * expected data (as given, trimmed, or as its `DateTime`), or be listed in the row's `notExposed`
 * with the reason the schema has no field for it; a listed path that matches nothing in the example
 * fails the row too (the lists hold only what is truly left out).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeItalianVat } from '../../../contract/checksums.ts';
import {
  BALANCE_SHEET_SECTIONS,
  COMPANY_DATES_FIELDS,
  EMPLOYEE_STATISTICS_FIELDS,
  INCOME_STATEMENT_SECTIONS,
  OPERATING_RESULTS_FIELDS,
  RATIO_FIELDS,
  WEB_AND_SOCIAL_LINKS,
} from '../../../contract/company-payloads.ts';
import { json, startStub, type Stub } from '../../support/stub.ts';
import { startTestStack, type GraphQLResponse, type TestStack } from '../../support/stack.ts';

type Obj = Record<string, unknown>;

const EXAMPLES = JSON.parse(readFileSync(new URL('../../../subgraphs/company/fixtures/vendor-examples.json', import.meta.url), 'utf8')) as Record<string, unknown>;
const exampleKeys = Object.keys(EXAMPLES).filter((k) => !k.startsWith('_'));

/** The GraphQL `data` each row's example comes out as, written down as data (the documented mapping applied to the vendor's example). */
const EXPECTED = JSON.parse(readFileSync(new URL('../fixtures/vendor-examples.expected.json', import.meta.url), 'utf8')) as Record<string, { example: string; data: Obj }>;

function example(key: string): Obj {
  const body = EXAMPLES[key];
  if (!body || typeof body !== 'object') throw new Error(`no vendor example "${key}"`);
  return structuredClone(body) as Obj;
}

/** The first record of an example's `data` (untracked: for building requests, not expectations). */
function firstRecord(key: string): Obj {
  const data = example(key).data;
  return (Array.isArray(data) ? (data[0] as Obj) : (data as Obj)) ?? {};
}

// ---------------------------------------------------------------------------------------------
// Stub upstream: every example by its method and path template; `#variant` examples by the
// request's `dataEnrichment` (search) or the synchronous answer (composite tiers).
// ---------------------------------------------------------------------------------------------

interface Route {
  key: string;
  method: string;
  pattern: RegExp;
  variant: string | null;
}

const ROUTES: Route[] = exampleKeys.map((key) => {
  const m = /^(\w+) (\S+)(?: #(.+))?$/.exec(key);
  if (!m) throw new Error(`unexpected example key ${key}`);
  const [, method, template, variant] = m;
  const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
  return { key, method, pattern, variant: variant ?? null };
});

/** The example a request is answered with, or null (404). */
function exampleFor(method: string, path: string, query: URLSearchParams): string | null {
  const candidates = ROUTES.filter((r) => r.method === method && r.pattern.test(path));
  if (candidates.length <= 1) return candidates[0]?.key ?? null;
  // IT-vatgroup: asked with a tax code or without; IT-ubo: a company without beneficial owners.
  const variant = (v: string): string | undefined => candidates.find((r) => r.variant === v)?.key;
  if (variant('with taxCode')) return (query.has('taxCode') ? variant('with taxCode') : variant('without taxCode')) ?? null;
  if (variant('presence')) return (path === `/IT-ubo/${NO_UBO_VAT}` ? variant('non-presence') : variant('presence')) ?? null;
  const enrichment = query.get('dataEnrichment');
  const byEnrichment = candidates.find((r) => r.variant !== null && (enrichment ? r.variant.toLowerCase() === enrichment.toLowerCase() : r.variant === 'NoEnrichment'));
  if (byEnrichment) return byEnrichment.key;
  return (candidates.find((r) => r.variant === 'synchronous') ?? candidates[0]).key;
}

interface Served {
  method: string;
  path: string;
  query: URLSearchParams;
  body: string;
  authorization: string | undefined;
  example: string | null;
}

// ---------------------------------------------------------------------------------------------
// Example recorder: which values of an example a row's mapping read.
// ---------------------------------------------------------------------------------------------

/**
 * Leaves of an example that the expected data does not show and `notExposed` does not list, and the
 * listed paths that match no leaf of the example (stale entries), as `listed but absent: <path>`.
 * A leaf is shown when the data holds it as given, trimmed, or as the `DateTime` it maps to (or a
 * number given as text, and back); an empty string, the vendor's `"NULL"` and null carry nothing to show.
 */
function unexposed(plain: unknown, expected: unknown, notExposed: NotExposed): string[] {
  const leaves = (v: unknown, out: unknown[] = []): unknown[] => {
    if (v !== null && typeof v === 'object') for (const c of Object.values(v as Obj)) leaves(c, out);
    else out.push(v);
    return out;
  };
  const shownValues = new Set(leaves(expected).map((v) => JSON.stringify(v)));
  const shown = (v: unknown): boolean => v !== undefined && v !== null && shownValues.has(JSON.stringify(v));
  const out: string[] = [];
  const used = new Set<string>();
  const generic = (p: string): string => p.replace(/\[\d+\]/g, '[]');
  const listed = (p: string): boolean => {
    const g = generic(p);
    const hit = Object.keys(notExposed).find((n) => g === n || g.startsWith(`${n}.`) || g.startsWith(`${n}[`));
    if (hit !== undefined) used.add(hit);
    return hit !== undefined;
  };
  const walk = (v: unknown, p: string): void => {
    const children = v !== null && typeof v === 'object' ? Object.entries(v as Obj) : [];
    if (children.length === 0) {
      if (listed(p)) return;
      if (v === null || (v !== null && typeof v === 'object')) return;
      const t = typeof v === 'string' ? v.trim() : v;
      if (t === '' || t === 'NULL') return;
      if (shown(v) || shown(t) || shown(dateTime(v)) || (typeof v === 'string' && shown(Number(v))) || (typeof v === 'number' && shown(String(v)))) return;
      out.push(`${p} = ${JSON.stringify(v)}`);
      return;
    }
    for (const [k, c] of children) walk(c, Array.isArray(v) ? `${p}[${k}]` : p ? `${p}.${k}` : k);
  };
  walk(plain, '');
  for (const n of Object.keys(notExposed)) if (!used.has(n) && !ENVELOPE_KEYS.has(n)) out.push(`listed but absent: ${n}`);
  return out;
}

/** Example values the schema does not carry: path (from the body; array indexes as `[]`) → why. */
type NotExposed = Readonly<Record<string, string>>;

/** Envelope fields: checked by the upstream client, not data. */
const ENVELOPE: NotExposed = {
  success: 'envelope: checked by the upstream client',
  message: 'envelope: checked by the upstream client',
  error: 'envelope: checked by the upstream client',
};
const ENVELOPE_KEYS = new Set(Object.keys(ENVELOPE));

// ---------------------------------------------------------------------------------------------
// The operations: what each row selects (the expected data is in the fixture file)
// ---------------------------------------------------------------------------------------------

const obj = (v: unknown): Obj | null => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : null);
/** A vendor date (`YYYY-MM-DD`, with a time, or Unix seconds) as the `DateTime` the schema promises. */
function dateTime(v: unknown): string | null {
  if (typeof v === 'number') {
    const at = new Date(v * 1000);
    return Number.isNaN(at.getTime()) ? null : at.toISOString();
  }
  if (typeof v !== 'string') return null;
  const m = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2}:\d{2})(?:\.(\d+))?Z?)?$/.exec(v.trim());
  if (!m) return null;
  const [, date, time, fraction] = m;
  const iso = `${date}T${time ?? '00:00:00'}.${(fraction ?? '').slice(0, 3).padEnd(3, '0')}Z`;
  return Number.isNaN(Date.parse(iso)) ? null : iso;
}

// --- Italian companies: IT-start, IT-advanced (and IT-search items) ---------------------------

const IT_START_FIELDS = `vatCode taxCode id companyName lastUpdateDate recordCreationDate registryStatus rawRegistryStatus activityStatus rawActivityStatus
  sdiCode sdiCodeUpdateDate
  address { streetName toponym street streetNumber hamlet zipCode town townCode province { code } region { code description } coordinates { latitude longitude } }`;

const IT_START_DATES = `dates { registrationDate }`;
const IT_ADVANCED_FIELDS = `${IT_START_FIELDS}
  chamberOfCommerce reaCode pec ceased taxCodeCeased taxCodeCeasedUpdateDate
  detailedLegalForm { code description }
  atecoClassification { ateco { code description } ateco2022 { code description } ateco2025 { code description } }
  dates { registrationDate startDate endDate }
  vatGroup { participates isLeader registryOk }
  ecofin { balanceSheetDate turnoverYear turnover shareCapital netWorth }
  employees { count }
  balanceSheets { year balanceSheetDate employees turnover netWorth shareCapital totalStaffCost totalAssets averageGrossSalary }
  shareholders { percentShare owners { __typename taxCode ... on ShareholderPerson { name surname } ... on ShareholderCompany { companyName } } }`;

/** What IT-advanced records hold that the schema does not carry (IT-start records: nothing). */
const IT_ADVANCED_NOT_EXPOSED: NotExposed = {
  taxCodeCeased: 'the example holds a timestamp where the vendor schema says boolean; `taxCodeCeased` is Boolean, so no value (its time is `taxCodeCeasedUpdateDate`)',
};
const inData = (paths: NotExposed, isList = true): NotExposed => Object.fromEntries(Object.entries(paths).map(([p, why]) => [`data${isList ? '[]' : ''}.${p}`, why]));

// --- Italian companies: composite tiers ----------------------------------------------------------

const COMPOSITE_ADDRESS = `address { streetName zipCode town province { code description } region { code description } country { code description } }`;
const COMPOSITE_IDENTITY = `vatCode taxCode companyName serviceNumber chamberOfCommerce reaCode officeType rawOfficeType lastUpdateDate numberOfBranches ${COMPOSITE_ADDRESS}`;

const ECOFIN = `ecofin { balanceSheetDate turnoverRange { code description } turnoverYear turnover turnoverTrend shareCapital netWorth enterpriseSize { code description } }`;
const EMPLOYEES = `employees { range { code description } count trend }`;
const STATISTICS = `employeeStatistics { ${EMPLOYEE_STATISTICS_FIELDS.join(' ')} }`;
const WEB = `webAndSocial { hasSocial ${WEB_AND_SOCIAL_LINKS.join(' ')} }`;
const CONTACTS = `email contacts { telephoneNumber fax }`;
const ATECO = `atecoClassification { ateco { code description } secondaryAteco ateco2022 { code description } secondaryAteco2022 }
  internationalClassification { primarySic { code description } secondarySic nace { code description } }`;
const INNOVATIVE = `isInnovativeStartUp isInnovativeSme`;
const GROUP = `corporateGroup { belongsToGroup groupName holdingCompanyName holdingCountry { code description } hasForeignParentCompany
  nationalParentCompany { companyName streetName town zipCode province { code description } country { code description } } }`;
const OFFICES = `allOffices { companyName vatCode taxCode serviceNumber chamberOfCommerce reaCode officeType rawOfficeType lastUpdateDate activityStatus rawActivityStatus ${COMPOSITE_ADDRESS} }`;
const MANAGERS = `managers { __typename taxCode isLegalRepresentative roles { role { code description } startDate }
  ... on ManagerPerson { name surname gender rawGender birthDate age birthTown } ... on ManagerCompany { companyName } }`;
const SHAREHOLDERS = `shareholders { percentShare shareType { code description } owners { __typename taxCode sinceDate streetName zipCode town
  ... on ShareholderPerson { name surname } ... on ShareholderCompany { companyName serviceNumber } } }`;
const ECONOMICS = `publicTenders { year applied won value }
  foreignTrade { isImporter importPercentShare importCountries isExporter exportPercentShare exportCountries }
  operatingResults { ${OPERATING_RESULTS_FIELDS.join(' ')} }
  rae { code description } sae { code description }`;
const selectSections = (field: string, names: readonly string[]): string => `${field} { ${names.map((s) => `${s} { code value }`).join(' ')} }`;

const SELECT_RATIOS = `ratios { ${Object.entries(RATIO_FIELDS)
  .map(([s, fields]) => `${s} { ${fields.join(' ')} }`)
  .join(' ')} }`;
// --- Companies outside Italy -----------------------------------------------------------------------

const FOREIGN_ADDRESS = `{ streetName streetName2 streetName3 streetName4 toponym street streetNumber zipCode town country townCode region { code description }
  department { code description } coordinates { latitude longitude } nativeTown county nuts1 nuts2 nuts3 usMetropolitanArea usState
  locationAreas { type description } isBranchOffice }`;
const FOREIGN_BASIC = `id level country companyName nativeCompanyName tradingName aliasName vatCode taxCode companyNumber leiCode siretCode sirenCode regonNumber
  establishmentNumber activityStatus registrationDate incorporationDate lastUpdateDate recordCreationDate companySize address ${FOREIGN_ADDRESS}
  identifiers { label number types } vatRegistration { valid formatValid }`;
const FOREIGN_FIELDS = `${FOREIGN_BASIC} contacts { phone fax website } legalForm { code description } creditWorthy
  classification { nace { code description } naics { code description } sic { code description } naf { code description }
    secondaryNace { code description } secondaryNaics { code description } secondarySic { code description }
    codes { scheme isPrimary code description core section division group } national { types primary secondary } }
  balanceSheets { year balanceSheetDate employees turnover netWorth operatingRevenue equity totalAssets }
  offices { siretCode companyName activityStatus address ${FOREIGN_ADDRESS} }`;

// --- Monitors -----------------------------------------------------------------------------------------

const MONITOR_FIELDS = `id code dataset rawDataset monitoredFields companyId vatCode taxCode companyName createdOn checkedOn nextOn expiresOn autorenew updatedFields latestDataset previousDataset`;
/** The monitor's callback settings and owner account: not part of CompanyMonitor. */
const MONITOR_NOT_EXPOSED: NotExposed = {
  'data.callback': 'the callback settings the monitor was created with: the layer’s own (signed) callback, not company data',
  'data.owner': 'the upstream account (e-mail) that owns the monitor: never exposed',
};

// ---------------------------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------------------------

interface UpstreamRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** Query parameters to check; null = must be absent. */
  query?: Record<string, string | null>;
}

interface Row {
  /** The endpoint, as the vendor spec names it. */
  endpoint: string;
  /** Key of the example in vendor-examples.json. */
  example: string;
  /** The one upstream request the operation must make. */
  request: UpstreamRequest;
  operation: string;
  variables?: Obj;
  /** Example values the schema has no field for (paths from the body; array indexes as `[]`). */
  notExposed?: NotExposed;
  /** Extra checks of the upstream request body. */
  requestBody?(body: string): void;
  /** Several upstream requests (instead of the one `request`), in order. */
  flow?: readonly string[];
  /** Further examples the flow served: what the row relies on of each (`shows`, matched against the body), and what else of it the schema has no field for. */
  alsoServed?: ReadonlyArray<{ example: string; shows: Obj; notExposed?: NotExposed }>;
}

const VAT = '12485671007';
/** A company whose slow datasets the stub prepares asynchronously (302 → IT-check_id). */
const SLOW_VAT = makeItalianVat('0211111111');
/** The request id of the vendor's PENDING example. */
const PENDING_ID = '66a8ed9b82cf2ae627012068';
const IT_SEARCH_PAGE = `count total cost skip limit dryRun`;
/** Examples no GraphQL operation makes the layer receive, and why. */
const NOT_REACHED: Readonly<Record<string, string>> = {
  ...Object.fromEntries(
    ['IT-aml', 'IT-marketing', 'IT-stakeholders', 'IT-full'].map((tier) => [
      `POST /${tier}/{vatCode_or_taxCode}`,
      'the PENDING receipt {state, id} of the asynchronous POST variant: the same body as the IT-check_id PENDING example (read in the 302 row); the POST + callback purchase has its own tests (slow-purchase)',
    ]),
  ),
  ...Object.fromEntries(
    ['Address', 'Pec', 'Shareholders', 'Name'].map((e) => [
      `GET /IT-search #${e}`,
      `searchCompanies asks IT-search for the start or advanced enrichment only (their records hold every field of the ${e.toLowerCase()} enrichment)`,
    ]),
  ),
  'GET /IT-shareholders/{vatCode_taxCode_or_id}': 'not bought: it lists only holders above 10 %, less than IT-advanced’s shareHolders, which the planner buys instead',
};

/** A company the stub answers IT-ubo's "no beneficial owner" example for. */
const NO_UBO_VAT = makeItalianVat('0222222222');

const PA_LISTING = `entityCode typeId type { code description } inclusionDate exclusionDate`;
const UBO_FIELDS = `name surname taxCode birthDate birthTown birthProvince { code description }
  address { toponym street streetNumber zipCode town province { code description } region { code description } }
  roles { code description type }`;

/** Managers, shareholdings and group: the ownership sections of IT-stakeholders and IT-aml. */
const OWNERSHIP = `${MANAGERS} ${SHAREHOLDERS} ${GROUP}`;
/** IT-ubo bought for `vat`, answered with `example`. */
function uboRow(endpoint: string, example: string, vat: string): Row {
  return {
    endpoint,
    example,
    request: { method: 'GET', path: `/IT-ubo/${vat}` },
    operation: `query($v: String!) { company(vatCode: $v) { beneficialOwners { ${UBO_FIELDS} } } }`,
    variables: { v: vat },
  };
}

/** The sections of the Marketing shape beyond the identity (IT-full holds them too). */
const MARKETING = `activityStatus rawActivityStatus pec ${CONTACTS} ${WEB} ${ATECO} ${ECOFIN} ${EMPLOYEES} ${STATISTICS} ${INNOVATIVE} ${GROUP} ${OFFICES}`;
/** IT-marketing (sections of the Marketing shape) bought for `vat`, answered with `example`. */
function marketingRow(endpoint: string, example: string, vat: string): Row {
  return {
    endpoint,
    example,
    request: { method: 'GET', path: `/IT-marketing/${vat}` },
    operation: `query($v: String!) { company(vatCode: $v) { ${COMPOSITE_IDENTITY} ${MARKETING} } }`,
    variables: { v: vat },
  };
}

const ROWS: Row[] = [
  // Single-purpose endpoints the planner weighs like tiers (the cheapest source of their fields). They
  // come first: an endpoint already bought for the company is free, so later rows would reuse it.
  {
    endpoint: 'IT-name',
    example: 'GET /IT-name/{vatCode_taxCode_or_id}',
    request: { method: 'GET', path: `/IT-name/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) { vatCode taxCode id companyName lastUpdateDate } }`,
    variables: { v: VAT },
    notExposed: inData({
      'address.registeredOffice.town': 'IT-name gives the town alone: the address (and its town) is bought from IT-address or IT-start, which hold it whole',
      creationTimestamp: '`recordCreationDate` is bought from IT-start or IT-advanced; IT-name is bought for the name and keys',
    }),
  },
  {
    endpoint: 'IT-address',
    example: 'GET /IT-address/{vatCode_taxCode_or_id}',
    request: { method: 'GET', path: `/IT-address/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) { vatCode taxCode id companyName lastUpdateDate
      address { streetName toponym street streetNumber hamlet zipCode town townCode province { code } region { code description } coordinates { latitude longitude } } } }`,
    variables: { v: VAT },
    notExposed: inData({ creationTimestamp: '`recordCreationDate` is bought from IT-start or IT-advanced; IT-address is bought for the address' }),
  },
  {
    endpoint: 'IT-sdicode',
    example: 'GET /IT-sdicode/{vatCode_taxCode_or_id}',
    request: { method: 'GET', path: `/IT-sdicode/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) { sdiCode } }`,
    variables: { v: VAT },
    notExposed: inData({ id: 'the Openapi id is bought from IT-start, IT-advanced or IT-name; IT-sdicode is bought for the SDI code' }),
  },
  {
    endpoint: 'IT-pec',
    example: 'GET /IT-pec/{vatCode_taxCode_or_id}',
    request: { method: 'GET', path: `/IT-pec/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) { pec pecHistory { pec recordedAt } } }`,
    variables: { v: VAT },
  },
  {
    endpoint: 'IT-vatgroup',
    example: 'GET /IT-vatgroup/{vatCode_or_id} #without taxCode',
    request: { method: 'GET', path: `/IT-vatgroup/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) { vatGroup { participates isLeader registryOk } } }`,
    variables: { v: VAT },
  },
  {
    endpoint: 'IT-closed',
    example: 'GET /IT-closed/{vatCode_taxCode_or_id}',
    request: { method: 'GET', path: `/IT-closed/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) { vatCode isCeased } }`,
    variables: { v: VAT },
    notExposed: inData({ id: 'the Openapi id is bought from IT-start, IT-advanced or IT-name; IT-closed is bought for the live ceased flag' }),
  },
  {
    endpoint: 'IT-vatgroup (with taxCode)',
    example: 'GET /IT-vatgroup/{vatCode_or_id} #with taxCode',
    request: { method: 'GET', path: `/IT-vatgroup/${VAT}`, query: { taxCode: 'RSSMRA80A01H501U' } },
    operation: `query($v: String!, $t: String!) { company(vatCode: $v) {
      vatGroupTaxCodeCheck(taxCode: $t) { participates isLeader registryOk taxCodeConsistent taxCodeEntrant taxCodePresent members } } }`,
    variables: { v: VAT, t: 'RSSMRA80A01H501U' },
  },
  uboRow('IT-ubo (owners found)', 'GET /IT-ubo/{vatCode_taxCode_or_id} #presence', VAT),
  uboRow('IT-ubo (none found)', 'GET /IT-ubo/{vatCode_taxCode_or_id} #non-presence', NO_UBO_VAT),
  {
    endpoint: 'IT-pa',
    example: 'GET /IT-pa/{taxCode_vatCode}',
    request: { method: 'GET', path: `/IT-pa/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) { publicAdministration {
      paId companyName taxCode vatCode establishmentDate terminationDate phone fax url managerName managerSurname managerTitle
      ipaEntityCode ipaCategory { code description } ipaType { code description } ipaInclusionDate ipaCategoryId ipaExclusionDate
      isPublicAdministration participationStatus
      siope { ${PA_LISTING} } miur { ${PA_LISTING} } treasury { ${PA_LISTING} } nationalHealthServiceCode istatS13 { ${PA_LISTING} } harmonisedAccounting { ${PA_LISTING} }
      ateco { code description } detailedLegalForm { code description }
      address { streetName toponym street streetNumber hamlet zipCode town townCode townIstatCode townNumber province { code description } provinceNumber region { code description } area { code description } }
      invoicingOffices { administrationCode officeCode description sdiCode streetName zipCode town province region taxCode invoicingStartDate taxCodeVerificationDate lastUpdateDate }
      lastUpdateDate } } }`,
    variables: { v: VAT },
  },
  {
    endpoint: 'IT-splitpayment',
    example: 'GET /IT-splitpayment/{taxCode_vatCode}',
    request: { method: 'GET', path: `/IT-splitpayment/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) { splitPayment { companyName taxCode companyType startDate lastUpdateDate } } }`,
    variables: { v: VAT },
  },
  {
    endpoint: 'IT-start',
    example: 'GET /IT-start/{vatCode_taxCode_or_id}',
    request: { method: 'GET', path: `/IT-start/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) { ${IT_START_FIELDS} ${IT_START_DATES} } }`,
    variables: { v: VAT },
  },
  {
    endpoint: 'IT-advanced',
    example: 'GET /IT-advanced/{vatCode_taxCode_or_id}',
    request: { method: 'GET', path: `/IT-advanced/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) { ${IT_ADVANCED_FIELDS} } }`,
    variables: { v: VAT },
    notExposed: inData(IT_ADVANCED_NOT_EXPOSED),
  },
  marketingRow('IT-marketing', 'GET /IT-marketing/{vatCode_or_taxCode} #synchronous', VAT),
  // A slow dataset the upstream is still preparing: 302 → IT-check_id, PENDING, then the dataset.
  {
    ...marketingRow('IT-marketing (302 → IT-check_id)', 'GET /IT-check_id/{id} #DONE', SLOW_VAT),
    flow: [`GET /IT-marketing/${SLOW_VAT}`, `GET /IT-check_id/${PENDING_ID}`, `GET /IT-check_id/${PENDING_ID}`],
    alsoServed: [
      {
        // the body of the 302 and of the first poll: the layer polls the id it names while it is PENDING
        example: 'GET /IT-check_id/{id} #PENDING',
        shows: { data: { state: 'PENDING', id: PENDING_ID } },
      },
    ],
  },
  {
    endpoint: 'IT-stakeholders',
    example: 'GET /IT-stakeholders/{vatCode_or_taxCode} #synchronous',
    request: { method: 'GET', path: `/IT-stakeholders/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) { ${COMPOSITE_IDENTITY} ${OWNERSHIP} ${EMPLOYEES} ${STATISTICS} } }`,
    variables: { v: VAT },
  },
  {
    endpoint: 'IT-aml',
    example: 'GET /IT-aml/{vatCode_or_taxCode} #synchronous',
    request: { method: 'GET', path: `/IT-aml/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) {
      ${COMPOSITE_IDENTITY} ${OWNERSHIP} ${ECONOMICS} ${ECOFIN} ${selectSections('balanceSheet', ['debts'])} } }`,
    variables: { v: VAT },
  },
  {
    endpoint: 'IT-full',
    example: 'GET /IT-full/{vatCode_or_taxCode} #synchronous',
    request: { method: 'GET', path: `/IT-full/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) {
      ${COMPOSITE_IDENTITY} ${MARKETING} legalForm rawLegalForm legalFormDescription detailedLegalForm { code description }
      dates { ${COMPANY_DATES_FIELDS.join(' ')} } isMarketable
      artisanRegistry { isRegistered registrationDate registrationNumber } hasSoaCertification
      ${MANAGERS} ${SHAREHOLDERS} ${ECONOMICS}
      ${selectSections('balanceSheet', BALANCE_SHEET_SECTIONS)} ${selectSections('incomeStatement', INCOME_STATEMENT_SECTIONS)} ${SELECT_RATIOS} } }`,
    variables: { v: VAT },
  },
  {
    endpoint: 'IT-search (no enrichment)',
    example: 'GET /IT-search #NoEnrichment',
    request: { method: 'GET', path: '/IT-search', query: { companyName: 'OPENAPI', dataEnrichment: null } },
    operation: `query($f: CompanySearchFilter!) { searchCompanies(filter: $f, limit: 10) { ${IT_SEARCH_PAGE} items { id } } }`,
    variables: { f: { companyName: 'OPENAPI' } },
  },
  {
    endpoint: 'IT-search (dataEnrichment=start)',
    example: 'GET /IT-search #Start',
    request: { method: 'GET', path: '/IT-search', query: { companyName: 'OPENAPI', dataEnrichment: 'start' } },
    operation: `query($f: CompanySearchFilter!) { searchCompanies(filter: $f, limit: 10) { ${IT_SEARCH_PAGE} items { ${IT_START_FIELDS} ${IT_START_DATES} } } }`,
    variables: { f: { companyName: 'OPENAPI' } },
  },
  {
    endpoint: 'IT-search (dataEnrichment=advanced)',
    example: 'GET /IT-search #Advanced',
    request: { method: 'GET', path: '/IT-search', query: { companyName: 'OPENAPI', dataEnrichment: 'advanced' } },
    operation: `query($f: CompanySearchFilter!) { searchCompanies(filter: $f, limit: 10) { ${IT_SEARCH_PAGE} items { ${IT_ADVANCED_FIELDS} } } }`,
    variables: { f: { companyName: 'OPENAPI' } },
    notExposed: inData(IT_ADVANCED_NOT_EXPOSED),
  },
  {
    endpoint: 'IT-legalforms',
    example: 'GET /IT-legalforms',
    request: { method: 'GET', path: '/IT-legalforms' },
    operation: `{ legalForms { code description } }`,
  },
  {
    endpoint: 'IT-legalforms/{code}',
    example: 'GET /IT-legalforms/{code}',
    request: { method: 'GET', path: '/IT-legalforms/SP' },
    operation: `{ legalForms(code: "SP") { code description } }`,
  },
  {
    endpoint: 'EU-start',
    example: 'GET /EU-start/{vatCode_taxCode}',
    request: { method: 'GET', path: '/EU-start/IE6388047V' },
    operation: `query($c: String!, $id: String!) { foreignCompany(country: $c, id: $id, level: VAT_REGISTRY) { ${FOREIGN_FIELDS} } }`,
    variables: { c: 'IE', id: '6388047V' },
  },
  // The countries with their own endpoints: <CC>-start and <CC>-advanced.
  ...(['FR', 'DE', 'ES', 'PT', 'GB', 'BE', 'AT', 'CH', 'PL'] as const).flatMap((cc) =>
    (['start', 'advanced'] as const).map((tier): Row => {
      const example = exampleKeys.find((k) => k.startsWith(`GET /${cc}-${tier}/`));
      if (!example) throw new Error(`no ${cc}-${tier} example`);
      const rec = firstRecord(example);
      const id = String(rec.siretCode ?? rec.vatCode);
      const level = tier === 'start' ? 'START' : 'ADVANCED';
      return {
        endpoint: `${cc}-${tier}`,
        example,
        request: { method: 'GET', path: `/${cc}-${tier}/${encodeURIComponent(id)}` },
        operation: `query($c: String!, $id: String!, $l: ForeignCompanyLevel) { foreignCompany(country: $c, id: $id, level: $l) { ${FOREIGN_FIELDS} } }`,
        variables: { c: cc, id, l: level },
      };
    }),
  ),
  // Worldwide endpoints, for a country without its own (the examples' companies are Polish and Lithuanian).
  ...(
    [
      ['WW-start', 'START', 'NO'],
      ['WW-advanced', 'ADVANCED', 'NO'],
      ['WW-top', 'TOP', 'LT'],
    ] as const
  ).map(([name, level, cc]): Row => {
    const example = exampleKeys.find((k) => k.startsWith(`GET /${name}/`));
    if (!example) throw new Error(`no ${name} example`);
    const id = String(firstRecord(example).vatCode);
    return {
      endpoint: name,
      example,
      request: { method: 'GET', path: `/${name}/${cc}/${encodeURIComponent(id)}` },
      operation: `query($c: String!, $id: String!, $l: ForeignCompanyLevel) { foreignCompany(country: $c, id: $id, level: $l) { ${FOREIGN_FIELDS} } }`,
      variables: { c: cc, id, l: level },
    };
  }),
  {
    endpoint: 'FR-search (no enrichment)',
    example: 'GET /FR-search #NoEnrichment',
    request: { method: 'GET', path: '/FR-search', query: { companyName: 'PARIS', dataEnrichment: null } },
    operation: `query($f: FrenchCompanySearchFilter!) { frenchCompanySearch(filter: $f, limit: 10) { ${IT_SEARCH_PAGE} items { id level } } }`,
    variables: { f: { companyName: 'PARIS' } },
  },
  {
    endpoint: 'FR-search (dataEnrichment=start)',
    example: 'GET /FR-search #Start',
    request: { method: 'GET', path: '/FR-search', query: { companyName: 'PARIS', dataEnrichment: 'start' } },
    operation: `query($f: FrenchCompanySearchFilter!) { frenchCompanySearch(filter: $f, limit: 10) { ${IT_SEARCH_PAGE} items { ${FOREIGN_BASIC} } } }`,
    variables: { f: { companyName: 'PARIS' } },
  },
  {
    endpoint: 'FR-search (dataEnrichment=advanced)',
    example: 'GET /FR-search #Advanced',
    request: { method: 'GET', path: '/FR-search', query: { companyName: 'PARIS', dataEnrichment: 'advanced' } },
    operation: `query($f: FrenchCompanySearchFilter!) { frenchCompanySearch(filter: $f, limit: 10) { ${IT_SEARCH_PAGE} items { ${FOREIGN_FIELDS} } } }`,
    variables: { f: { companyName: 'PARIS' } },
  },
  {
    endpoint: 'monitor (list)',
    example: 'GET /monitor',
    request: { method: 'GET', path: '/monitor' },
    operation: `{ companyMonitors { ${MONITOR_FIELDS} } }`,
  },
  {
    endpoint: 'monitor (create)',
    example: 'POST /monitor',
    request: { method: 'POST', path: '/monitor' },
    operation: `mutation($input: CreateCompanyMonitorInput!) { createCompanyMonitor(input: $input) { ${MONITOR_FIELDS} } }`,
    variables: {
      input: { code: VAT, dataset: 'IT_ADVANCED', monitoredFields: ['pec'], callbackUrl: 'https://webhook.site/28a4dddf-eca1-47f2-88d8-94878995e4d8' },
    },
    notExposed: MONITOR_NOT_EXPOSED,
    requestBody: (body) => {
      const sent = JSON.parse(body) as Obj;
      expect(sent).toMatchObject({ code: VAT, dataset: 'IT-advanced', monitoredFields: ['pec'], autorenew: true, callback: { method: 'JSON' } });
      // the upstream is given a callback URL (the layer's own, or the caller's): an http(s) URL
      expect(String(obj(sent.callback)?.url)).toMatch(/^https?:\/\//);
    },
  },
  {
    endpoint: 'monitor/{id} (get)',
    example: 'GET /monitor/{id}',
    request: { method: 'GET', path: '/monitor/6981e3571a222556460af532' },
    operation: `query($id: ID!) { companyMonitor(id: $id) { ${MONITOR_FIELDS} } }`,
    variables: { id: '6981e3571a222556460af532' },
    notExposed: MONITOR_NOT_EXPOSED,
  },
  {
    endpoint: 'monitor/{id} (delete)',
    example: 'DELETE /monitor/{id}',
    request: { method: 'DELETE', path: '/monitor/6981e3571a222556460af532' },
    operation: `mutation($id: ID!) { deleteCompanyMonitor(id: $id) }`,
    variables: { id: '6981e3571a222556460af532' },
  },
];

// ---------------------------------------------------------------------------------------------
// Comparison: the response and the expectation walked in parallel, every difference listed
// ---------------------------------------------------------------------------------------------

function differences(actual: unknown, expected: unknown, path = ''): string[] {
  const show = (v: unknown): string => (v === undefined ? 'nothing' : JSON.stringify(v));
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [`${path}: expected ${show(expected)}, got ${show(actual)}`];
    const out: string[] = [];
    if (actual.length !== expected.length) out.push(`${path}: expected ${expected.length} items, got ${actual.length}`);
    for (let i = 0; i < Math.min(actual.length, expected.length); i++) out.push(...differences(actual[i], expected[i], `${path}[${i}]`));
    return out;
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return [`${path}: expected ${show(expected)}, got ${show(actual)}`];
    const e = expected as Obj;
    const a = actual as Obj;
    const keys = new Set([...Object.keys(e), ...Object.keys(a)]);
    return [...keys].flatMap((k) => differences(a[k], e[k], path ? `${path}.${k}` : k));
  }
  return Object.is(actual, expected) ? [] : [`${path}: expected ${show(expected)}, got ${show(actual)}`];
}

// ---------------------------------------------------------------------------------------------

let stub: Stub;
let t: TestStack;
const served: Served[] = [];
let checkPolls = 0;

beforeAll(async () => {
  stub = await startStub((req, res) => {
    const url = new URL(req.path, 'http://stub');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const auth = req.headers.authorization;
    const slow = req.method === 'GET' && path === `/IT-marketing/${SLOW_VAT}`;
    const check = req.method === 'GET' && path.startsWith('/IT-check_id/');
    // the slow company's dataset: 302 with the PENDING body, then PENDING once, then DONE
    const key = slow || (check && checkPolls++ === 0) ? 'GET /IT-check_id/{id} #PENDING' : check ? 'GET /IT-check_id/{id} #DONE' : exampleFor(req.method, path, url.searchParams);
    served.push({ method: req.method, path, query: url.searchParams, body: req.body, authorization: typeof auth === 'string' ? auth : undefined, example: key });
    if (slow) json(res, 302, EXAMPLES['GET /IT-check_id/{id} #PENDING'], { location: `/IT-check_id/${PENDING_ID}`, 'retry-after': '0' });
    else if (key) json(res, 200, EXAMPLES[key]);
    else json(res, 404, { data: null, success: false, message: `no example for ${req.method} ${path}`, error: 404 });
  });
  // Slow datasets by the GET (302 → IT-check_id): the examples are the GET's answers.
  t = await startTestStack({ OPENAPI_COMPANY_URL: stub.url, OPENAPI_TOKEN: 'test-token', OPENAPI_MAX_RETRIES: '0', COMPANY_SLOW_PURCHASE: 'poll' });
});

afterAll(async () => {
  await t?.close();
  await stub?.close();
});

describe('company vendor examples through the gateway', () => {
  it.each(ROWS.map((row) => [row.endpoint, row] as const))('%s', async (_name, row) => {
    const before = served.length;
    const res: GraphQLResponse<Obj> = await t.gql<Obj>(row.operation, row.variables);
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();

    // Exactly one upstream request (or the row's flow), to the row's endpoint, answered with the row's example.
    const calls = served.slice(before);
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual(row.flow ?? [`${row.request.method} ${row.request.path}`]);
    const call = calls[0];
    expect(calls.at(-1)?.example).toBe(row.example);
    expect(call.authorization).toBe('Bearer test-token');
    for (const [name, value] of Object.entries(row.request.query ?? {})) expect(call.query.get(name), `query parameter ${name}`).toBe(value);
    row.requestBody?.(call.body);

    // The example comes out as the data written down for it, field by field.
    const expected = EXPECTED[row.endpoint];
    expect(expected?.example, `expected data for ${row.endpoint}`).toBe(row.example);
    expect(differences(res.data, expected.data)).toEqual([]);

    // And every value of the example is in that data (or the row says the schema has no field for it).
    expect(unexposed(example(row.example), expected.data, { ...ENVELOPE, ...row.notExposed })).toEqual([]);
    for (const also of row.alsoServed ?? []) {
      expect(calls.some((c) => c.example === also.example)).toBe(true);
      const body = example(also.example);
      expect(body).toMatchObject(also.shows);
      expect(unexposed(body, also.shows, { ...ENVELOPE, ...also.notExposed }), also.example).toEqual([]);
    }
  });

  it('has expected data for every row, and no data for a row that is gone', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual(ROWS.map((r) => r.endpoint).sort());
  });

  it('has a row for every 200 example of the spec, or a reason why no operation reaches it', () => {
    const used = new Set(ROWS.flatMap((r) => [r.example, ...(r.alsoServed ?? []).map((a) => a.example)]));
    const missing = exampleKeys.filter((k) => !used.has(k) && !(k in NOT_REACHED));
    expect(missing).toEqual([]);
    // and the reasons are not stale
    expect(Object.keys(NOT_REACHED).filter((k) => used.has(k) || !exampleKeys.includes(k))).toEqual([]);
  });
});
