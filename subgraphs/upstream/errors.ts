/**
 * Typed upstream failures. Every way a REST call can fail ends as an `UpstreamError` that keeps the
 * HTTP status and the upstream error number; `graphqlCode` maps it to the stable
 * `extensions.code` that clients switch on.
 */
import type { Area } from '../../contract/areas.ts';

export type UpstreamErrorKind =
  /** the REST suite answered with an error envelope or an error status */
  | 'http'
  /** no answer within the endpoint's timeout */
  | 'timeout'
  /** connection refused, reset, DNS… */
  | 'network'
  /** a 2xx answer whose body is not a known envelope */
  | 'decode'
  /** the slow-request flow (302 → IT-check_id) did not finish within its budget */
  | 'pending';

export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';
  constructor(
    readonly kind: UpstreamErrorKind,
    message: string,
    readonly area: Area,
    readonly endpoint: string,
    /** HTTP status; 0 when no answer arrived. */
    readonly status: number,
    /** The upstream `error` number of the envelope, when there is one. */
    readonly upstreamCode: number | null = null,
    /** Seconds to wait, from `Retry-After`. */
    readonly retryAfter: number | null = null,
  ) {
    super(message);
  }

  /**
   * Euro that a paid call which got no answer (timeout, reset) may have cost: the upstream may have
   * carried it out and charged. 0 when the outcome is known. Set by the upstream client.
   */
  atRisk = 0;

  /** Whether a paid call may have been carried out (and charged) although no answer arrived. */
  get outcomeUnknown(): boolean {
    return this.atRisk > 0;
  }

  /**
   * Set by the upstream client when this call was not sent because the same purchase was sent
   * before and got no answer (it may have been carried out): its outcome is unknown too.
   */
  markedUnknown = false;

  /** Set by the upstream client when the request never left (no connection was made). */
  neverSent = false;

  /** The stable GraphQL `extensions.code` for this failure (ARCHITECTURE "Errors"). */
  get graphqlCode(): string {
    if (this.kind === 'timeout') return 'UPSTREAM_TIMEOUT';
    if (this.kind === 'network' || this.kind === 'decode') return 'UPSTREAM_UNAVAILABLE';
    if (this.kind === 'pending') return 'UPSTREAM_PENDING';
    switch (this.status) {
      case 204:
      case 404:
        return 'UPSTREAM_NOT_FOUND';
      case 400:
      case 406:
      case 422:
      case 428:
        return 'UPSTREAM_REJECTED';
      case 401:
        return 'UNAUTHENTICATED';
      case 402:
        return 'PAYMENT_REQUIRED';
      case 403:
        return 'FORBIDDEN';
      case 429:
        return 'RATE_LIMITED';
      case 408:
      case 504:
        return 'UPSTREAM_TIMEOUT';
      default:
        return this.status >= 500 || this.status === 412 || this.status === 417 ? 'UPSTREAM_UNAVAILABLE' : 'UPSTREAM_ERROR';
    }
  }

  /** Whether a retry of an idempotent call may succeed. */
  get retryable(): boolean {
    if (this.kind === 'network' || this.kind === 'timeout') return true;
    return this.kind === 'http' && (this.status === 429 || this.status === 502 || this.status === 503 || this.status === 504 || this.status === 500);
  }
}

/**
 * Whether a failed call may have been carried out upstream all the same (and so charged, and a
 * record created): sent and unanswered (timeout, connection lost), a 502 or 504 (a proxy in front
 * of the service lost the answer), or a 2xx whose body could not be read. A refusal before sending
 * (bad input, a budget, no token, no connection) or an error answer of the service itself created
 * nothing. The one rule for metering money at risk and for keeping idempotency keys and callback
 * reservations.
 */
export function mayHaveBeenCarriedOut(err: unknown): boolean {
  if (!(err instanceof UpstreamError)) return false;
  if (err.atRisk > 0) return true;
  switch (err.kind) {
    case 'timeout':
      return true;
    case 'network':
      return !err.neverSent;
    case 'decode':
      return err.status >= 200 && err.status < 300;
    case 'http':
      return err.status === 502 || err.status === 504;
    default:
      return false;
  }
}

/** A call's answer, or null when the upstream says there is none (404, or 204 with no content). */
export async function orNull<T>(p: Promise<T>): Promise<T | null> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof UpstreamError && (err.status === 404 || err.status === 204)) return null;
    throw err;
  }
}
