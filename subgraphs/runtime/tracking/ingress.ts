/**
 * Upstream callback ingress and relay to the caller's own callback.
 *
 * Every piece of work the layer creates carries the upstream callback
 * `<public url>/callbacks/<area>/<key>.<expiry>.<hmac>`: `key` is a random reservation made before
 * the paid call, bound to the tenant, family and (once known) the request id, or to a configuration
 * (then every delivery names its own request, and is checked the same way). The gateway forwards
 * the delivery here. The area gives its name (URL and signature purpose), its id pattern and its
 * state policy (what names a delivery). Only the URL is authenticated, never the body: anyone holding the URL could post
 * any record to it. So a delivery is only a trigger. In this order:
 *
 * 1. the signature must verify and not have expired, before the body is even read (403);
 * 2. the key must be reserved (403);
 * 3. the body must name a request id of the area's pattern (400), the reserved one when the key is
 *    bound to a request (403);
 * 4. the layer reads that request upstream (free) with the token it was created with: the record
 *    applied, published and relayed is the one read, never the one posted; a request the upstream
 *    does not know for that token (or of another family, or carrying another key's callback) is
 *    refused (403), an upstream that fails gets 503 so the sender may retry;
 * 5. an unbound request key (the creation's answer was lost) is bound to the id;
 * 6. the record is applied; only then is the delivery (request id, state, last-change time) noted,
 *    and the same delivery again is refused as a replay (403).
 *
 * A replay is also refused early, before step 4: when the posted record's delivery (its id, state
 * and last-change time) is one already accepted under this key, the delivery is refused (403)
 * without re-reading upstream, so a replayed delivery costs no upstream call. The posted body is
 * not trusted to accept anything; using it to refuse is safe (a sender who alters it only skips
 * this shortcut and meets the check after the re-read).
 *
 * Payloads come as the vendor sends them (REFERENCE §1.4): JSON, or a form whose field (default
 * `data`) holds the JSON; the record is the body's `data` (a full envelope, `{data}`, or nested).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { deliverCallbackPayload, type DeliveryOptions } from '../../../contract/callback-delivery.ts';
import type { ReplayGuard, Signer } from '../../../platform/signing.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import { refuseTooLarge, sendJson } from '../../../platform/http.ts';
import { type StatePolicy } from './policy.ts';
import type { Agent } from 'undici';
import { guardedRelayAgent, relayRefusal } from './relay-guard.ts';
import type { RelayTarget, Reservation, TrackedStore } from './store.ts';
import { callbacks } from '../../../platform/metrics.ts';
import { isObj, type Obj } from '../../../contract/values.ts';

/** The signature purpose of an area's callback URLs. */
export const callbackPurpose = (area: string): string => `${area}-callback`;

/** What the ingress needs of an area. */
export interface IngressArea {
  name: string;
  idPattern: RegExp;
  policy: Pick<StatePolicy, 'stateOf' | 'timestampsOf' | 'versionOf'>;
  /** @see AreaSpec.isRecord */
  isRecord?(body: Obj): boolean;
}

/** A record as most areas deliver it: an id and a state (or status). */
const hasIdAndState = (body: Obj): boolean => typeof body.id === 'string' && body.id !== '' && (body.state !== undefined || body.status !== undefined);

/** Largest callback body accepted. */
const MAX_BODY = 2 * 1024 * 1024;

export class BodyTooLarge extends Error {}

/**
 * The whole body, or `BodyTooLarge` past `limit`. The request is not destroyed when the limit is
 * passed (a plain `for await` would destroy it, and its socket with it), so a 413 can still be sent.
 */
export async function readBody(req: IncomingMessage, limit = MAX_BODY): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req.iterator({ destroyOnReturn: false })) {
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

/** The record a callback body carries (`isRecord` says what one looks like), or null when there is none. */
export function recordOfPayload(contentType: string, raw: Buffer, isRecord: (body: Obj) => boolean = hasIdAndState): Obj | null {
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
    if (isRecord(body)) return body;
    body = body.data;
  }
  return null;
}

/** What identifies one delivery (id, state, last-change time, and the area's version if any): the same nonce twice is a replay. */
export function deliveryNonce(policy: IngressArea['policy'], record: Obj): string {
  const { updatedAt } = policy.timestampsOf(record);
  const base = `${String(record.id).toLowerCase()}|${policy.stateOf(record) ?? ''}|${updatedAt ?? ''}`;
  const version = policy.versionOf?.(record) ?? null;
  return version === null ? base : `${base}|${version}`;
}

