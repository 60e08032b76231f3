/**
 * Upstream callback ingress and relay to the caller's own callback.
 *
 * Every request the layer creates carries the upstream callback
 * `<public url>/callbacks/risk/<key>.<expiry>.<hmac>`: `key` is a random reservation made before the
 * paid call, bound to the tenant, family and (once known) the request id. The gateway forwards the
 * delivery here. It is accepted only when the signature verifies and has not expired, the key is
 * reserved, the payload is about the reserved request, and this delivery (request id, state,
 * last-change time) was not accepted before; anything else gets 403 and changes nothing.
 *
 * Payloads come as the vendor sends them (REFERENCE §1.4): JSON, or a form whose field (default
 * `data`) holds the JSON; the record is the body's `data` (a full envelope, `{data}`, or nested).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { deliverCallbackPayload, type DeliveryOptions } from '../upstream/callback-delivery.ts';
import type { ReplayGuard, Signer } from '../runtime/signing.ts';
import { sendJson } from './files.ts';
import { isObj, rawStateOf, timestampsOf, type Obj } from './model.ts';
import type { RelayTarget, Reservation, RequestStore } from './store.ts';

export const CALLBACK_PURPOSE = 'risk-callback';

/** Largest callback body accepted. */
const MAX_BODY = 2 * 1024 * 1024;

export class BodyTooLarge extends Error {}

export async function readBody(req: IncomingMessage, limit = MAX_BODY): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += b.length;
    if (size > limit) throw new BodyTooLarge('callback body too large');
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The record a callback body carries, or null when there is none. */
export function recordOfPayload(contentType: string, raw: Buffer): Obj | null {
  const text = raw.toString('utf8');
  let body: unknown;
  if (/application\/x-www-form-urlencoded/i.test(contentType)) {
    const form = new URLSearchParams(text);
    // The layer asks for field `data`; take any field that holds JSON otherwise.
    for (const value of [form.get('data'), ...form.values()]) {
      if (value === null) continue;
      body = parseJson(value);
      if (body !== undefined) break;
    }
  } else {
    body = parseJson(text);
  }
  // Unwrap `{data: …}` envelopes (sometimes nested) down to the record with an id.
  for (let depth = 0; depth < 4 && isObj(body); depth++) {
    if (typeof body.id === 'string' && body.id !== '' && (body.state !== undefined || body.status !== undefined)) return body;
    body = body.data;
  }
  return null;
}

/** What identifies one delivery: the same nonce twice is a replay. */
export function deliveryNonce(record: Obj): string {
  const { updatedAt } = timestampsOf(record);
  return `${String(record.id).toLowerCase()}|${rawStateOf(record) ?? ''}|${updatedAt ?? ''}`;
}

/** The callback object of a relayed record, in the vendor's stored form. */
export const vendorCallback = (t: RelayTarget): Obj => ({ url: t.url, method: t.method, field: t.field, headers: { ...t.headers }, retry: t.retry });

/**
 * Relays `payload` to the caller's own callback as the vendor would deliver it (JSON or form with
 * the JSON in `field`, the caller's headers, its retries). Resolves to the final status. Never throws.
 */
export const relay = (target: RelayTarget, payload: unknown, opts: DeliveryOptions = {}): Promise<number | null> =>
  deliverCallbackPayload(target, payload, { headers: { 'user-agent': 'openapi-supergraph-callback-relay' }, ...opts });

/** Why a callback was refused (logged, never told to the sender beyond the status). */
export type Refusal = 'method' | 'signature' | 'unknown-key' | 'payload' | 'wrong-request' | 'replay';

export function refuse(res: ServerResponse, why: Refusal): void {
  if (why === 'method') sendJson(res, 405, { error: 'method not allowed' }, { allow: 'POST' });
  else if (why === 'payload') sendJson(res, 400, { error: 'no request record in the body' });
  else sendJson(res, 403, { error: 'forbidden' });
}

export interface IngressDeps {
  signer: Signer;
  replay: ReplayGuard;
  store: RequestStore;
  /** Applies an accepted delivery: updates the status store, publishes, relays. */
  accept(reservation: Reservation & { id: string }, record: Obj): Promise<void>;
  /** Notes a refusal (for logs). */
  onRefused?(why: Refusal): void;
}

/** Serves `POST /callbacks/<token>` (the part after `/callbacks/` is `rest`). */
export async function handleCallback(req: IncomingMessage, res: ServerResponse, rest: string, deps: IngressDeps): Promise<void> {
  const no = (why: Refusal): void => {
    deps.onRefused?.(why);
    refuse(res, why);
  };
  if (req.method !== 'POST') {
    req.resume();
    no('method');
    return;
  }
  let raw: Buffer;
  try {
    raw = await readBody(req);
  } catch (err) {
    if (err instanceof BodyTooLarge) {
      sendJson(res, 413, { error: 'body too large' }, { connection: 'close' });
      return;
    }
    throw err;
  }
  const verified = deps.signer.verify(CALLBACK_PURPOSE, decodeURIComponent(rest.split('/')[0] ?? ''));
  if (!verified.ok) return no('signature');
  const reservation = await deps.store.reservation(verified.payload);
  if (!reservation) return no('unknown-key');
  const record = recordOfPayload(String(req.headers['content-type'] ?? ''), raw);
  if (!record) return no('payload');
  const id = String(record.id).toLowerCase();
  if (reservation.id !== null && reservation.id !== id) return no('wrong-request');
  if (!deps.replay.accept(reservation.key, deliveryNonce(record), verified.expiresAt)) return no('replay');
  if (reservation.id === null) await deps.store.bindKey(reservation.key, id);
  await deps.accept({ ...reservation, id }, record);
  sendJson(res, 200, { ok: true });
}
