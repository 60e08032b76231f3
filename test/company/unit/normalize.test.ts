/**
 * Normalization of every vendor example payload the company subgraph decodes (the spec's 200
 * examples, `subgraphs/company/fixtures/vendor-examples.json`), with the values intact.
 */
import { describe, expect, it } from 'vitest';
import { vendorData, vendorExample, vendorExampleKeys } from '../../../subgraphs/company/fixtures/examples.ts';
import { FACETS, TIER_COVERAGE, TIERS, type Facet, type Tier } from '../../../subgraphs/company/facets.ts';
import { normalizeTier } from '../../../subgraphs/company/loaders.ts';
import type { CompanyModel } from '../../../subgraphs/company/model.ts';
import {
  datasetFromUpstream,
  datasetToUpstream,
  isoDateTime,
  mergeModels,
  normalizeComposite,
  normalizeEuStart,
  normalizeForeign,
  normalizeItAdvanced,
  normalizeItStart,
  normalizeLegalForm,
  normalizeMonitor,
} from '../../../subgraphs/company/normalize.ts';
import { dryRunFigures } from '../../../subgraphs/company/resolvers/search.ts';
import type { VComposite, VEuStart, VForeign, VItAdvanced, VLegalForm, VMonitor } from '../../../subgraphs/company/upstream.ts';

const first = <T>(key: string): T => (vendorData(key) as T[])[0];
const composite = (tier: string): CompanyModel => normalizeComposite(vendorData(`GET /${tier}/{vatCode_or_taxCode} #synchronous`) as VComposite);

/**
 * Facets whose section no vendor example carries, and the tiers that hold them (the vendor schema's
 * composite shapes: subsidiaries and affiliateCompanies are in IT-stakeholders, IT-aml and IT-full;
 * the PEC history is IT-pec's alone, no tier's). Checked by hand since no example can.
 */
const NOT_IN_ANY_EXAMPLE = {
  subsidiaries: ['IT-stakeholders', 'IT-aml', 'IT-full'],
  affiliates: ['IT-stakeholders', 'IT-aml', 'IT-full'],
  pecHistory: [],
} as const satisfies Partial<Record<Facet, readonly Tier[]>>;
type NotInAnyExample = keyof typeof NOT_IN_ANY_EXAMPLE;
/** The model field of each of those facets. */
const NOT_IN_ANY_EXAMPLE_FIELD = { subsidiaries: 'subsidiaries', affiliates: 'affiliates', pecHistory: 'pecHistory' } as const satisfies Record<
  NotInAnyExample,
  keyof CompanyModel
>;

describe('dates', () => {
  it('become ISO 8601 date-times in UTC', () => {
    expect(isoDateTime('2013-07-19')).toBe('2013-07-19T00:00:00.000Z');
    expect(isoDateTime('2021-12-31T00:00:00')).toBe('2021-12-31T00:00:00.000Z');
    expect(isoDateTime('2023-03-08T11:25:08.0331456Z')).toBe('2023-03-08T11:25:08.033Z');
    expect(isoDateTime('2026-01-31T00:00:00.000Z')).toBe('2026-01-31T00:00:00.000Z');
    expect(isoDateTime('2020-01-01T10:00:00+02:00')).toBe('2020-01-01T08:00:00.000Z');
    expect(isoDateTime(1622452306)).toBe('2021-05-31T09:11:46.000Z');
    expect(isoDateTime(null)).toBeNull();
    expect(isoDateTime('')).toBeNull();
    expect(isoDateTime('yesterday')).toBeNull();
    expect(isoDateTime('2021-13-45')).toBeNull();
  });
});

describe('IT-start', () => {
  it('fills identity, address, status, SDI code and registration date', () => {
    const m = normalizeItStart(first<VItAdvanced>('GET /IT-start/{vatCode_taxCode_or_id}'));
    expect(m).toEqual({
      vatCode: '12485671007',
      taxCode: '12485671007',
      id: '60b4a85585e34e615c569ef5',
      companyName: 'OPENAPI S.P.A.',
      lastUpdateDate: '2021-05-31T09:11:46.000Z',
      recordCreationDate: '2021-05-31T09:11:46.000Z',
      address: {
        streetName: 'VIALE F TOMMASO MARINETTI 221',
        toponym: 'VIALE',
        street: 'F TOMMASO MARINETTI',
        streetNumber: '221',
        hamlet: null,
        zipCode: '00143',
        town: 'ROMA',
        townCode: 'H501',
        province: { code: 'RM', description: null },
        region: { code: '12', description: 'LAZIO' },
        country: null,
        coordinates: { latitude: 41.8071, longitude: 12.47843 },
      },
      registryStatus: 'ACTIVE',
      rawRegistryStatus: 'ATTIVA',
      activityStatus: 'A',
      rawActivityStatus: 'ATTIVA',
      sdiCode: 'USAL8PV',
      sdiCodeUpdateDate: '2021-05-31T09:11:46.000Z',
      dates: { registrationDate: '2013-07-19T00:00:00.000Z' },
    });
  });

  it('maps every register status', () => {
    const status = (s: string): Pick<CompanyModel, 'registryStatus' | 'activityStatus'> => {
      const m = normalizeItStart({ activityStatus: s });
      return { registryStatus: m.registryStatus, activityStatus: m.activityStatus };
    };
    expect(status('ATTIVA')).toEqual({ registryStatus: 'ACTIVE', activityStatus: 'A' });
    expect(status('CESSATA')).toEqual({ registryStatus: 'CEASED', activityStatus: null });
    expect(status('REGISTRATA')).toEqual({ registryStatus: 'REGISTERED', activityStatus: 'I' });
    expect(status('INATTIVA')).toEqual({ registryStatus: 'INACTIVE', activityStatus: 'I' });
    expect(status('SOSPESA')).toEqual({ registryStatus: 'SUSPENDED', activityStatus: 'S' });
    expect(status('IN_ISCRIZIONE')).toEqual({ registryStatus: 'REGISTRATION_PENDING', activityStatus: 'I' });
    expect(status('???')).toEqual({ registryStatus: null, activityStatus: null });
  });

  it('keeps a register status it does not know, as written', () => {
    const m = normalizeItStart({ activityStatus: ' IN_LIQUIDAZIONE ' });
    expect(m).toMatchObject({ registryStatus: null, rawRegistryStatus: 'IN_LIQUIDAZIONE', activityStatus: null, rawActivityStatus: 'IN_LIQUIDAZIONE' });
  });
});

