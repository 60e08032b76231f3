/**
 * Balance-sheet and income-statement line codes per section (the `IIC…` codes of the vendor's
 * IT-full example, in its order). Generated companies fill every code of every section.
 */
export const LINE_CODES: Record<string, readonly string[]> = {
  assetsAggregateValues: ["IIC072", "IIC001", "IIC071", "IIC074", "IIC039"],
  creditsToShareholders: ["IIC002", "IIC193"],
  intangibleFixedAssets: ["IIC011"],
  tangibleFixedAssets: ["IIC018"],
  financialFixedAssets: [
    "IIC026", "IIC027", "IIC029", "IIC028", "IIC025", "IIC024", "IIC030", "IIC031", "IIC197", "IIC194",
    "IIC033", "IIC035", "IIC020", "IIC022", "IIC021", "IIC019", "IIC195", "IIC196", "IIC032", "IIC317",
    "IIC318", "IIC316", "IIC034", "IIC320", "IIC038", "IIC023", "IIC319",
  ],
  inventory: ["IIC043", "IIC044", "IIC040", "IIC041", "IIC349", "IIC045", "IIC042"],
  credits: [
    "IIC057", "IIC052", "IIC053", "IIC046", "IIC047", "IIC054", "IIC055", "IIC050", "IIC051", "IIC048",
    "IIC049", "IIC198", "IIC199", "IIC056", "IIC180", "IIC181", "IIC324", "IIC321", "IIC058", "IIC325",
    "IIC326", "IIC328", "IIC323", "IIC322", "IIC327",
  ],
  financialAssets: ["IIC201", "IIC202", "IIC200", "IIC062", "IIC065", "IIC060", "IIC059", "IIC061", "IIC066"],
  cashEquivalents: ["IIC070"],
  liabilitiesAggregateValues: ["IIC119", "IIC089", "IIC118", "IIC121", "IIC084", "IIC088"],
  netWorth: [
    "IIC211", "IIC207", "IIC209", "IIC210", "IIC208", "IIC203", "IIC206", "IIC078", "IIC212", "IIC216",
    "IIC214", "IIC218", "IIC081", "IIC082", "IIC083", "IIC345", "IIC204", "IIC213", "IIC215", "IIC077",
    "IIC075", "IIC076", "IIC205", "IIC080",
  ],
  riskProvisions: ["IIC087", "IIC219", "IIC085", "IIC086"],
  debts: [
    "IIC099", "IIC098", "IIC091", "IIC090", "IIC092", "IIC093", "IIC103", "IIC102", "IIC117", "IIC097",
    "IIC107", "IIC112", "IIC113", "IIC109", "IIC105", "IIC220", "IIC221", "IIC106", "IIC094", "IIC095",
    "IIC096", "IIC108", "IIC185", "IIC184", "IIC104", "IIC101", "IIC100", "IIC114", "IIC115", "IIC116",
    "IIC110", "IIC111", "IIC334", "IIC329", "IIC333", "IIC338", "IIC337", "IIC330", "IIC336", "IIC342",
    "IIC340", "IIC339", "IIC331", "IIC332", "IIC343", "IIC341", "IIC335",
  ],
  incomeStatementAggregateValues: ["IIC224", "IIC149", "IIC130", "IIC161", "IIC170"],
  productionValue: ["IIC127", "IIC129", "IIC223", "IIC125", "IIC124", "IIC128", "IIC186", "IIC126"],
  productionCosts: [
    "IIC134", "IIC188", "IIC140", "IIC141", "IIC142", "IIC143", "IIC133", "IIC138", "IIC148", "IIC147",
    "IIC137", "IIC131", "IIC146", "IIC132", "IIC136", "IIC187", "IIC135", "IIC144", "IIC139", "IIC145",
  ],
  revenuesFinancialCharges: [
    "IIC226", "IPL231", "IIC236", "IIC227", "IPL232", "IIC237", "IIC225", "IIC230", "IIC235", "IIC228",
    "IIC233", "IIC238", "IIC229", "IIC234", "IIC239", "IIC156", "IIC190", "IIC152", "IIC155", "IIC154",
    "IIC150", "IIC189", "IIC241", "IIC243", "IIC244", "IIC242", "IIC240", "IIC159", "IIC158",
  ],
  adjustments: [
    "IIC163", "IIC162", "IIC164", "IIC246", "IIC245", "IIC350", "IICC351", "IIC167", "IIC168", "IIC166",
    "IIC165", "IIC169",
  ],
  annualResult: ["IIC191", "IIC192", "IIC250", "IIC179", "IIC177", "IIC347", "IIC178"],
};

/** The line-item sections, in the order the vendor lists them. */
export const LINE_SECTIONS = Object.keys(LINE_CODES);
