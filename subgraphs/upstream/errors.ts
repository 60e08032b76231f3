/**
 * Typed upstream failures. Every way a REST call can fail ends as an `UpstreamError` that keeps the
 * HTTP status and the upstream error number; `graphqlCode` maps it to the stable
 * `extensions.code` that clients switch on.
 */
import type { Area } from '../../emulator/core.ts';

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