describe('IT-advanced', () => {
  const m = normalizeItAdvanced(first<VItAdvanced>('GET /IT-advanced/{vatCode_taxCode_or_id}'));

  it('adds register data, ATECO, legal form, dates, PEC and VAT group', () => {
    expect(m.id).toBe('60d1bfc731177b0a092cdfc1');
    expect(m.chamberOfCommerce).toBe('RM');
    expect(m.reaCode).toBe('1378273');
    expect(m.atecoClassification).toEqual({
      ateco: { code: '6201', description: "Produzione di software non connesso all'edizione" },
      ateco2022: { code: '6201', description: "Produzione di software non connesso all'edizione" },
      // the vendor schema: IT-advanced's `ateco` is ATECO 2025
      ateco2025: { code: '621', description: 'Attività di programmazione informatica' },
    });
    expect(m.detailedLegalForm).toEqual({ code: 'SP', description: "SOCIETA' PER AZIONI" });
    expect(m.dates).toEqual({ registrationDate: '2013-07-19T00:00:00.000Z', startDate: '2013-10-20T00:00:00.000Z', endDate: null });
    expect(m.pec).toBe('openapi@legalmail.it');
    expect(m.vatGroup).toEqual({ participates: false, isLeader: false, registryOk: true }); // spelled gruppo_iva in the example
    expect(m.lastUpdateDate).toBe('2024-02-23T16:16:40.000Z');
  });

  it('keeps the ceased flags, the SDI code and record timestamps', () => {
    expect(m.ceased).toBe(false);
    // the example puts a timestamp where the vendor schema says boolean: not a boolean, so null
    expect(m.taxCodeCeased).toBeNull();
    expect(m.taxCodeCeasedUpdateDate).toBe('2021-05-31T09:11:46.000Z');
    expect(m.sdiCodeUpdateDate).toBe('2021-05-31T09:11:46.000Z');
    expect(m.recordCreationDate).toBe('2021-06-22T10:47:35.000Z');
    expect(normalizeItAdvanced({ taxCodeCeased: true, cessata: 1 as unknown as boolean })).toMatchObject({ taxCodeCeased: true, ceased: true });
  });

  it('turns the last balance sheet into the ecofin summary and keeps every year, newest first', () => {
    expect(m.ecofin).toEqual({ balanceSheetDate: '2022-12-31T00:00:00.000Z', turnoverYear: 2022, turnover: 4043407, shareCapital: 50000, netWorth: 166491 });
    expect(m.employees).toEqual({ count: 14 });
    expect(m.balanceSheets?.map((b) => b.year)).toEqual([2024, 2023, 2022, 2021, 2020, 2019, 2018, 2017]);
    expect(m.balanceSheets?.[2]).toEqual({
      year: 2022,
      balanceSheetDate: '2022-12-31T00:00:00.000Z',
      employees: 14,
      turnover: 4043407,
      netWorth: 166491,
      shareCapital: 50000,
      totalStaffCost: 604997,
      totalAssets: 1483126,
      averageGrossSalary: 43214.07142857143,
    });
    expect(m.balanceSheets?.[0]?.balanceSheetDate).toBeNull();
  });

  it('turns shareHolders into shareholdings with a company owner', () => {
    expect(m.shareholders).toEqual([
      {
        percentShare: 100,
        shareType: null,
        owners: [
          { kind: 'company', taxCode: '16935371001', companyName: 'OPEN HOLDING S.R.L.', serviceNumber: null, sinceDate: null, streetName: null, zipCode: null, town: null },
        ],
      },
    ]);
  });
});

