/** The risk area's callback ingress and relays: the kit's (`runtime/tracking/ingress.ts`) under `/callbacks/risk/`. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Signer } from '../../platform/signing.ts';
import {
  callbackPurpose,
  deliveryNonce as kitDeliveryNonce,
  handleCallback as kitHandleCallback,
  layerCallbackKey as kitLayerCallbackKey,
  type IngressDeps,
} from '../runtime/tracking/ingress.ts';
import { RISK_AREA } from './policy.ts';
import type { RiskFamilyName } from './upstream.ts';
import type { Obj } from '../../contract/values.ts';

export {
  BodyTooLarge,
  isDefiniteRefusal,
  readBody,
  recordOfPayload,
  refuse,
  relay,
  safeDecode,
  vendorCallback,
  type RelayOptions,
  type Refusal,
} from '../runtime/tracking/ingress.ts';

export const CALLBACK_PURPOSE = callbackPurpose(RISK_AREA.name);

export const deliveryNonce = (record: Obj): string => kitDeliveryNonce(RISK_AREA.policy, record);

export const layerCallbackKey = (signer: Signer, url: string): string | null => kitLayerCallbackKey(signer, RISK_AREA.name, url);

/** Serves `POST /callbacks/<token>` of the risk area. */
export const handleCallback = (req: IncomingMessage, res: ServerResponse, rest: string, deps: Omit<IngressDeps<RiskFamilyName>, 'area'>): Promise<void> =>
  kitHandleCallback(req, res, rest, { area: RISK_AREA, ...deps });
