/**
 * One REST endpoint as the upstream client needs to know it. Each area keeps its endpoints in one
 * table (`subgraphs/<area>/upstream.ts`), so a deployment can change a path in one place.
 */
import type { Area } from '../../contract/areas.ts';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface Endpoint {
  area: Area;
  method: HttpMethod;
  /** Path template with `{name}` placeholders, e.g. `/IT-start/{id}`; values are URL-encoded. */
  path: string;
  /** Seconds a successful GET answer stays in the per-tenant cache. @default 0 (not cached) */
  ttl?: number;
  /**
   * The answer is public reference data, the same for every account (postal codes, municipalities):
   * its cache entry is shared by every tenant instead of kept per tenant, so one tenant's purchase
   * answers the others. Only for endpoints whose answer depends on nothing but the request.
   * @default false
   */
  publicData?: boolean;
  /**
   * How the call authenticates: the caller's or the service's bearer token (every service area), or
   * HTTP Basic with the account's e-mail and API key (`OPENAPI_EMAIL`, `OPENAPI_APIKEY`: the
   * authorization area).
   * @default 'bearer'
   */
  auth?: 'bearer' | 'basic';
  /** Per-attempt timeout in milliseconds. @default 10000 */
  timeoutMs?: number;
  /**
   * The endpoint may answer 302 + `Location` + `Retry-After` with a PENDING body and the dataset
   * arrives by polling `IT-check_id/{id}` (IT-full, IT-aml, IT-marketing, IT-stakeholders).
   * @default false
   */
  slow?: boolean;
  /**
   * How the answer is decoded: `envelope` (the `{data,success,message,error}` family, data returned),
   * `raw` (the whole JSON body, for bodies whose payload sits outside `data`, such as dry runs).
   * @default 'envelope'
   */
  decode?: 'envelope' | 'raw';
  /**
   * Request headers this endpoint needs beyond the usual ones, e.g. the `Content-Type` by which
   * `GET /WW-kyc-evidences/{id}/{entity_id}` chooses JSON, a PDF or a JPEG. They win over the
   * client's own `accept` / `content-type`, never over `authorization`.
   * @default none
   */
  headers?: Readonly<Record<string, string>>;
  /**
   * Path parameters that are credentials (a token's value in `/tokens/{token}`): sent upstream,
   * never shown. Cost calls, warnings and log lines name such a call by its template
   * (`/tokens/{token}`, see `shownPath`). @default none
   */
  secretParams?: readonly string[];
}

export const defineEndpoints = <T extends Record<string, Endpoint>>(table: T): T => table;

/** Fills `{name}` placeholders; a missing value is a programming error. */
export function fillPath(template: string, params: Record<string, string> = {}): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = params[name];
    if (v === undefined) throw new Error(`missing path parameter ${name} for ${template}`);
    return encodeURIComponent(v);
  });
}

/**
 * The path of a call as it may be shown (cost calls, warnings, logs): the filled path, with the
 * endpoint's `secretParams` put back as their `{name}` placeholders. A path that does not match
 * the template is shown as the template.
 */
export function shownPath(ep: Endpoint, path: string): string {
  if (!ep.secretParams?.length) return path;
  const source = ep.path
    .split(/(\{\w+\})/)
    .map((part) => {
      const m = /^\{(\w+)\}$/.exec(part);
      if (!m) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      return '([^/]*)';
    })
    .join('');
  const match = new RegExp(`^${source}$`).exec(path);
  if (!match) return ep.path;
  let i = 0;
  return ep.path.replace(/\{(\w+)\}/g, (placeholder, name: string) => {
    const value = match[++i] ?? '';
    return ep.secretParams!.includes(name) ? placeholder : value;
  });
}
