/** `CustomSignature`: a custom signature activated for a configuration. */
import type { CustomSignatureResolvers } from '../__generated__/resolvers-types.ts';
import { asText } from '../../../contract/values.ts';
import { iso, str } from './shared.ts';

export const CustomSignature: CustomSignatureResolvers = {
  id: (c) => asText(c.id),
  fiscalId: (c) => str(c.fiscal_id),
  type: (c) => str(c.type),
  user: (c) => str(c.username),
  active: (c) => (typeof c.active === 'boolean' ? c.active : null),
  createdAt: (c) => iso(c.created_at),
};
