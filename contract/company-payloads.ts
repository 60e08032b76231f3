/**
 * The vendor's company payloads (company.openapi.json): the section names of the composite shapes
 * (IT-marketing, IT-stakeholders, IT-aml, IT-full) and the fields of the sections that are plain
 * lists of fields, as the vendor spec names them. The emulator writes these payloads and the layer
 * reads them; both take the names from here. Imports nothing of the layer or the emulator.
 */

/** Balance-sheet sections, in the vendor's order: each a list of line items `{code, value}`. */
export const BALANCE_SHEET_SECTIONS = [
  'assetsAggregateValues',
  'creditsToShareholders',
  'intangibleFixedAssets',
  'tangibleFixedAssets',
  'financialFixedAssets',
  'inventory',
  'credits',
  'financialAssets',
  'cashEquivalents',
  'liabilitiesAggregateValues',
  'netWorth',
  'riskProvisions',
  'debts',
] as const;
export type BalanceSheetSection = (typeof BALANCE_SHEET_SECTIONS)[number];

/** Income-statement sections, in the vendor's order: each a list of line items `{code, value}`. */
export const INCOME_STATEMENT_SECTIONS = [
  'incomeStatementAggregateValues',
  'productionValue',
  'productionCosts',
  'revenuesFinancialCharges',
  'adjustments',
  'annualResult',
] as const;
export type IncomeStatementSection = (typeof INCOME_STATEMENT_SECTIONS)[number];

/** Every line-item section: the balance sheet's, then the income statement's. */
export const LINE_SECTIONS = [...BALANCE_SHEET_SECTIONS, ...INCOME_STATEMENT_SECTIONS] as const;
export type LineSection = (typeof LINE_SECTIONS)[number];

/** Ratio sections, in the vendor's order, and their fields (all numbers). */
export const RATIO_FIELDS = {
  coverageRatios: ['ebitdaNetInterestCoverage', 'ffoNetInterestCoverage', 'ebitNetInterestCoverage', 'ebitdaGrossInterestCoverage', 'ebitGrossInterestCoverage'],
  development: ['ebitVariation', 'grossFinancialDebt', 'totalAssets', 'mol', 'addedValue', 'productionValue'],
  efficiency: ['turnoverIndex', 'inventoryRotation', 'currentAssetsRotation', 'accountsReceivableRotation'],
  financialBurden: ['rod', 'rodFinanziario', 'burdenIndex'],
  financialCycle: ['accountsReceivableDuration', 'stockDuration', 'debtsToSuppliersDuration', 'financialCycleDuration'],
  financialStability: ['secondaryMarginStructure', 'marginStructure', 'fixedAssetsCoverageRate', 'marginStructureIndex', 'workingCapitalCoverage', 'acidTest', 'currentRatio'],
  financialStatementKpi: ['debtsTurnover', 'totalInventoryTurnover'],
  indebtedness: ['bankDebtTotalAssets', 'grossFinancialDebtTotalAssets', 'capitalizationDegree', 'leverage', 'bankDebtRatio', 'debtRatio'],
  leverageRatios: ['pfnEbitda', 'ebitdaNetLeverage', 'ffoNetLeverage', 'ebitdaGrossLeverage'],
  liquidityRatios: ['cashShortTermFinancialDebt', 'cashShortTermBankDebt', 'cashTotalShortTermDebt', 'fcfShortTermFinancialDebt'],
  profitability: ['ros', 'roe', 'incidenceOfExtraFeaturesManagement', 'roi', 'roaMonetary'],
  structureRatios: ['netFinancialDebtEquityNetWorth', 'pfnNetWorth', 'financialDebtComposition', 'netDebtTotalSources', 'grossFinancialDebtNetWorth'],
} as const;
export type RatioSection = keyof typeof RATIO_FIELDS;

/** The ratio sections, in the vendor's order. */
export const RATIO_SECTIONS = Object.keys(RATIO_FIELDS) as RatioSection[];

/** `companyDates`: the company's dates (the vendor writes each as a local date-time). */
export const COMPANY_DATES_FIELDS = ['registrationDate', 'startDate', 'incorporationDate', 'foundingDate', 'endDate'] as const;
export type CompanyDatesField = (typeof COMPANY_DATES_FIELDS)[number];

/** `employeesStatistic`: the share of the staff (percent) under each kind of contract or role. */
export const EMPLOYEE_STATISTICS_FIELDS = [
  'fixedTermContract',
  'permanentContract',
  'partialTimeContract',
  'fullTimeContract',
  'director',
  'frameworkContract',
  'whiteCollar',
  'apprentice',
] as const;
export type EmployeeStatisticsField = (typeof EMPLOYEE_STATISTICS_FIELDS)[number];

/** `operatingResults`: EBITDA, EBIT and cash flow, this year and the last two years (all numbers). */
export const OPERATING_RESULTS_FIELDS = ['ebitda', 'ebitdaL2Y', 'ebit', 'ebitL2Y', 'cashFlow', 'cashFlowL2Y'] as const;
export type OperatingResultsField = (typeof OPERATING_RESULTS_FIELDS)[number];

/** `webAndSocial`: the company's web addresses (strings), beside its `hasSocial` flag. */
export const WEB_AND_SOCIAL_LINKS = ['eCommerce', 'website', 'facebook', 'youtube', 'twitter', 'instagram', 'linkedin', 'pinterest', 'vimeo'] as const;
export type WebAndSocialLink = (typeof WEB_AND_SOCIAL_LINKS)[number];

/**
 * The sections of each composite shape (IT-marketing, IT-stakeholders, IT-aml, IT-full), in the vendor
 * schema's order: a shape's `data` object holds these sections and no other.
 */
export const COMPOSITE_SECTIONS = {
  marketing: [
    'companyDetails',
    'companyStatus',
    'address',
    'branches',
    'atecoClassification',
    'internationalClassification',
    'corporateGroups',
    'employees',
    'employeesStatistic',
    'innovativeSmeAndSu',
    'mail',
    'contacts',
    'ecofin',
    'webAndSocial',
    'pec',
    'allOffices',
  ],
  stakeholders: ['companyDetails', 'address', 'branches', 'managers', 'shareholders', 'corporateGroups', 'subsidiaries', 'affiliateCompanies', 'employees', 'employeesStatistic'],
  aml: [
    'companyDetails',
    'address',
    'branches',
    'managers',
    'shareholders',
    'corporateGroups',
    'subsidiaries',
    'affiliateCompanies',
    'foreignTrade',
    'publicTenders',
    'operatingResults',
    'ecofin',
    'debts',
    'rae',
    'sae',
  ],
  full: [
    'companyDetails',
    'legalForm',
    'companyStatus',
    'companyDates',
    'address',
    'marketable',
    'branches',
    'atecoClassification',
    'internationalClassification',
    'ecofin',
    'employees',
    'operatingResults',
    'employeesStatistic',
    'innovativeSmeAndSu',
    'mail',
    'contacts',
    'webAndSocial',
    'pec',
    'publicTenders',
    'foreignTrade',
    'managers',
    'shareholders',
    'corporateGroups',
    'subsidiaries',
    'affiliateCompanies',
    'artisanBusinessRegistry',
    'soaCertification',
    ...LINE_SECTIONS,
    ...RATIO_SECTIONS,
    'rae',
    'sae',
    'allOffices',
  ],
} as const satisfies Record<string, readonly string[]>;

export type CompositeShape = keyof typeof COMPOSITE_SECTIONS;
/** Every section of the composite shapes (IT-full holds them all). */
export type CompositeSection = (typeof COMPOSITE_SECTIONS.full)[number];
