/**
 * OPENAPI S.P.A. (12485671007), the company of the vendor's examples: its financial, ratio and
 * classification sections as the spec's IT-full example gives them (the example's
 * `"secondaryMarginStructure "` key is written without its trailing space). Identity data (name,
 * address, people, balance-sheet summaries) lives in `sandbox.ts`.
 */

const items = (pairs: Array<[string, number]>): Array<{ code: string; value: number }> => pairs.map(([code, value]) => ({ code, value }));

export const OPENAPI_FIXED_SECTIONS: Readonly<Record<string, unknown>> = {
  assetsAggregateValues: items([
    ["IIC072", 77415], ["IIC001", 0], ["IIC071", 1140691], ["IIC074", 1511183], ["IIC039", 293077],
  ]),
  creditsToShareholders: items([
    ["IIC002", 0], ["IIC193", 0],
  ]),
  intangibleFixedAssets: items([
    ["IIC011", 62234],
  ]),
  tangibleFixedAssets: items([
    ["IIC018", 230843],
  ]),
  financialFixedAssets: items([
    ["IIC026", 0], ["IIC027", 0], ["IIC029", 0], ["IIC028", 0], ["IIC025", 0], ["IIC024", 0],
    ["IIC030", 0], ["IIC031", 0], ["IIC197", 0], ["IIC194", 0], ["IIC033", 0], ["IIC035", 0],
    ["IIC020", 0], ["IIC022", 0], ["IIC021", 0], ["IIC019", 0], ["IIC195", 0], ["IIC196", 0],
    ["IIC032", 0], ["IIC317", 0], ["IIC318", 0], ["IIC316", 0], ["IIC034", 0], ["IIC320", 0],
    ["IIC038", 0], ["IIC023", 0], ["IIC319", 0],
  ]),
  inventory: items([
    ["IIC043", 0], ["IIC044", 0], ["IIC040", 0], ["IIC041", 0], ["IIC349", 0], ["IIC045", 0],
    ["IIC042", 0],
  ]),
  credits: items([
    ["IIC057", 2865], ["IIC052", 0], ["IIC053", 0], ["IIC046", 91525], ["IIC047", 0],
    ["IIC054", 6363], ["IIC055", 0], ["IIC050", 0], ["IIC051", 0], ["IIC048", 0], ["IIC049", 0],
    ["IIC198", 0], ["IIC199", 0], ["IIC056", 113619], ["IIC180", 15731], ["IIC181", 2865],
    ["IIC324", 0], ["IIC321", 91525], ["IIC058", 120212], ["IIC325", 0], ["IIC326", 18596],
    ["IIC328", 6363], ["IIC323", 0], ["IIC322", 0], ["IIC327", 3728],
  ]),
  financialAssets: items([
    ["IIC201", 0], ["IIC202", 0], ["IIC200", 0], ["IIC062", 0], ["IIC065", 0], ["IIC060", 0],
    ["IIC059", 0], ["IIC061", 0], ["IIC066", 0],
  ]),
  cashEquivalents: items([
    ["IIC070", 1020479],
  ]),
  liabilitiesAggregateValues: items([
    ["IIC119", 45616], ["IIC089", 68857], ["IIC118", 833237], ["IIC121", 1511183],
    ["IIC084", 563473], ["IIC088", 0],
  ]),
  netWorth: items([
    ["IIC211", 0], ["IIC207", 0], ["IIC209", 0], ["IIC210", 0], ["IIC208", 0], ["IIC203", 7069],
    ["IIC206", 0], ["IIC078", 10000], ["IIC212", 0], ["IIC216", 0], ["IIC214", 1], ["IIC218", 0],
    ["IIC081", 7069], ["IIC082", 0], ["IIC083", 469366], ["IIC345", 0], ["IIC204", 0],
    ["IIC213", 0], ["IIC215", 0], ["IIC077", 27038], ["IIC075", 50000], ["IIC076", 0],
    ["IIC205", 0], ["IIC080", 0],
  ]),
  riskProvisions: items([
    ["IIC087", 0], ["IIC219", 0], ["IIC085", 0], ["IIC086", 0],
  ]),
  debts: items([
    ["IIC099", 0], ["IIC098", 5426], ["IIC091", 0], ["IIC090", 0], ["IIC092", 0], ["IIC093", 0],
    ["IIC103", 0], ["IIC102", 0], ["IIC117", 52106], ["IIC097", 38777], ["IIC107", 0],
    ["IIC112", 19752], ["IIC113", 0], ["IIC109", 0], ["IIC105", 0], ["IIC220", 0], ["IIC221", 0],
    ["IIC106", 0], ["IIC094", 2884], ["IIC095", 0], ["IIC096", 0], ["IIC108", 0], ["IIC185", 0],
    ["IIC184", 0], ["IIC104", 0], ["IIC101", 0], ["IIC100", 554848], ["IIC114", 26268],
    ["IIC115", 0], ["IIC116", 781131], ["IIC110", 171953], ["IIC111", 13329], ["IIC334", 5426],
    ["IIC329", 0], ["IIC333", 38777], ["IIC338", 0], ["IIC337", 0], ["IIC330", 0], ["IIC336", 0],
    ["IIC342", 19752], ["IIC340", 0], ["IIC339", 0], ["IIC331", 0], ["IIC332", 2884],
    ["IIC343", 26268], ["IIC341", 185282], ["IIC335", 554848],
  ]),
  incomeStatementAggregateValues: items([
    ["IIC224", 682714], ["IIC149", 3753734], ["IIC130", 4436448], ["IIC161", -5395], ["IIC170", 0],
  ]),
  productionValue: items([
    ["IIC127", 0], ["IIC129", 0], ["IIC223", 3687], ["IIC125", 0], ["IIC124", 4432761],
    ["IIC128", 3687], ["IIC186", 0], ["IIC126", 0],
  ]),
  productionCosts: items([
    ["IIC134", 401153], ["IIC188", 32142], ["IIC140", 19514], ["IIC141", 12628], ["IIC142", 0],
    ["IIC143", 0], ["IIC133", 68393], ["IIC138", 6689], ["IIC148", 33313], ["IIC147", 0],
    ["IIC137", 0], ["IIC131", 9949], ["IIC146", 0], ["IIC132", 3061076], ["IIC136", 24181],
    ["IIC187", 30870], ["IIC135", 116838], ["IIC144", 32142], ["IIC139", 548861], ["IIC145", 0],
  ]),
  revenuesFinancialCharges: items([
    ["IIC226", 0], ["IPL231", 0], ["IIC236", 0], ["IIC227", 0], ["IPL232", 0], ["IIC237", 0],
    ["IIC225", 0], ["IIC230", 0], ["IIC235", 0], ["IIC228", 0], ["IIC233", 0], ["IIC238", 0],
    ["IIC229", 0], ["IIC234", 0], ["IIC239", 0], ["IIC156", 0], ["IIC190", -3950], ["IIC152", 0],
    ["IIC155", 0], ["IIC154", 0], ["IIC150", 0], ["IIC189", 0], ["IIC241", 0], ["IIC243", 0],
    ["IIC244", 1445], ["IIC242", 0], ["IIC240", 0], ["IIC159", 1445], ["IIC158", 0],
  ]),
  adjustments: items([
    ["IIC163", 0], ["IIC162", 0], ["IIC164", 0], ["IIC246", 0], ["IIC245", 0], ["IIC350", 0],
    ["IICC351", 0], ["IIC167", 0], ["IIC168", 0], ["IIC166", 0], ["IIC165", 0], ["IIC169", 0],
  ]),
  annualResult: items([
    ["IIC191", 204454], ["IIC192", 0], ["IIC250", 0], ["IIC179", 469366], ["IIC177", 677319],
    ["IIC347", 3499], ["IIC178", 207953],
  ]),
  coverageRatios: {
    "ebitdaNetInterestCoverage": 494.71,
    "ebitNetInterestCoverage": 472.4664,
    "ebitdaGrossInterestCoverage": 494.71,
    "ebitGrossInterestCoverage": 472.4664
  },
  development: {
    "ebitVariation": 1.6217,
    "grossFinancialDebt": -0.1394,
    "totalAssets": -12.38,
    "mol": 151.13,
    "addedValue": 60.01,
    "productionValue": 4.48
  },
  efficiency: {
    "turnoverIndex": 2.9358,
    "currentAssetsRotation": 3.6619,
    "accountsReceivableRotation": 48.4725
  },
  financialBurden: {"rod": 0.17, "rodFinanziario": 3.47, "burdenIndex": 0.2},
  financialCycle: {
    "accountsReceivableDuration": 7.53,
    "stockDuration": 0,
    "debtsToSuppliersDuration": 64.5086,
    "financialCycleDuration": -56.9786
  },
  financialStability: {
    "secondaryMarginStructure": 315909,
    "marginStructure": 1.8803,
    "fixedAssetsCoverageRate": 2.0542,
    "marginStructureIndex": 263803,
    "workingCapitalCoverage": 0.0867,
    "acidTest": 1.4654,
    "currentRatio": 1.4654
  },
  financialStatementKpi: {"totalInventoryTurnover": 0, "debtsTurnover": 0.188},
  indebtedness: {
    "bankDebtTotalAssets": 0.0019,
    "capitalizationDegree": 0.3729,
    "leverage": 2.6819,
    "bankDebtRatio": 0.0051,
    "debtRatio": 1.4788
  },
  leverageRatios: {"pfnEbitda": -1.3693, "ebitdaNetLeverage": -1.3693, "ebitdaGrossLeverage": 0.0583},
  liquidityRatios: {
    "cashShortTermFinancialDebt": 353.8415,
    "cashShortTermBankDebt": 353.8415,
    "cashTotalShortTermDebt": 1.3064
  },
  profitability: {
    "ros": 15.39,
    "roe": 83.3,
    "incidenceOfExtraFeaturesManagement": 68.75,
    "roi": 45.18,
    "roaMonetary": 33.19
  },
  structureRatios: {
    "netFinancialDebtEquityNetWorth": -1.7371,
    "pfnNetWorth": -1.7371,
    "financialDebtComposition": 0.0692,
    "grossFinancialDebtNetWorth": 0.0739
  },
  operatingResults: {
    "ebitda": 714856,
    "ebitdaL2Y": 284656,
    "ebit": 682714,
    "ebitL2Y": 260414,
    "cashFlow": 501508,
    "cashFlowL2Y": 194476
  },
  publicTenders: [
    {
      "year": "2021",
      "applied": 41,
      "won": 42,
      "value": 13812.52
    },
    {
      "year": "2020",
      "applied": 48,
      "won": 51,
      "value": 10274.94
    }
  ],
  foreignTrade: {"isImporter": false, "isExporter": false},
  corporateGroups: {
    "belongsToGroup": true,
    "groupName": "DE LUCIA - SCURIATTI",
    "holdingCompanyName": "LUCA SCURIATTI",
    "nationalParentCompany": {
      "province": {
        "code": "ND99",
        "description": "N. A."
      }
    }
  },
  employeesStatistic: {
    "permanentContract": 100,
    "partialTimeContract": 20,
    "fullTimeContract": 80,
    "whiteCollar": 100
  },
  rae: {"code": "830", "description": "SERV.FIN./IMM./FISCALI/TECNICI"},
  sae: {"code": "430", "description": "Imprese produttive"},
  internationalClassification: {
    "nace": {
      "code": "6201",
      "description": "Computer programming activities"
    },
    "primarySic": {
      "code": "7372",
      "description": "Computer programming & software services"
    },
    "secondarySic": "7392, 7374"
  },
};
