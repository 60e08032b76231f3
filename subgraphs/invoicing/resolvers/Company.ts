/** The invoicing subgraph's part of `Company`: its invoicing configuration. */
import type { SubgraphContext } from '../../runtime/context.ts';
import { italianCodeShape } from '../../runtime/validate.ts';
import type { CompanyResolvers } from '../__generated__/resolvers-types.ts';
import type { InvoicingService } from '../service.ts';
import { asText, type Obj } from '../../../contract/values.ts';

/** Per request: the account's configurations, read once (free) for every company asked about. */
const configurationsByRequest = new WeakMap<SubgraphContext, Promise<Obj[]>>();

export function companyResolvers(service: InvoicingService): CompanyResolvers {
  return {
    __resolveReference: (ref) => ref,
    lookupCode: (c) => c.lookupCode,
    invoicingConfiguration: async (company, _a, ctx) => {
      // Only a VAT number or a fiscal code names a configuration (an Openapi id does not).
      if (italianCodeShape(company.lookupCode) === null) return null;
      let all = configurationsByRequest.get(ctx);
      if (!all) {
        all = service.configurations(ctx);
        configurationsByRequest.set(ctx, all);
      }
      return (await all).find((c) => asText(c.fiscal_id).toUpperCase() === company.lookupCode.toUpperCase()) ?? null;
    },
  };
}
