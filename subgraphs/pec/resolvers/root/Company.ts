/** The PEC subgraph's part of `Company`: its certified mail address, and whether the address's domain is certified. */
import type { CompanyResolvers } from '../../__generated__/resolvers-types.ts';
import type { PecService } from '../../service.ts';

export function companyResolvers(service: PecService): CompanyResolvers {
  return {
    __resolveReference: (ref) => ref,
    lookupCode: (company) => company.lookupCode,
    certifiedMail: async (company, _args, ctx) => {
      const address = typeof company.pec === 'string' ? company.pec.trim().toLowerCase() : '';
      const domain = address.includes('@') ? address.slice(address.lastIndexOf('@') + 1) : '';
      if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(domain)) return null;
      const { certified } = await ctx.once(`pec:domain:${domain}`, () => service.domainCertified(ctx, domain));
      return { address, domain, certifiedDomain: certified };
    },
  };
}
