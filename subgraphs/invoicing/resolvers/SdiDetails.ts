/** `SdiDetails`: what the exchange system (SdI) reported of an invoice. */
import type { SdiDetailsResolvers } from '../__generated__/resolvers-types.ts';
import type { SdiStatus } from '../__generated__/resolvers-types.ts';
import { SDI_STATUSES, str } from './shared.ts';

export const SdiDetails: SdiDetailsResolvers = {
  id: (d) => str(d.sdi_id),
  fileName: (d) => str(d.sdi_filename),
  status: (d) => {
    const s = str(d.sdi_status);
    return (s === null ? null : SDI_STATUSES.includes(s) ? s : 'RAW_UNKNOWN') as SdiStatus | null;
  },
  rawStatus: (d) => str(d.sdi_status),
  message: (d) => str(d.sdi_message),
  updatedAt: (d) => str(d.sdi_update_date),
  invoiceDate: (d) => str(d.invoice_date),
};