/** The callback object of a relayed record, in the vendor's stored form. */
export const vendorCallback = (t: RelayTarget): Obj => ({ url: t.url, method: t.method, field: t.field, headers: { ...t.headers }, retry: t.retry });

/** A caller's callback as a record shows it to its caller (see `callbackView`). */
export interface CallbackView {
  url: string;
  method: 'JSON' | 'POST';
  field: string;
  /** Names with their values as the record holds them (the layer keeps them redacted). */
  headers: Array<{ name: string; value: string }>;
  retry: number;
}

/**
 * The callback object of a record (the vendor's form, `vendorCallback`) in the form every area's
 * schema shows; null when absent or without a URL. The layer's own callback never reaches a record
 * a caller reads (`TrackingService` puts the caller's in its place).
 */
export function callbackView(v: unknown): CallbackView | null {
  const url = isObj(v) && typeof v.url === 'string' ? v.url.trim() : '';
  if (!isObj(v) || url === '') return null;
  const method = typeof v.method === 'string' && v.method.toUpperCase() === 'POST' ? 'POST' : 'JSON';
  const headers = isObj(v.headers) ? Object.entries(v.headers).map(([name, value]) => ({ name, value: typeof value === 'string' ? value : JSON.stringify(value) })) : [];
  const field = (typeof v.field === 'string' ? v.field.trim() : '') || 'data';
  const retry = typeof v.retry === 'number' && Number.isInteger(v.retry) ? v.retry : typeof v.retry === 'string' ? Number.parseInt(v.retry, 10) || 0 : 0;
  return { url, method, field, headers, retry };
}

export interface RelayOptions extends DeliveryOptions {
  /** Deliver to loopback and private addresses too (`<AREA>_RELAY_ALLOW_PRIVATE=1`). @default false */
  allowPrivate?: boolean;
  /** Told why a relay was not attempted. */
  onRefused?: (reason: string) => void;
}

/**
 * Relays `payload` to the caller's own callback as the vendor would deliver it (JSON or form with
 * the JSON in `field`, the caller's headers, its retries). Unless `allowPrivate`, the host is
 * resolved first and a private address refuses the relay (null, `onRefused` told why): see
 * `relay-guard.ts` for the DNS-rebinding window this leaves. Resolves to the final status. Never throws.
 */
export async function relay(target: RelayTarget, payload: unknown, opts: RelayOptions = {}): Promise<number | null> {
  const { allowPrivate, onRefused, ...delivery } = opts;
  if (!allowPrivate) {
    const why = await relayRefusal(target.url);
    if (why !== null) {
      onRefused?.(why);
      return null;
    }
  }
  return deliverCallbackPayload(target, payload, {
    ...delivery,
    headers: { 'user-agent': 'openapi-supergraph-callback-relay', ...(delivery.headers ?? {}) },
    // The pre-check above refuses fast; the guarded agent re-checks the address it connects to
    // (no DNS-rebinding window).
    ...(allowPrivate ? {} : { dispatcher: (guardedAgent ??= guardedRelayAgent()) }),
  });
}

let guardedAgent: Agent | null = null;

/** Why a callback was refused (logged, never told to the sender beyond the status). */
export type Refusal = 'method' | 'signature' | 'unknown-key' | 'payload' | 'wrong-request' | 'unknown-request' | 'upstream' | 'replay';

export function refuse(res: ServerResponse, why: Refusal): void {
  if (why === 'method') sendJson(res, 405, { error: 'method not allowed' }, { allow: 'POST' });
  else if (why === 'payload') sendJson(res, 400, { error: 'no request record in the body' });
  else if (why === 'upstream') sendJson(res, 503, { error: 'the request could not be read upstream; retry later' }, { 'retry-after': '60' });
  else sendJson(res, 403, { error: 'forbidden' });
}