describe('composite tiers', () => {
  it('IT-marketing: details, status, address, classification, ecofin, workforce, contacts, web, group, offices', () => {
    const m = composite('IT-marketing');
    expect(m).toMatchObject({
      vatCode: '12485671007',
      taxCode: '12485671007',
      companyName: 'OPENAPI SPA',
      lastUpdateDate: '2023-03-08T11:25:08.033Z',
      chamberOfCommerce: 'RM',
      reaCode: '1378273',
      serviceNumber: 'IT93E20F0DS0001',
      officeType: 'SSL',
      activityStatus: 'A',
      pec: 'OPENAPI@LEGALMAIL.IT',
      numberOfBranches: 1,
      email: 'info@altravia.com',
      contacts: { telephoneNumber: '0697276223;', fax: '0687420311' },
      isInnovativeStartUp: false,
      isInnovativeSme: false,
    });
    expect(m.address).toEqual({
      streetName: 'VIALE FILIPPO TOMMASO MARINETTI, 221',
      zipCode: '00143',
      town: 'ROMA',
      province: { code: 'RM', description: 'ROMA' },
      region: { code: '12', description: 'LAZIO' },
      country: { code: 'IT', description: 'Italia' },
    });
    expect(m.atecoClassification).toEqual({
      ateco: { code: '6201', description: 'Production of software not related to editing' },
      secondaryAteco: '6202',
      ateco2022: { code: '6201', description: 'Production of software not related to editing' },
      secondaryAteco2022: '6202',
    });
    expect(m.internationalClassification).toEqual({
      primarySic: { code: '7372', description: 'Computer programming & software services' },
      secondarySic: '7392, 7374',
      nace: { code: '6201', description: 'Computer programming activities' },
    });
    expect(m.ecofin).toEqual({
      balanceSheetDate: '2021-12-31T00:00:00.000Z',
      turnoverRange: { code: 'TR7', description: '1000000 - 4999999' },
      turnoverYear: 2021,
      turnover: 4432761,
      turnoverTrend: 5.74,
      shareCapital: 50000,
      netWorth: 563473,
      enterpriseSize: { code: 'SMALL', description: 'Small enterprise' },
    });
    expect(m.employees).toEqual({ range: { code: 'ER4', description: '11 - 20' }, count: 15, trend: 7.14 });
    expect(m.employeeStatistics).toMatchObject({ permanentContract: 100, partialTimeContract: 20, fullTimeContract: 80, whiteCollar: 100, director: null });
    expect(m.webAndSocial).toMatchObject({
      hasSocial: true,
      website: 'www.altravia.com',
      facebook: 'https://www.facebook.com/openapisrl',
      linkedin: 'https://www.linkedin.com/company/openapi-srl/',
      youtube: null,
    });
    expect(m.corporateGroup).toEqual({
      belongsToGroup: true,
      groupName: 'DE LUCIA - SCURIATTI',
      holdingCompanyName: 'LUCA SCURIATTI',
      holdingCountry: null,
      nationalParentCompany: { companyName: null, streetName: null, town: null, zipCode: null, province: { code: 'ND99', description: 'N. A.' }, country: null },
      hasForeignParentCompany: null,
    });
    expect(m.allOffices).toHaveLength(2);
    expect(m.allOffices?.[1]).toEqual({
      companyName: 'OPENAPI SPA',
      vatCode: '12485671007',
      taxCode: '12485671007',
      serviceNumber: 'IT93E20F0DU8001',
      chamberOfCommerce: 'TR',
      reaCode: '353472',
      officeType: 'UL',
      rawOfficeType: 'UL',
      lastUpdateDate: '2024-05-11T20:43:21.266Z',
      activityStatus: 'A',
      rawActivityStatus: 'A',
      address: {
        streetName: 'PIAZZA SAN GIOVANNI DECOLLATO, 6',
        zipCode: '05100',
        town: 'TERNI',
        province: { code: 'TR', description: 'TERNI' },
        region: { code: '10', description: 'UMBRIA' },
        country: { code: 'IT', description: 'Italia' },
      },
    });
    // sections IT-marketing does not hold stay absent
    expect('managers' in m).toBe(false);
    expect('ratios' in m).toBe(false);
  });

  it('IT-stakeholders: managers (people and companies) with roles, shareholders with owners', () => {
    const m = composite('IT-stakeholders');
    expect(m.managers).toHaveLength(4);
    expect(m.managers?.[0]).toEqual({
      kind: 'person',
      taxCode: 'SCRLCU73R02H501H',
      roles: [{ role: { code: 'AUN', description: 'Managing director' }, startDate: '2020-09-10T00:00:00.000Z' }],
      isLegalRepresentative: true,
      name: 'LUCA',
      surname: 'SCURIATTI',
      gender: 'M',
      rawGender: 'M',
      birthDate: '1973-10-02T00:00:00.000Z',
      age: 49,
      birthTown: 'ROMA (RM)',
    });
    expect(m.managers?.[1]).toEqual({
      kind: 'company',
      taxCode: '16935371001',
      roles: [{ role: { code: 'SOU', description: 'Sole owner' }, startDate: '2022-12-05T00:00:00.000Z' }],
      isLegalRepresentative: false,
      companyName: 'OPEN HOLDING SRL',
    });
    expect(m.shareholders).toEqual([
      {
        percentShare: 100,
        shareType: null,
        owners: [
          {
            kind: 'company',
            taxCode: '16935371001',
            serviceNumber: 'IT8A380807S0001',
            companyName: 'OPEN HOLDING SRL',
            sinceDate: '2022-11-23T00:00:00.000Z',
            streetName: 'VIALE FILIPPO TOMMASO MARINETTI 221',
            zipCode: '00143',
            town: 'ROMA',
          },
        ],
      },
    ]);
    expect(m.employees).toEqual({ range: { code: 'ER4', description: '11 - 20' }, count: 15, trend: 7.14 });
    expect(m.corporateGroup?.groupName).toBe('DE LUCIA - SCURIATTI');
    expect('ecofin' in m).toBe(false);
  });

  it('IT-aml: tenders, debts, ecofin, foreign trade, operating results, RAE/SAE', () => {
    const m = composite('IT-aml');
    expect(m.publicTenders).toEqual([
      { year: '2021', applied: 41, won: 42, value: 13812.52 },
      { year: '2020', applied: 48, won: 51, value: 10274.94 },
    ]);
    expect(m.balanceSheet?.debts).toHaveLength(47);
    expect(m.balanceSheet?.debts?.find((l) => l.code === 'IIC098')).toEqual({ code: 'IIC098', value: 5426 });
    expect(m.balanceSheet?.debts?.find((l) => l.code === 'IIC116')).toEqual({ code: 'IIC116', value: 781131 });
    expect(m.ecofin?.turnover).toBe(4432761);
    expect(m.foreignTrade).toEqual({ isImporter: false, importPercentShare: null, importCountries: null, isExporter: false, exportPercentShare: null, exportCountries: null });
    expect(m.operatingResults).toEqual({ ebitda: 714856, ebitdaL2Y: 284656, ebit: 682714, ebitL2Y: 260414, cashFlow: 501508, cashFlowL2Y: 194476 });
    expect(m.rae).toEqual({ code: '830', description: 'SERV.FIN./IMM./FISCALI/TECNICI' });
    expect(m.sae).toEqual({ code: '430', description: 'Imprese produttive' });
    expect(m.managers).toHaveLength(4);
    expect(m.shareholders?.[0]?.percentShare).toBe(100);
  });

  it('IT-full: every section, financial lines and ratios included', () => {
    const m = composite('IT-full');
    expect(m.legalForm).toBe('SC');
    expect(m.rawLegalForm).toBe('SC');
    expect(m.legalFormDescription).toBe('Joint stock business');
    expect(m.detailedLegalForm).toEqual({ code: 'SR', description: 'Limited liability company/ limited company' });
    expect(m.dates).toEqual({
      registrationDate: '2013-07-19T00:00:00.000Z',
      startDate: '2013-10-20T00:00:00.000Z',
      incorporationDate: '2013-07-11T00:00:00.000Z',
      foundingDate: null,
      endDate: null,
    });
    expect(m.isMarketable).toBe(true);
    expect(m.artisanRegistry).toEqual({ isRegistered: false, registrationDate: null, registrationNumber: null });
    expect(m.hasSoaCertification).toBe(false);
    const lines = (s: Record<string, { code: string; value: number | null }[] | null | undefined> | null | undefined): Record<string, number> =>
      Object.fromEntries(Object.entries(s ?? {}).map(([k, v]) => [k, v?.length ?? -1]));
    expect(lines(m.balanceSheet)).toEqual({
      assetsAggregateValues: 5,
      creditsToShareholders: 2,
      intangibleFixedAssets: 1,
      tangibleFixedAssets: 1,
      financialFixedAssets: 27,
      inventory: 7,
      credits: 25,
      financialAssets: 9,
      cashEquivalents: 1,
      liabilitiesAggregateValues: 6,
      netWorth: 24,
      riskProvisions: 4,
      debts: 47,
    });
    expect(lines(m.incomeStatement)).toEqual({
      incomeStatementAggregateValues: 5,
      productionValue: 8,
      productionCosts: 20,
      revenuesFinancialCharges: 29,
      adjustments: 12,
      annualResult: 7,
    });
    expect(m.balanceSheet?.cashEquivalents).toEqual([{ code: 'IIC070', value: 1020479 }]);
    expect(m.incomeStatement?.annualResult?.[0]).toEqual({ code: 'IIC191', value: 204454 });
    expect(m.incomeStatement?.revenuesFinancialCharges?.some((l) => l.code === 'IPL231')).toBe(true);
    expect(m.ratios?.financialStability).toEqual({
      secondaryMarginStructure: 315909, // the example's key carries a trailing space
      marginStructure: 1.8803,
      fixedAssetsCoverageRate: 2.0542,
      marginStructureIndex: 263803,
      workingCapitalCoverage: 0.0867,
      acidTest: 1.4654,
      currentRatio: 1.4654,
    });
    expect(m.ratios?.coverageRatios).toEqual({
      ebitdaNetInterestCoverage: 494.71,
      ffoNetInterestCoverage: null,
      ebitNetInterestCoverage: 472.4664,
      ebitdaGrossInterestCoverage: 494.71,
      ebitGrossInterestCoverage: 472.4664,
    });
    expect(m.ratios?.profitability).toEqual({ ros: 15.39, roe: 83.3, incidenceOfExtraFeaturesManagement: 68.75, roi: 45.18, roaMonetary: 33.19 });
    expect(m.ratios?.financialStatementKpi).toEqual({ debtsTurnover: 0.188, totalInventoryTurnover: 0 });
    expect(m.ratios?.leverageRatios).toMatchObject({ pfnEbitda: -1.3693, ebitdaGrossLeverage: 0.0583 });
    expect(m.ratios?.liquidityRatios).toMatchObject({ cashShortTermFinancialDebt: 353.8415 });
    expect(m.ratios?.indebtedness).toMatchObject({ debtRatio: 1.4788 });
    expect(m.ratios?.structureRatios).toMatchObject({ financialDebtComposition: 0.0692 });
    expect(m.ratios?.development).toEqual({ ebitVariation: 1.6217, grossFinancialDebt: -0.1394, totalAssets: -12.38, mol: 151.13, addedValue: 60.01, productionValue: 4.48 });
    expect(m.ratios?.efficiency).toEqual({ turnoverIndex: 2.9358, inventoryRotation: null, currentAssetsRotation: 3.6619, accountsReceivableRotation: 48.4725 });
    expect(m.ratios?.financialBurden).toEqual({ rod: 0.17, rodFinanziario: 3.47, burdenIndex: 0.2 });
    expect(m.ratios?.financialCycle).toEqual({ accountsReceivableDuration: 7.53, stockDuration: 0, debtsToSuppliersDuration: 64.5086, financialCycleDuration: -56.9786 });
    expect(m.allOffices).toHaveLength(2);
    expect(m.rae?.code).toBe('830');
  });

  it('IT-check_id (done) carries the dataset of the slow tier', () => {
    const m = normalizeComposite(vendorData('GET /IT-check_id/{id} #DONE') as VComposite);
    expect(m).toEqual(composite('IT-marketing'));
  });

  it('every tier fills each facet it claims to hold (sections present in the example)', () => {
    const examples: Record<Tier, CompanyModel> = {
      'IT-start': normalizeTier('IT-start', vendorData('GET /IT-start/{vatCode_taxCode_or_id}'), '12485671007'),
      'IT-advanced': normalizeTier('IT-advanced', vendorData('GET /IT-advanced/{vatCode_taxCode_or_id}'), '12485671007'),
      'IT-marketing': composite('IT-marketing'),
      'IT-stakeholders': composite('IT-stakeholders'),
      'IT-aml': composite('IT-aml'),
      'IT-full': composite('IT-full'),
    };
    // a field of the model per facet that some vendor example carries (every facet but NOT_IN_ANY_EXAMPLE's)
    const probe: Record<Exclude<Facet, NotInAnyExample>, (m: CompanyModel) => unknown> = {
      companyName: (m) => m.companyName,
      vatCode: (m) => m.vatCode,
      openapiId: (m) => m.id,
      registration: (m) => m.reaCode,
      companyDetails: (m) => m.officeType,
      lastUpdate: (m) => m.lastUpdateDate,
      address: (m) => m.address?.town,
      addressDetail: (m) => m.address?.townCode,
      addressNames: (m) => m.address?.province?.description,
      activityStatus: (m) => m.activityStatus,
      registryStatus: (m) => m.registryStatus,
      registrationDate: (m) => m.dates?.registrationDate,
      activityDates: (m) => m.dates?.startDate,
      legalForm: (m) => m.legalForm,
      detailedLegalForm: (m) => m.detailedLegalForm,
      ateco: (m) => m.atecoClassification?.ateco,
      employeeCount: (m) => m.employees?.count,
      employees: (m) => m.employees?.range,
      pec: (m) => m.pec,
      sdiCode: (m) => m.sdiCode,
      managers: (m) => m.managers?.length,
      shareholdersSummary: (m) => m.shareholders?.[0]?.percentShare,
      shareholders: (m) => m.shareholders?.[0]?.owners[0]?.sinceDate,
      ecofinSummary: (m) => m.ecofin?.turnover,
      ecofin: (m) => m.ecofin?.turnoverRange,
      debts: (m) => m.balanceSheet?.debts?.length,
      financialStatements: (m) => m.incomeStatement?.annualResult?.length,
      ratios: (m) => m.ratios?.profitability?.roe,
      raeSae: (m) => m.rae,
      branches: (m) => m.numberOfBranches,
      allOffices: (m) => m.allOffices?.length,
      balanceSheetHistory: (m) => m.balanceSheets?.length,
      vatGroup: (m) => m.vatGroup,
      corporateGroups: (m) => m.corporateGroup,
      ateco2025: (m) => m.atecoClassification?.ateco2025,
      ceased: (m) => m.ceased,
      taxCodeCeased: (m) => m.taxCodeCeasedUpdateDate,
      sdiCodeUpdate: (m) => m.sdiCodeUpdateDate,
      recordCreation: (m) => m.recordCreationDate,
      taxCode: (m) => m.taxCode,
      companyDates: (m) => m.dates?.incorporationDate,
      marketable: (m) => m.isMarketable,
      atecoSecondary: (m) => m.atecoClassification?.secondaryAteco,
      internationalClassification: (m) => m.internationalClassification?.nace?.code,
      employeesStatistic: (m) => m.employeeStatistics?.permanentContract,
      innovativeSmeAndSu: (m) => m.isInnovativeStartUp,
      mail: (m) => m.email,
      contacts: (m) => m.contacts?.telephoneNumber,
      webAndSocial: (m) => m.webAndSocial?.website,
      artisanRegistry: (m) => m.artisanRegistry?.isRegistered,
      soaCertification: (m) => m.hasSoaCertification,
      foreignTrade: (m) => m.foreignTrade?.isImporter,
      publicTenders: (m) => m.publicTenders?.length,
      operatingResults: (m) => m.operatingResults?.ebitda,
    };
    expect(
      FACETS.filter((f) => !(f in probe) && !(f in NOT_IN_ANY_EXAMPLE)),
      'a facet neither probed nor listed as in no example',
    ).toEqual([]);
    for (const [tier, model] of Object.entries(examples) as [Tier, CompanyModel][]) {
      for (const [facet, get] of Object.entries(probe)) {
        const held = TIER_COVERAGE[tier].has(facet as Facet);
        const value = get(model);
        if (held) expect(value ?? null, `${tier} should fill ${facet}`).not.toBeNull();
        else expect(value ?? null, `${tier} should not claim ${facet}`).toBeNull();
      }
    }
  });

  it('facets no vendor example carries: the tiers that hold them, listed by hand', () => {
    const models = [
      normalizeTier('IT-start', vendorData('GET /IT-start/{vatCode_taxCode_or_id}'), '12485671007'),
      normalizeTier('IT-advanced', vendorData('GET /IT-advanced/{vatCode_taxCode_or_id}'), '12485671007'),
      ...(['IT-marketing', 'IT-stakeholders', 'IT-aml', 'IT-full'] as const).map(composite),
    ];
    for (const [facet, tiers] of Object.entries(NOT_IN_ANY_EXAMPLE) as [NotInAnyExample, readonly Tier[]][]) {
      expect(
        TIERS.filter((t) => TIER_COVERAGE[t].has(facet)),
        `the tiers holding ${facet}`,
      ).toEqual(tiers);
      // still in no example: once one carries the facet, move it to the probe above
      for (const m of models) expect(m[NOT_IN_ANY_EXAMPLE_FIELD[facet]] ?? null, `${facet} in an example`).toBeNull();
    }
  });
});

