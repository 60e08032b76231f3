/** Every area's pricing table, for the gateway's cost estimate (`gateway/estimate.ts`). */
import { companyPricing } from './company/pricing.ts';
import { riskPricing } from './risk/pricing.ts';
import { invoicingPricing } from './invoicing/pricing.ts';
import { pecPricing } from './pec/pricing.ts';
import { postalPricing } from './postal/pricing.ts';
import { accountPricing } from './account/pricing.ts';
import { mergePricing, type PricingTable } from './runtime/pricing.ts';

export const PRICING: PricingTable = mergePricing([companyPricing, riskPricing, postalPricing, pecPricing, invoicingPricing, accountPricing]);
