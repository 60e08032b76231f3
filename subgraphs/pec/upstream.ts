/**
 * The PEC area's REST endpoints (`pec.openapi.it`): the one table of paths and the words sent for
 * box types. Where the contract and the vendor spell an operation or a value differently, the
 * contract's word is the default and a deployment changes it here, or without code:
 *
 * - `PEC_PATHS`: JSON mapping endpoint names of `PEC_DEFAULT_PATHS` to other paths, e.g.
 *   `{"activate": "/pec/{id}/attivazione", "uploadDelegation": "/comunica_pec/{id}"}` (the vendor's);
 *   each path keeps the default's `{placeholders}` and the method stays the default's unless the
 *   value is `"PATCH /comunica_pec/{id}"` (a method, a space, the path).
 * - `PEC_BOX_TYPE_WORDS=vendor`: send `DOMICILIODIGITALE` / `PECMASSIVA` instead of the contract's
 *   `DIGITALDOMICILE` / `PECBULK`.
 *
 * Prices, rate limits and cost keys follow the path sent (ids as `{id}`, see `contract/prices.ts`).
 * Records are read in either spelling of states and box types (`model.ts`).
 */
import { pecProviderDomainsOf, type PecBoxFamily, type PecProviderDomains } from '../../contract/pec-domains.ts';
import type { FamilyTable } from '../runtime/tracking/policy.ts';
import type { Endpoint, HttpMethod } from '../upstream/endpoint.ts';
import { settingsOf, type SettingsSource } from '../../platform/settings.ts';

/** Paid or state-changing calls get a longer timeout (they are never retried). */
const WRITE_TIMEOUT = 30_000;

const ep = (method: HttpMethod, path: string, extra: Partial<Endpoint> = {}): Endpoint => ({
  area: 'pec',
  method,
  path,
  ...(method === 'GET' ? {} : { timeoutMs: WRITE_TIMEOUT }),
  ...extra,
});

/** The contract's paths (the defaults). */
export const PEC_DEFAULT_PATHS = {
  /** Availability of an address; cached briefly (it changes only when someone registers it). */
  availability: ep('GET', '/verifica_pec/{address}', { ttl: 30 }),
  /** Whether a domain is certified: the list changes rarely. The answer's `message` says it, so the whole body is read. */
  domain: ep('GET', '/domini_pec/{domain}', { ttl: 24 * 3600, decode: 'raw' }),
  list: ep('GET', '/pec'),
  register: ep('POST', '/pec'),
  get: ep('GET', '/pec/{id}'),
  revoke: ep('DELETE', '/pec/{id}'),
  activate: ep('PATCH', '/pec/{id}/activation'),
  activationForm: ep('GET', '/pec/{id}/modulo_attivazione', { timeoutMs: 60_000 }),
  preservationForm: ep('GET', '/pec/{id}/modulo_conservazione', { timeoutMs: 60_000 }),
  modify: ep('PATCH', '/pec/{id}/modifica'),
  preserve: ep('PATCH', '/pec/{id}/conservazione'),
  upgrade: ep('PATCH', '/pec/{id}/trasformazione'),
  /** A paid GET: never retried (a lost answer may have renewed). */
  renew: ep('GET', '/pec/{id}/rinnovo', { timeoutMs: WRITE_TIMEOUT }),
  addUser: ep('POST', '/pec/{id}/multiutenza'),
  noticeList: ep('GET', '/comunica_pec'),
  noticeCreate: ep('POST', '/comunica_pec'),
  noticeGet: ep('GET', '/comunica_pec/{id}'),
  uploadDelegation: ep('POST', '/comunica_pec/{id}/procura_registro_imprese'),
  delegationForm: ep('GET', '/comunica_pec/{id}/procura_registro_imprese', { timeoutMs: 60_000 }),
  /**
   * "Send and finalize the notification" (the contract): the same GET as the read (the vendor's),
   * sending a request whose delegation is in. Called with its own price (`PEC_FINALIZE_PRICE_KEY`;
   * never cached, joined or retried) and only by `finalizeCompanyRegisterNotification`; nothing else
   * reads a request by id unless the free list shows it is not in `documenti_caricati`
   * (`PecService.fetchRecord`).
   */
  finalizeNotice: ep('GET', '/comunica_pec/{id}', { timeoutMs: WRITE_TIMEOUT }),
} as const satisfies Record<string, Endpoint>;

export type PecEndpointName = keyof typeof PEC_DEFAULT_PATHS;
export type PecEndpoints = Record<PecEndpointName, Endpoint>;