/** `decodeURIComponent`, or null for a malformed escape. */
export function safeDecode(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The reservation key named by a layer callback URL of `area` (signature valid, expired or not), else null. */
export function layerCallbackKey(signer: Signer, area: string, url: string): string | null {
  const m = new RegExp(`/callbacks/${escapeRe(area)}/([^/?#]+)`).exec(url);
  const token = m?.[1] ? safeDecode(m[1]) : null;
  if (!token) return null;
  const v = signer.verify(callbackPurpose(area), token);
  if (v.ok) return v.payload;
  if (v.reason !== 'expired') return null;
  return token.split('.')[0] ?? null;
}

/** Upstream answers that settle it: the request is not there for this token (no use retrying). */
export const isDefiniteRefusal = (err: unknown): boolean =>
  err instanceof UpstreamError && err.kind === 'http' && err.status >= 400 && err.status < 500 && err.status !== 408 && err.status !== 429;

export interface IngressDeps<F extends string = string> {
  area: IngressArea;
  signer: Signer;
  replay: ReplayGuard;
  store: TrackedStore<F>;
  /**
   * Reads the request upstream (free) with the reservation's token and family: the authoritative
   * record. Throws an `UpstreamError` when it cannot (a 4xx refusal means the request is not there).
   */
  reread(reservation: Reservation<F>, id: string): Promise<Obj>;
  /** Applies an accepted delivery (the record read upstream): updates the status store, publishes, relays. */
  accept(reservation: Reservation<F> & { id: string }, record: Obj): Promise<void>;
  /** Notes a refusal (for logs). */
  onRefused?(why: Refusal): void;
}

/** Serves `POST /callbacks/<token>` (the part after `/callbacks/` is `rest`). */
export async function handleCallback<F extends string>(req: IncomingMessage, res: ServerResponse, rest: string, deps: IngressDeps<F>): Promise<void> {
  const { area } = deps;
  const no = (why: Refusal): void => {
    // Whatever was sent is not read: discard it.
    if (!req.readableEnded) req.resume();
    deps.onRefused?.(why);
    callbacks.inc({ area: area.name, outcome: why });
    refuse(res, why);
  };
  if (req.method !== 'POST') return no('method');
  // The URL first: nothing of an unsigned delivery is read or parsed.
  const token = safeDecode(rest.split('/')[0] ?? '');
  if (token === null) return no('signature');
  const verified = deps.signer.verify(callbackPurpose(area.name), token);
  if (!verified.ok) return no('signature');
  const reservation = await deps.store.reservation(verified.payload);
  if (!reservation) return no('unknown-key');

  let raw: Buffer;
  try {
    raw = await readBody(req);
  } catch (err) {
    if (err instanceof BodyTooLarge) {
      callbacks.inc({ area: area.name, outcome: 'too-large' });
      refuseTooLarge(req, res);
      return;
    }
    throw err;
  }
  // The body only names the request; its content is not trusted.
  const posted = recordOfPayload(String(req.headers['content-type'] ?? ''), raw, area.isRecord);
  const id = posted ? String(posted.id).toLowerCase() : '';
  if (!area.idPattern.test(id)) return no('payload');
  if (reservation.id !== null && reservation.id !== id) return no('wrong-request');
  // A delivery already accepted under this key is refused before the re-read (no upstream call).
  if (posted && (await deps.replay.seen(reservation.key, deliveryNonce(area.policy, posted)))) return no('replay');

  let record: Obj;
  try {
    record = await deps.reread(reservation, id);
  } catch (err) {
    return no(isDefiniteRefusal(err) ? 'unknown-request' : 'upstream');
  }
  if (String(record.id).toLowerCase() !== id) return no('unknown-request');
  // A record that carries another of the layer's callback keys was not created under this one.
  const cb = record.callback;
  const recordKey = isObj(cb) && typeof cb.url === 'string' ? layerCallbackKey(deps.signer, area.name, cb.url) : null;
  if (recordKey !== null && recordKey !== reservation.key) return no('wrong-request');

  if (reservation.id === null && !reservation.config) {
    await deps.store.bindKey(reservation.key, id);
    const bound = await deps.store.reservation(reservation.key);
    if (bound && bound.id !== id) return no('wrong-request');
  }
  await deps.accept({ ...reservation, id }, record);
  // Noted only once applied: a delivery whose handling failed can be delivered again.
  if (!(await deps.replay.accept(reservation.key, deliveryNonce(area.policy, record), verified.expiresAt))) return no('replay');
  callbacks.inc({ area: area.name, outcome: 'accepted' });
  sendJson(res, 200, { ok: true });
}
