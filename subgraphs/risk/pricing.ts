/**
 * The risk area's part of the cost estimate: credit scores by level (whichever identifier names the
 * company: VAT number, tax code or Openapi id, the price is the level's), the fiscal-code check by
 * the method it uses, and
 * each order mutation by the family its arguments select (reads, lists, uploads and stops are free).
 */
import { endpointPrice, type Args, type PricedField, type PricingTable } from '../runtime/pricing.ts';
import { FAMILIES, ORDER_FAMILIES, RISK, SCORE_ENDPOINTS, type RiskFamilyName } from './upstream.ts';

const creditScore: PricedField = {
  euro: (args) => {
    const level = typeof args.level === 'string' ? args.level : 'START';
    const ep = SCORE_ENDPOINTS[level as keyof typeof SCORE_ENDPOINTS];
    return ep ? endpointPrice(ep) : 0;
  },
};

const createPrice = (family: RiskFamilyName): number => endpointPrice(FAMILIES[family].create);

/** An order whose family is chosen by one argument (refused before any call when unknown). */
function order(table: Readonly<Record<string, RiskFamilyName>>, arg: string, dflt: string): PricedField {
  return {
    euro: (args: Args) => {
      const family = table[typeof args[arg] === 'string' ? args[arg] : dflt];
      return family ? createPrice(family) : 0;
    },
  };
}

const fixed = (family: RiskFamilyName): PricedField => ({ euro: () => createPrice(family) });

export const riskPricing: PricingTable = {
  fields: {
    'Query.creditScore': creditScore,
    'Company.creditScore': creditScore,
    'Query.verifyFiscalCode': { euro: (args) => endpointPrice(args.method === 'POST' ? RISK.verifyFiscalCodePost : RISK.verifyFiscalCode) },
    'Mutation.orderPersonBureauReport': fixed('PERSON_BUREAU'),
    'Mutation.uploadSignedDelegation': { euro: () => endpointPrice(RISK.bureauUpload) },
    'Mutation.orderCompanyBureauReport': fixed('COMPANY_BUREAU'),
    'Mutation.uploadCompanySignedDelegation': { euro: () => endpointPrice(RISK.companyBureauUpload) },
    'Mutation.orderPatrimonialReport': order(ORDER_FAMILIES.PATRIMONIAL, 'level', 'STANDARD'),
    'Mutation.orderPersonReport': order(ORDER_FAMILIES.PERSON_REPORT, 'level', 'STANDARD'),
    'Mutation.orderHeirsSearch': order(ORDER_FAMILIES.HEIRS, 'acceptance', ''),
    'Mutation.orderCompanyReport': order(ORDER_FAMILIES.COMPANY_REPORT, 'level', 'STANDARD'),
    'Mutation.orderNegativeRecordsCheck': fixed('NEGATIVE_RECORDS'),
    'Mutation.orderKycCheck': order(ORDER_FAMILIES.KYC, 'kind', ''),
    'Mutation.startCreditScoreMonitor': fixed('CREDIT_SCORE_MONITOR'),
    'Mutation.startKycMonitor': fixed('KYC_MONITOR'),
  },
  entities: {},
};