/** The table with a deployment's `PEC_PATHS` applied; a bad value fails at start, naming it. */
export function pecEndpoints(env: SettingsSource): PecEndpoints {
  const out: PecEndpoints = { ...PEC_DEFAULT_PATHS };
  const raw = settingsOf(env).PEC_PATHS;
  if (!raw) return out;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new Error(`PEC_PATHS must be a JSON object: ${(err as Error).message}`, { cause: err });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('PEC_PATHS must be a JSON object of endpoint name → path');
  for (const [name, value] of Object.entries(parsed)) {
    const base = (PEC_DEFAULT_PATHS as Record<string, Endpoint>)[name];
    if (!base) throw new Error(`PEC_PATHS: unknown endpoint "${name}" (known: ${Object.keys(PEC_DEFAULT_PATHS).join(', ')})`);
    if (typeof value !== 'string') throw new Error(`PEC_PATHS: "${name}" must be a path`);
    const m = /^(?:(GET|POST|PATCH|PUT|DELETE)\s+)?(\/\S*)$/.exec(value.trim());
    if (!m) throw new Error(`PEC_PATHS: "${name}" must be "/path" or "METHOD /path"`);
    const want = [...base.path.matchAll(/\{(\w+)\}/g)]
      .map((x) => x[1])
      .sort()
      .join(',');
    const got = [...m[2].matchAll(/\{(\w+)\}/g)]
      .map((x) => x[1])
      .sort()
      .join(',');
    if (want !== got) throw new Error(`PEC_PATHS: "${name}" must keep the placeholders {${want}}`);
    const method = (m[1] as HttpMethod | undefined) ?? base.method;
    out[name as PecEndpointName] = { ...base, method, path: m[2], ...(method === 'GET' ? {} : { timeoutMs: WRITE_TIMEOUT }) };
  }
  return out;
}

/** Box types as the schema names them (the contract's words). */
export type BoxType = 'STANDARD' | 'BRONZE' | 'SILVER' | 'GOLD' | 'DIGITALDOMICILE' | 'PECBULK';

/** The word sent upstream for a box type: the contract's, or the vendor's with `PEC_BOX_TYPE_WORDS=vendor`. */
export function boxTypeWord(env: SettingsSource, t: BoxType): string {
  if (settingsOf(env).PEC_BOX_TYPE_WORDS !== 'vendor') return t;
  return t === 'DIGITALDOMICILE' ? 'DOMICILIODIGITALE' : t === 'PECBULK' ? 'PECMASSIVA' : t;
}

/**
 * The provider domains per box family (`contract/pec-domains.ts`: production's with
 * `OPENAPI_ENV=production`, else with the sandbox's test domain), or the deployment's
 * `PEC_PROVIDER_DOMAINS`: JSON of the families to change, e.g.
 * `{"standard": ["legalmail.it"], "PECBULK": ["pecmassiva.com"]}`. A bad value fails at start.
 */
export function providerDomains(source: SettingsSource): PecProviderDomains {
  const env = settingsOf(source);
  const base = pecProviderDomainsOf(env.OPENAPI_ENV);
  const raw = env.PEC_PROVIDER_DOMAINS;
  if (!raw) return base;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new Error(`PEC_PROVIDER_DOMAINS must be a JSON object: ${(err as Error).message}`, { cause: err });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('PEC_PROVIDER_DOMAINS must be a JSON object of box family → domains');
  const out: Record<PecBoxFamily, readonly string[]> = { ...base };
  for (const [family, domains] of Object.entries(parsed)) {
    if (!(family in base)) throw new Error(`PEC_PROVIDER_DOMAINS: unknown family "${family}" (known: ${Object.keys(base).join(', ')})`);
    if (!Array.isArray(domains) || domains.length === 0 || !domains.every((d) => typeof d === 'string' && /^[a-z0-9-]+(\.[a-z0-9-]+)+$/i.test(d))) {
      throw new Error(`PEC_PROVIDER_DOMAINS: "${family}" must be a non-empty list of domains`);
    }
    out[family as PecBoxFamily] = domains.map((d: string) => d.toLowerCase());
  }
  return out;
}

/** The tracked families: mailboxes and company-register notifications. */
export type PecFamily = 'MAILBOX' | 'NOTIFICATION';
/** The GraphQL types of their records. */
export type PecKind = 'Mailbox' | 'PecNotification';

export function familiesOf(eps: PecEndpoints): FamilyTable<PecFamily, PecKind> {
  return {
    MAILBOX: { family: 'MAILBOX', kind: 'Mailbox', create: eps.register, get: eps.get, list: eps.list, download: eps.activationForm, remove: eps.revoke },
    NOTIFICATION: { family: 'NOTIFICATION', kind: 'PecNotification', create: eps.noticeCreate, get: eps.noticeGet, list: eps.noticeList, download: eps.delegationForm },
  };
}

/** The default table's families (pricing, documentation). */
export const FAMILIES = familiesOf(PEC_DEFAULT_PATHS);