describe('shapes the vendor writes two ways', () => {
  it('a balance-sheet or income-statement section: one {code, value} object (contract) or a list of them (examples)', () => {
    const m = normalizeComposite({
      debts: { code: 'IIC098', value: 5426 },
      netWorth: [
        { code: 'IIC072', value: '77415' },
        { code: 'IIC001', value: 0 },
      ],
      annualResult: { code: 'IIC191', value: 204454 },
      productionValue: [{ code: 'IIC119', value: 45616 }],
      // a line without a code is no line; a section that is neither object nor list is null
      adjustments: [{ value: 3 }],
      inventory: 'n/a',
    });
    expect(m.balanceSheet).toEqual({
      debts: [{ code: 'IIC098', value: 5426 }],
      netWorth: [
        { code: 'IIC072', value: 77415 },
        { code: 'IIC001', value: 0 },
      ],
      inventory: null,
    });
    expect(m.incomeStatement).toEqual({
      annualResult: [{ code: 'IIC191', value: 204454 }],
      productionValue: [{ code: 'IIC119', value: 45616 }],
      adjustments: [],
    });
  });

  it('the contract shape of IT-full (every line section an object) keeps every value', () => {
    const full = vendorData('GET /IT-full/{vatCode_or_taxCode} #synchronous') as Record<string, unknown>;
    const asObjects = Object.fromEntries(
      Object.entries(full).map(([k, v]) => [k, Array.isArray(v) && v.length > 0 && typeof v[0] === 'object' && v[0] !== null && 'value' in (v[0] as object) ? v[0] : v]),
    );
    const m = normalizeComposite(asObjects);
    expect(m.balanceSheet?.cashEquivalents).toEqual([{ code: 'IIC070', value: 1020479 }]);
    expect(m.incomeStatement?.annualResult).toEqual([{ code: 'IIC191', value: 204454 }]);
    expect(Object.values(m.balanceSheet ?? {}).every((lines) => Array.isArray(lines) && lines.length === 1)).toBe(true);
  });

  it('list sections given as one object are lists of one (managers, roles, shareholders, owners, subsidiaries, tenders, offices)', () => {
    const m = normalizeComposite({
      managers: {
        name: 'LUCA',
        surname: 'SCURIATTI',
        taxCode: 'SCRLCU73R02H501H',
        roles: { role: { code: 'AUN', description: 'Managing director' }, roleStartDate: '2020-09-10' },
      },
      shareholders: { percentShare: 100, shareholdersInformation: { taxCode: '16935371001', companyName: 'OPEN HOLDING SRL' } },
      subsidiaries: { taxCode: '12345678910', companyName: 'CHILD SRL', province: { code: 'RM', description: 'ROMA' } },
      affiliateCompanies: { taxCode: '10987654321', companyName: 'SISTER SRL', percentShare: 20 },
      publicTenders: { year: 2021, applied: 41, won: 42, value: 13812.52 },
      allOffices: { companyDetails: { vatCode: '12485671007', officeType: { code: 'UL' } }, companyStatus: { activityStatus: { code: 'A' } } },
    } as unknown as VComposite);
    expect(m.managers).toEqual([
      {
        kind: 'person',
        taxCode: 'SCRLCU73R02H501H',
        roles: [{ role: { code: 'AUN', description: 'Managing director' }, startDate: '2020-09-10T00:00:00.000Z' }],
        isLegalRepresentative: null,
        name: 'LUCA',
        surname: 'SCURIATTI',
        gender: null,
        rawGender: null,
        birthDate: null,
        age: null,
        birthTown: null,
      },
    ]);
    expect(m.shareholders).toEqual([
      {
        percentShare: 100,
        shareType: null,
        owners: [{ kind: 'company', taxCode: '16935371001', companyName: 'OPEN HOLDING SRL', serviceNumber: null, sinceDate: null, streetName: null, zipCode: null, town: null }],
      },
    ]);
    expect(m.subsidiaries).toEqual([
      { taxCode: '12345678910', companyName: 'CHILD SRL', streetName: null, zipCode: null, town: null, province: { code: 'RM', description: 'ROMA' } },
    ]);
    expect(m.affiliates).toEqual([{ taxCode: '10987654321', companyName: 'SISTER SRL', percentShare: 20 }]);
    expect(m.publicTenders).toEqual([{ year: '2021', applied: 41, won: 42, value: 13812.52 }]);
    expect(m.allOffices).toMatchObject([{ vatCode: '12485671007', officeType: 'UL', activityStatus: 'A' }]);
  });

  it('the lists stay lists, and what is no object is skipped', () => {
    const m = normalizeComposite({
      managers: [null, 'x', { companyName: 'OPEN HOLDING SRL', taxCode: '16935371001' }],
      subsidiaries: [],
      publicTenders: null,
    } as unknown as VComposite);
    expect(m.managers).toEqual([{ kind: 'company', taxCode: '16935371001', roles: [], isLegalRepresentative: null, companyName: 'OPEN HOLDING SRL' }]);
    expect(m.subsidiaries).toEqual([]);
    expect(m.publicTenders).toEqual([]);
  });

  it('IT-advanced: one shareholder or one balance-sheet year given alone', () => {
    const m = normalizeItAdvanced({
      shareHolders: { companyName: 'OPEN HOLDING S.R.L.', taxCode: '16935371001', percentShare: 100 },
      balanceSheets: { all: { year: 2022, turnover: 4043407 } },
    } as unknown as VItAdvanced);
    expect(m.shareholders?.[0]).toMatchObject({ percentShare: 100, owners: [{ kind: 'company', companyName: 'OPEN HOLDING S.R.L.' }] });
    expect(m.balanceSheets).toMatchObject([{ year: 2022, turnover: 4043407 }]);
  });
});

