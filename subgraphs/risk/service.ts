/**
 * The risk area's asynchronous requests: the kit's service (`runtime/tracking/service.ts`) over
 * risk's family table and state policy (`policy.ts`), plus the bureau delegation upload.
 * Settings: `RISK_*` of the env given (callback and file URL lifetimes, poller, relay guard, PDF
 * size limit), read once when the service is built.
 */
import type { SubgraphContext } from '../runtime/context.ts';
import { requestTopicOf, tenantTopicOf, TrackingService, type TrackingServiceOptions } from '../runtime/tracking/service.ts';
import { maxPdfBytes } from '../runtime/tracking/uploads.ts';
import { RISK_AREA } from './policy.ts';
import type { TrackedRequest } from './store.ts';
import { BUREAU_FAMILIES, type BureauFamilyName, type RiskFamilyName, type RiskRecordKind } from './upstream.ts';

export { fingerprintOf } from '../runtime/tracking/service.ts';

export type RiskServiceOptions = TrackingServiceOptions<RiskFamilyName>;

/** Topic of one request's changes. */
export const requestTopic = (tenant: string, id: string): string => requestTopicOf(RISK_AREA.name, tenant, id);
/** Topic of every change of a tenant's requests. */
export const tenantTopic = (tenant: string): string => tenantTopicOf(RISK_AREA.name, tenant);

export class RiskService extends TrackingService<RiskFamilyName, RiskRecordKind> {
  /** Largest PDF accepted (decoded bytes): `RISK_MAX_PDF_BYTES` of the env given. @default 5 MB */
  readonly maxPdfBytes: number;

  constructor(opts: RiskServiceOptions = {}) {
    super(RISK_AREA, opts);
    this.maxPdfBytes = maxPdfBytes(this.env, RISK_AREA.name);
  }

  /** Uploads the signed delegation of a bureau request (PATCH) of `family`: PROCESSING → IN_PROGRESS. */
  uploadDelegation(ctx: SubgraphContext, id: string, file: string, family: BureauFamilyName = 'PERSON_BUREAU'): Promise<TrackedRequest> {
    return this.upload(ctx, family, BUREAU_FAMILIES[family].upload, id, { signed_delegation_file: file });
  }
}
