/**
 * What an area tells the async-work kit about itself: its name (in callback and file URLs, topics
 * and logs), its table of families (which endpoints create, read, list, download and stop a
 * family's records, and which GraphQL type they are) and its state policy (how to read the state
 * and timestamps of a record, and what each state means for the kit).
 */
import type { Endpoint } from '../../upstream/endpoint.ts';
import type { Obj } from '../../../contract/values.ts';

/** The endpoints of one family of tracked work. */
export interface FamilyEndpoints<F extends string = string, K extends string = string> {
  family: F;
  /** Which GraphQL type its records are (the state policy may depend on it). */
  kind: K;
  create: Endpoint;
  get: Endpoint;
  list: Endpoint;
  /** The finished document (a PDF). */
  download?: Endpoint;
  /** Stops the work (monitors, mailboxes): such work runs long, and its callback URL lives long. */
  remove?: Endpoint;
  /** For families that share a list (and get) endpoint: the value of the records' `type`. */
  listType?: string;
}

export type FamilyTable<F extends string, K extends string> = Record<F, FamilyEndpoints<F, K>>;

/** How the kit reads an area's records. */
export interface StatePolicy<K extends string = string> {
  /** The upstream state as given (`processing`, `PENDING` …), or null. */
  stateOf(record: Obj): string | null;
  /** Creation and last-change times, Unix seconds. */
  timestampsOf(record: Obj): { createdAt: number | null; updatedAt: number | null };
  /** Nothing changes after this state: reservations end, the poller stops, subscriptions end. */
  isFinal(state: string | null | undefined): boolean;
  /** The work waits for the upstream (a late callback is worth a read). */
  awaitsUpstream(kind: K, state: string | null): boolean;
  /** A running monitor (worth an occasional read, in case a callback was lost). */
  isActiveMonitor(kind: K, state: string | null): boolean;
  /**
   * What a record says beyond its state and last-change time, for areas whose records change
   * without either moving (a company monitor's check: same state, a day-granular date, new
   * values). A different version is a change (published, relayed) and a different delivery (not a
   * replay). @default none: state and time alone decide
   */
  versionOf?(record: Obj): string | null;
}

/** Everything the kit needs to know of one area. */
export interface AreaSpec<F extends string, K extends string> {
  /** The area's name in URLs (`/callbacks/<name>/…`, `/files/<name>/…`), topics, env prefixes and logs. */
  name: string;
  families: FamilyTable<F, K>;
  policy: StatePolicy<K>;
  /** What a record id looks like (ids in callbacks that do not match are refused). */
  idPattern: RegExp;
  /**
   * Whether an object of a callback body is the area's record (the ingress unwraps envelopes down
   * to it). @default an object with a string `id` and a `state` or `status`
   */
  isRecord?(body: Obj): boolean;
}

/** The env prefix of an area's settings: `risk` → `RISK_`. */
export const envPrefix = (area: string): string => `${area.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_`;