describe('codes the schema’s enums do not know', () => {
  it('leave the enum null and are kept raw beside it', () => {
    const m = normalizeComposite({
      companyDetails: { officeType: { code: 'XX', description: 'Something new' } },
      companyStatus: { activityStatus: { code: 'L', description: 'In liquidation' } },
      legalForm: { legalForm: { code: 'CO', description: 'Cooperative' } },
      managers: [{ name: 'ANNA', surname: 'ROSSI', gender: { code: 'X', description: 'Other' } }],
      allOffices: [{ companyDetails: { officeType: { code: 'ZZ' } }, companyStatus: { activityStatus: { code: 'Q' } } }],
    });
    expect(m).toMatchObject({
      officeType: null,
      rawOfficeType: 'XX',
      activityStatus: null,
      rawActivityStatus: 'L',
      legalForm: null,
      rawLegalForm: 'CO',
      legalFormDescription: 'Cooperative',
    });
    expect(m.managers?.[0]).toMatchObject({ gender: null, rawGender: 'X' });
    expect(m.allOffices?.[0]).toMatchObject({ officeType: null, rawOfficeType: 'ZZ', activityStatus: null, rawActivityStatus: 'Q' });
  });

  it('known codes are kept raw too, as written (F for a woman)', () => {
    const m = normalizeComposite({ companyStatus: { activityStatus: { code: 'cf' } }, managers: [{ name: 'ANNA', gender: { code: 'F' } }] });
    expect(m).toMatchObject({ activityStatus: 'CF', rawActivityStatus: 'cf' });
    expect(m.managers?.[0]).toMatchObject({ gender: 'W', rawGender: 'F' });
  });

  it('monitor datasets', () => {
    expect(normalizeMonitor({ id: '6981e3571a222556460af532', dataset: 'IT-future' })).toMatchObject({ dataset: null, rawDataset: 'IT-future' });
  });

  it('merging: an enum and its raw code come from the same tier', () => {
    const full = normalizeComposite({ companyStatus: { activityStatus: { code: 'L' } }, legalForm: { legalForm: { code: 'SC' } } });
    const start = normalizeItStart({ activityStatus: 'ATTIVA' });
    const m = mergeModels(full, start);
    expect(m).toMatchObject({ activityStatus: null, rawActivityStatus: 'L', registryStatus: 'ACTIVE', rawRegistryStatus: 'ATTIVA', legalForm: 'SC' });
    // without a raw code of its own, the primary takes the secondary's pair
    const m2 = mergeModels(normalizeComposite({ companyDetails: { vatCode: '12485671007' } }), start);
    expect(m2).toMatchObject({ activityStatus: 'A', rawActivityStatus: 'ATTIVA' });
  });
});

describe('merging two tiers of one company', () => {
  it('keeps the richer section and completes the address field by field', () => {
    const start = normalizeItStart(first<VItAdvanced>('GET /IT-start/{vatCode_taxCode_or_id}'));
    const aml = composite('IT-aml');
    const m = mergeModels(aml, start);
    expect(m.id).toBe('60b4a85585e34e615c569ef5');
    expect(m.companyName).toBe('OPENAPI SPA');
    expect(m.sdiCode).toBe('USAL8PV');
    expect(m.managers).toHaveLength(4);
    expect(m.address).toMatchObject({
      streetName: 'VIALE FILIPPO TOMMASO MARINETTI, 221',
      townCode: 'H501',
      streetNumber: '221',
      province: { code: 'RM', description: 'ROMA' },
      country: { code: 'IT', description: 'Italia' },
      coordinates: { latitude: 41.8071, longitude: 12.47843 },
    });
  });
});

describe('IT-search', () => {
  it('enriched records are start/advanced records', () => {
    const start = (vendorData('GET /IT-search #Start') as VItAdvanced[]).map(normalizeItStart);
    expect(start.map((c) => [c.vatCode, c.registryStatus])).toEqual([
      ['12485671007', 'ACTIVE'],
      ['12345678910', 'REGISTERED'],
    ]);
    const advanced = (vendorData('GET /IT-search #Advanced') as VItAdvanced[]).map(normalizeItAdvanced);
    expect(advanced[1]?.reaCode).toBe('2366289');
  });

  it('dry-run figures are found at the root or in data', () => {
    expect(dryRunFigures({ count: 2, cost: 0.02, success: true })).toEqual({ total: 2, cost: 0.02 });
    expect(dryRunFigures({ data: { count: 1500, cost: 15 }, success: true })).toEqual({ total: 1500, cost: 15 });
    expect(dryRunFigures({ data: [{ count: 7 }], success: true })).toEqual({ total: 7, cost: null });
    expect(dryRunFigures({ data: [], success: true })).toEqual({ total: null, cost: null });
  });
});

describe('companies outside Italy', () => {
  const COUNTRY_KEYS: Array<[string, string]> = vendorExampleKeys()
    .filter((k) => /^GET \/(FR|DE|ES|PT|GB|BE|AT|CH|PL)-(start|advanced)\//.test(k))
    .map((k) => [k, k.slice(5, 7)]);

  it.each(COUNTRY_KEYS)('%s keeps identity, address and status', (key, country) => {
    const raw = first<VForeign>(key);
    const m = normalizeForeign(raw, key.includes('advanced') ? 'ADVANCED' : 'START', country);
    expect(m.id).toBe(raw.id);
    expect(m.companyName).toBe(raw.companyName?.trim());
    expect(m.vatCode).toBe(raw.vatCode);
    expect(m.country).toBe(country);
    expect(m.activityStatus).toBe('ACTIVE');
    expect(m.address?.town).toBe(raw.address?.registeredOffice?.town);
    expect(m.address?.zipCode).toBe(String(raw.address?.registeredOffice?.zipCode)); // BE and AT send a number
    if (key.includes('advanced')) expect(m.balanceSheets?.length).toBe(raw.balanceSheets?.all?.length);
  });

  it('FR-advanced: SIRET/SIREN, NAF, legal form, credit-worthiness', () => {
    const m = normalizeForeign(first<VForeign>('GET /FR-advanced/{siretCode_sirenCode_vatCode_or_id}'), 'ADVANCED', 'FR');
    expect(m).toMatchObject({
      siretCode: '53497325000010',
      sirenCode: '534973250',
      vatCode: 'FR54534973250',
      registrationDate: '2011-09-01T00:00:00.000Z',
      creditWorthy: true,
      legalForm: { code: 'SARL', description: null },
      classification: { naf: { code: '5610A', description: 'Restauration traditionnelle' }, nace: { code: '5610', description: 'Restaurants and mobile food service activities' } },
      offices: [],
    });
    expect(m.address).toMatchObject({
      streetName: '35 RUE LOUIS BARTHOU',
      department: { code: '54', description: 'Meurthe-et-Moselle' },
      region: { code: '44', description: 'Grand Est' },
      townCode: '54482',
      isBranchOffice: false,
    });
    // the extra address lines: "NULL" is the vendor's no value
    expect(m.address).toMatchObject({ streetName2: null, streetName3: null, streetName4: '54130 SAINT-MAX' });
    expect(m.balanceSheets).toEqual([
      { year: 2014, balanceSheetDate: '2014-12-31T00:00:00.000Z', employees: 1, turnover: 252900, netWorth: 13916, operatingRevenue: null, equity: null, totalAssets: null },
    ]);
  });

  it('FR-search: branch-office addresses and other offices', () => {
    const [ceased] = (vendorData('GET /FR-search #Advanced') as VForeign[]).map((r) => normalizeForeign(r, 'ADVANCED', 'FR'));
    expect(ceased?.activityStatus).toBe('CEASED');
    expect(ceased?.address?.isBranchOffice).toBe(true);
    expect(ceased?.offices?.[0]).toMatchObject({ siretCode: '83772561300025', activityStatus: 'ACTIVE', address: { streetName: '2 RUE BLEUE', isBranchOffice: false } });
  });

  it('WW-top: identifiers, size, primary and secondary classifications', () => {
    const m = normalizeForeign(first<VForeign>('GET /WW-top/{country}/{vatCode_companyNumber_taxCode_or_id}'), 'TOP', 'LT');
    expect(m.companySize).toBe('Medium sized company');
    expect(m.nativeCompanyName).toBe('UAB Contentus');
    expect(m.identifiers).toEqual([
      { label: 'Trade register number', number: '300556523', types: ['Trade register number'] },
      { label: 'VAT number, European VAT number', number: 'LT100003695519', types: ['VAT/Tax number', 'European VAT number'] },
    ]);
    expect(m.classification?.nace).toEqual({ code: '4669', description: 'Wholesale of other machinery and equipment' });
    expect(m.classification?.secondarySic?.map((c) => c.code)).toEqual(['5999', '8711']);
    expect(m.contacts).toEqual({ phone: '+370 5 2772184', fax: '+370 5 2108773', website: 'www.contentus.lt' });
    expect(m.balanceSheets?.[0]).toMatchObject({ year: 2022, operatingRevenue: 5113928, equity: 405055 });
  });

  it('WW-top: regional breakdown, classification levels and the national classification', () => {
    const m = normalizeForeign(first<VForeign>('GET /WW-top/{country}/{vatCode_companyNumber_taxCode_or_id}'), 'TOP', 'LT');
    expect(m.address).toMatchObject({
      nativeTown: 'Vilniaus M.',
      county: 'Eastern Europe',
      nuts1: 'LT0 - Lithuania',
      nuts2: 'LT01 - Capital Region',
      nuts3: 'LT011 - Vilnius',
      usMetropolitanArea: null,
      usState: null,
      locationAreas: [
        { type: 'County', description: 'Vilnius' },
        { type: 'City municipality', description: 'Vilniaus M. Sav.' },
      ],
    });
    expect(m.classification?.national).toEqual({ types: ['NACE Rev. 2'], primary: ['4669'], secondary: ['4778', '7112'] });
    const codes = m.classification?.codes ?? [];
    expect(codes.map((c) => `${c.scheme}:${c.isPrimary ? 'P' : 'S'}:${c.code}`)).toEqual([
      'NACE:P:4669',
      'NACE:S:4778',
      'NACE:S:7112',
      'NAICS:P:423830',
      'NAICS:S:459999',
      'NAICS:S:541330',
      'SIC:P:5084',
      'SIC:S:5999',
      'SIC:S:8711',
    ]);
    expect(codes[0]).toEqual({
      scheme: 'NACE',
      isPrimary: true,
      code: '4669',
      description: 'Wholesale of other machinery and equipment',
      core: 'Wholesale',
      section: 'G - Wholesale and retail trade; repair of motor vehicles and motorcycles',
      division: '46 - Wholesale trade, except of motor vehicles and motorcycles',
      group: '466 - Wholesale of other machinery, equipment and supplies',
    });
  });

  it('foreign lists given as one object (primary code, location area, office, marker)', () => {
    const m = normalizeForeign(
      {
        internationalClassification: { nace: { primary: { code: '4669', description: 'Wholesale' }, secondary: { code: '4778' } } },
        address: { registeredOffice: { town: 'X', locationArea: { type: 'County', description: 'Vilnius' } } },
        allOffice: { siretCode: '83772561300025', companyName: 'PARIS SHOP' },
        markers: { label: 'TIN', number: '1', types: 'TIN' },
      } as unknown as VForeign,
      'TOP',
      'LT',
    );
    expect(m.classification?.nace).toEqual({ code: '4669', description: 'Wholesale' });
    expect(m.classification?.secondaryNace).toEqual([{ code: '4778', description: null }]);
    expect(m.address?.locationAreas).toEqual([{ type: 'County', description: 'Vilnius' }]);
    expect(m.offices).toMatchObject([{ siretCode: '83772561300025', companyName: 'PARIS SHOP' }]);
    expect(m.identifiers).toEqual([{ label: 'TIN', number: '1', types: ['TIN'] }]);
  });

  it('WW-start and WW-advanced', () => {
    const s = normalizeForeign(first<VForeign>('GET /WW-start/{country}/{vatCode_companyNumber_taxCode_or_id}'), 'START', 'PL');
    expect(s).toMatchObject({ companyName: 'Wilk Elektronik S.A.', regonNumber: '276675936', leiCode: '259400MOV1C1EUJWWC81', incorporationDate: '1999-01-01T00:00:00.000Z' });
    const a = normalizeForeign(first<VForeign>('GET /WW-advanced/{country}/{vatCode_companyNumber_taxCode_or_id}'), 'ADVANCED', 'PL');
    expect(a.classification?.naics).toEqual({ code: '334112', description: 'Computer Storage Device Manufacturing' });
  });

  it('EU-start: the VAT registry check', () => {
    expect(normalizeEuStart(first<VEuStart>('GET /EU-start/{vatCode_taxCode}'))).toEqual({
      level: 'VAT_REGISTRY',
      country: 'IE',
      companyName: 'GOOGLE IRELAND LIMITED',
      vatCode: 'IE6388047V',
      address: { streetName: '3RD FLOOR, GORDON HOUSE, BARROW STREET, DUBLIN 4', country: 'IE', isBranchOffice: false },
      vatRegistration: { valid: true, formatValid: true },
    });
  });

  it('EU-start for Greece: VIES answers the VAT prefix EL as the country; the company is in GR (ISO), its VAT number EL-prefixed', () => {
    const greek = { ...first<VEuStart>('GET /EU-start/{vatCode_taxCode}'), countryCode: 'EL', vatCode: '094014201' };
    expect(normalizeEuStart(greek)).toMatchObject({ country: 'GR', vatCode: 'EL094014201', address: { country: 'GR' } });
  });
});

describe('legal forms and monitors', () => {
  it('IT-legalforms', () => {
    expect((vendorData('GET /IT-legalforms') as VLegalForm[]).map(normalizeLegalForm)).toEqual([
      { code: 'AA', description: "SOCIETA' IN ACCOMANDITA PER AZIONI" },
      { code: 'AN', description: "SOCIETA' CONSORTILE IN NOME COLLETTIVO" },
      { code: 'EI', description: 'ENTE IMPRESA' },
      { code: 'RR', description: "SOCIETA' A RESPONSABILITA' LIMITATA A CAPITALE RIDOTTO" },
    ]);
    expect(normalizeLegalForm(first<VLegalForm>('GET /IT-legalforms/{code}'))).toEqual({ code: 'SP', description: "SOCIETA' PER AZIONI" });
  });

  it('POST /monitor', () => {
    expect(normalizeMonitor(vendorData('POST /monitor') as VMonitor)).toEqual({
      id: '6981e3571a222556460af532',
      code: '12485671007',
      dataset: 'IT_ADVANCED',
      rawDataset: 'IT-advanced',
      monitoredFields: ['pec'],
      companyId: '60d1bfc731177b0a092cdfc1',
      vatCode: '12485671007',
      taxCode: '12485671007',
      companyName: 'OPENAPI S.P.A.',
      createdOn: '2026-02-03T00:00:00.000Z',
      checkedOn: null,
      nextOn: '2026-03-05T00:00:00.000Z',
      expiresOn: '2027-02-03T00:00:00.000Z',
      autorenew: true,
      updatedFields: null,
      latestDataset: null,
      previousDataset: null,
      // The vendor's owner and callback (in a tracked monitor the callback is the caller's).
      owner: 'gcloud-tests@openapi.it',
      callback: { url: 'https://webhook.site/28a4dddf-eca1-47f2-88d8-94878995e4d8', method: 'JSON', field: 'data', headerNames: [], retry: 0 },
    });
  });

  it('GET /monitor/{id} keeps the snapshots as JSON', () => {
    const raw = vendorData('GET /monitor/{id}') as VMonitor;
    const m = normalizeMonitor(raw);
    expect(m?.updatedFields).toEqual({ pec: 'openapi@legalmail.it' });
    expect(m?.latestDataset).toEqual(raw.latestDataset);
    expect(m?.checkedOn).not.toBeNull();
  });

  it('GET /monitor lists summaries', () => {
    expect((vendorData('GET /monitor') as VMonitor[]).map(normalizeMonitor).map((m) => [m?.id, m?.companyName, m?.nextOn])).toEqual([
      ['5f22f722065afc42223c7131', 'OPENAPI S.P.A.', '2026-03-02T00:00:00.000Z'],
      ['697ce19f5610b4a8910670c4', 'RED FLAG SRL', '2026-03-02T00:00:00.000Z'],
    ]);
    expect((vendorExample('DELETE /monitor/{id}') as { message: string }).message).toBe('1 deleted monitor');
  });

  it('dataset names round-trip', () => {
    for (const d of ['IT_START', 'IT_ADVANCED', 'IT_VATGROUP', 'IT_SDICODE', 'IT_UBO', 'FR_ADVANCED'] as const) expect(datasetFromUpstream(datasetToUpstream(d))).toBe(d);
    expect(datasetToUpstream('IT_STAKEHOLDERS')).toBe('IT-stakeholders');
    expect(datasetToUpstream('FR_START')).toBe('FR-start');
  });
});
