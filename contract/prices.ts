/**
 * The one price table (euro per call). The layer's cost meter and the emulator's wallet both read it.
 *
 * Where the contract gives prices (authorization, bulk mail, postal codes) these are its base
 * prices. The contract does not show company and risk prices: those below are documented defaults,
 * chosen so that the tiers keep their real order (start < advanced < marketing/stakeholders < aml <
 * full). A deployment sets its own with `OPENAPI_PRICES` (a JSON file mapping keys to euro).
 *
 * Prices are per process: whoever starts the process's parts from an env (`startStack`, the
 * services, `services/build.ts`) calls `configurePrices(env)` once, and every reader of the table
 * in the process (the upstream client's cost meter, the gateway's estimate, the emulator's wallet)
 * sees that table. Nothing here reads `process.env`: without `configurePrices` the built-in table
 * holds. Two stacks in one process with different `OPENAPI_PRICES` would share the last one
 * configured (a warning says so); run them as separate processes.
 *
 * Keys are `"<area> <METHOD> <endpoint>"`, where endpoint is the first path segment
 * (e.g. `company GET IT-start`). A key with `*` as method matches every method.
 */
import { readFileSync } from 'node:fs';
import type { Area } from './areas.ts';

const DEFAULT_PRICES: Record<string, number> = {
  // company: Italy
  'company GET IT-start': 0.05,
  'company GET IT-name': 0.02,
  'company GET IT-address': 0.03,
  'company GET IT-pec': 0.03,
  'company GET IT-sdicode': 0.03,
  'company GET IT-closed': 0.02,
  'company GET IT-vatgroup': 0.02,
  'company GET IT-splitpayment': 0.02,
  'company GET IT-pa': 0.02,
  'company GET IT-legalforms': 0,
  'company GET IT-shareholders': 0.2,
  'company GET IT-ubo': 0.9,
  'company GET IT-advanced': 0.15,
  'company * IT-marketing': 0.5,
  'company * IT-stakeholders': 0.5,
  'company * IT-aml': 0.9,
  'company * IT-full': 1.5,
  'company GET IT-check_id': 0,
  'company GET IT-search': 0.01,
  // company: Europe and worldwide
  'company GET EU-start': 0.01,
  'company GET FR-search': 0.01,
  'company GET WW-start': 0.3,
  'company GET WW-advanced': 0.6,
  'company GET WW-top': 1.2,
  'company POST monitor': 0.1,
  'company GET monitor': 0,
  'company DELETE monitor': 0,
  // risk: credit scores and checks
  'risk GET IT-creditscore-start': 0.5,
  'risk GET IT-creditscore-advanced': 1,
  'risk GET IT-creditscore-top': 3,
  'risk * IT-verifica_cf': 0.05,
  // risk: asynchronous families (creation is paid; reading, listing and downloading are free)
  'risk POST IT-bureau-persona': 9,
  'risk PATCH IT-bureau-persona': 0,
  'risk POST IT-crif-azienda': 12,
  'risk PATCH IT-crif-azienda': 0,
  'risk POST IT-patrimoniale-persona': 15,
  'risk POST IT-patrimoniale-persona-top': 25,
  'risk POST IT-patrimoniale-persona-top-supervisionato': 35,
  'risk POST IT-report-persona': 10,
  'risk POST IT-report-persona-top': 20,
  'risk POST IT-eredi-con-accettazione': 20,
  'risk POST IT-eredi-senza-accettazione': 20,
  'risk POST IT-report-azienda': 5,
  'risk POST IT-report-azienda-top': 10,
  'risk POST IT-negativita': 3,
  'risk POST WW-kyc-full': 2,
  'risk POST WW-kyc-pep': 0.8,
  'risk POST WW-kyc-sanction_list': 0.8,
  'risk POST WW-kyc-adverse_media': 0.8,
  'risk POST IT-creditscore-top-monitor': 0.5,
  'risk POST WW-kyc-full-monitor': 1,
  // authorization (contract prices)
  'oauth * tokens': 0.001,
  'oauth * subscriptions': 0.001,
  'oauth * errors': 0.001,
  'oauth * scopes': 0.001,
  'oauth * wallet': 0.001,
  'oauth * callbacks': 0.001,
  'oauth * stats': 0.001,
  // bulk certified mail (contract prices)
  'pecmassiva POST send': 0.05,
  'pecmassiva POST threads': 0.05,
  'pecmassiva PATCH threads': 0.05,
  'pecmassiva * send': 0.001,
  'pecmassiva * inbox': 0.001,
  'pecmassiva * quota': 0.001,
  'pecmassiva * threads': 0.001,
  'pecmassiva * cron-start': 0.001,
  // certified mailboxes (PEC): prices not shown by the contract; documented defaults (OPENAPI_PRICES
  // overrides). Reads, lists, uploads and form downloads are free; keys on the whole path (ids as
  // {id}) price the operations that share the `pec` segment.
  'pec GET verifica_pec': 0.001,
  'pec GET domini_pec': 0.001,
  'pec POST pec': 5,
  'pec DELETE pec/{id}': 0,
  'pec GET pec/{id}/rinnovo': 5,
  'pec PATCH pec/{id}/modifica': 2,
  'pec PATCH pec/{id}/conservazione': 10,
  'pec PATCH pec/{id}/trasformazione': 3,
  'pec POST pec/{id}/multiutenza': 1,
  'pec POST comunica_pec': 10,
  'pec POST comunica_pec/{id}/procura_registro_imprese': 0,
  // A notification's read is free; its finalize, the contract's "send and finalize" on the same
  // GET, has its own key (PEC_FINALIZE_PRICE_KEY: one path cannot price both).
  'pec GET comunica_pec/{id}': 0,
  'pec GET comunica_pec/{id} finalize': 0,
  // postal codes (contract base prices)
  'cap GET regioni': 0.01,
  'cap GET province': 0.01,
  'cap GET provincia': 0.01,
  'cap GET citta_metropolitane': 0.01,
  'cap GET comuni_soppressi': 0.01,
  'cap GET dug': 0.01,
  'cap GET cap': 0.04,
  'cap GET comuni_base': 0.04,
  'cap GET comuni_advance': 0.05,
  'cap GET cerca_comuni': 0.001,
  // invoicing (contract prices, pay-as-you-go; `INVOICE_SUBSCRIPTION_PRICES` has the subscription
  // ones). Charged on submission, cancellation and return. Configurations: the first
  // `INVOICE_CONFIGURATIONS_INCLUDED` of an account are free, each further one costs
  // `invoice extra-configuration`; a custom signature adds `invoice custom-signature` to a submission.
  'invoice POST api_configurations': 0,
  'invoice POST IT-configurations': 0,
  'invoice * extra-configuration': 1,
  'invoice POST IT-invoices': 0.154,
  'invoice POST WW-invoices': 0.09,
  'invoice POST IT-receipts': 0.019,
  'invoice PATCH IT-receipts': 0.019,
  'invoice DELETE IT-receipts': 0.019,
  'invoice * custom-signature': 0.045,
};

/** Configurations an invoicing account has without charge (contract, Limits); each further one is priced. */
export const INVOICE_CONFIGURATIONS_INCLUDED = 10;

/**
 * The invoicing prices with an annual subscription (the contract's "from" prices). Charged only
 * while the account's subscription is active and has requests left; past it (or without one) the
 * same call costs the pay-as-you-go price. So no table prices by them: an account is known to
 * have one only through the account pre-check (`OPENAPI_PRECHECK=on`, which prices a covered call
 * at its subscription's price per request), and `OPENAPI_PRICE_PLAN=subscription` keeps the higher
 * of the two prices (`loadPrices`), so estimates and budgets never under-count.
 */
export const INVOICE_SUBSCRIPTION_PRICES: Readonly<Record<string, number>> = Object.freeze({
  'invoice POST IT-invoices': 0.049,
  'invoice POST WW-invoices': 0.017,
  'invoice POST IT-receipts': 0.009,
  'invoice PATCH IT-receipts': 0.009,
  'invoice DELETE IT-receipts': 0.009,
  'invoice * custom-signature': 0.013,
});

/** Country start/advanced endpoints share one price each. */
for (const c of ['FR', 'DE', 'ES', 'PT', 'GB', 'BE', 'AT', 'CH', 'PL']) {
  DEFAULT_PRICES[`company GET ${c}-start`] = 0.1;
  DEFAULT_PRICES[`company GET ${c}-advanced`] = 0.3;
}

/** A price table: euro by `"<area> <METHOD> <endpoint>"` (or `"<area> * <endpoint>"`). */
export type PriceTable = Readonly<Record<string, number>>;

/** The settings `loadPrices` reads (an env such as `startStack({ env })` is given). */
export interface PriceSettings {
  /** Path of a JSON file of prices that replace or add to the built-in ones. */
  OPENAPI_PRICES?: string | null | undefined;
  /**
   * `subscription`: the account has (or had) an invoicing subscription. Its prices
   * (`INVOICE_SUBSCRIPTION_PRICES`) are not taken on trust: an account whose subscription is not
   * active (expired, used up, never bought) pays about three times more, so each invoicing price
   * stays the higher of the two; the lower one is applied per call when the account pre-check
   * (`OPENAPI_PRECHECK=on`) sees an active subscription covering it. An `OPENAPI_PRICES` file
   * still wins. @default payg
   */
  OPENAPI_PRICE_PLAN?: string | null | undefined;
}

/** The built-in table. */
export const DEFAULT_PRICE_TABLE: PriceTable = Object.freeze({ ...DEFAULT_PRICES });

/**
 * The built-in table (under `OPENAPI_PRICE_PLAN=subscription` each invoicing price the higher of
 * pay-as-you-go and subscription) and the overrides of the `OPENAPI_PRICES` file of `env`, if any; throws on a bad file or plan.
 */
export function loadPrices(env: PriceSettings): PriceTable {
  const file = env.OPENAPI_PRICES?.trim();
  const plan = (env.OPENAPI_PRICE_PLAN ?? '').trim().toLowerCase() || 'payg';
  if (plan !== 'payg' && plan !== 'subscription') throw new Error(`OPENAPI_PRICE_PLAN must be payg or subscription (got "${env.OPENAPI_PRICE_PLAN}")`);
  // The higher of the two prices: a subscription not known to be active is no discount.
  const base: Record<string, number> =
    plan === 'subscription'
      ? { ...DEFAULT_PRICES, ...Object.fromEntries(Object.entries(INVOICE_SUBSCRIPTION_PRICES).map(([k, v]) => [k, Math.max(v, DEFAULT_PRICES[k] ?? 0)])) }
      : DEFAULT_PRICES;
  if (!file) return plan === 'subscription' ? Object.freeze(base) : DEFAULT_PRICE_TABLE;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`OPENAPI_PRICES: cannot read "${file}" as JSON: ${(err as Error).message}`, { cause: err });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`OPENAPI_PRICES: "${file}" must hold a JSON object of prices`);
  const out: Record<string, number> = { ...base };
  for (const [k, v] of Object.entries(parsed)) {
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) out[k] = v;
    else throw new Error(`OPENAPI_PRICES: price of "${k}" must be a non-negative number`);
  }
  return Object.freeze(out);
}

let current: PriceTable = DEFAULT_PRICE_TABLE;
/** The `OPENAPI_PRICES` file `current` came from; null for the built-in table. */
let currentFile: string | null = null;

const sameTable = (a: PriceTable, b: PriceTable): boolean => {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
};

/**
 * Sets the process's price table from `env` (its `OPENAPI_PRICES` file, else the built-in table)
 * and returns it. Called by whatever starts the layer or the emulator from an env; calling it again
 * with the same prices changes nothing. Throws on a bad file, leaving the table as it was.
 */
export function configurePrices(env: PriceSettings): PriceTable {
  const table = loadPrices(env);
  const file = env.OPENAPI_PRICES?.trim() || null;
  if (sameTable(table, current)) {
    currentFile = file;
    return current;
  }
  if (currentFile !== null) {
    console.warn(
      `[prices] prices are per process: ${file ? `OPENAPI_PRICES=${file}` : 'the built-in table'} replaces OPENAPI_PRICES=${currentFile} for every part of this process`,
    );
  }
  current = table;
  currentFile = file;
  return current;
}

/** The first path segment, which names the endpoint (`/IT-start/123` → `IT-start`). */
export const endpointOf = (path: string): string => path.replace(/^\/+/, '').split(/[/?]/)[0] ?? '';

/**
 * Euro for one successful call, from the process's table (or the one given); 0 for calls the table
 * does not price (reads of own records, polls).
 */
export function priceOf(area: Area, method: string, path: string, table: PriceTable = current): number {
  const ep = endpointOf(path);
  const route = routeOf(path);
  const m = method.toUpperCase();
  if (route !== ep) {
    const specific = table[`${area} ${m} ${route}`] ?? table[`${area} * ${route}`];
    if (specific !== undefined) return specific;
  }
  return table[`${area} ${m} ${ep}`] ?? table[`${area} * ${ep}`] ?? 0;
}

/**
 * The whole path as a price key, ids replaced by `{id}` (`/pec/6040…0e/rinnovo` and the template
 * `/pec/{id}/rinnovo` both give `pec/{id}/rinnovo`): for areas whose paid operations share a first
 * segment with free ones (PEC: reading a mailbox is free, renewing it is paid). A key on the whole
 * path wins over the first segment's.
 */
export const routeOf = (path: string): string =>
  path
    .replace(/^\/+/, '')
    .split('?')[0]
    .split('/')
    .filter((s) => s !== '')
    .map((s) => (/^\{\w+\}$|^[0-9a-f]{24}$|^\d+$/i.test(s) ? '{id}' : s))
    .join('/');

/** Euro of a named charge of an area that is no endpoint (`invoice extra-configuration`), from the process's table. */
export const surchargeOf = (area: Area, name: string, table: PriceTable = current): number => table[`${area} * ${name}`] ?? 0;

/**
 * Euro of a named charge on a call an active subscription pays for: the subscription covers the
 * endpoint's price, not the charge, which is still due on top at its subscription price (a custom
 * signature: 0.013 instead of 0.045; never more than the table's).
 */
export function subscribedSurchargeOf(area: Area, name: string, table: PriceTable = current): number {
  const listed = surchargeOf(area, name, table);
  const subscribed = INVOICE_SUBSCRIPTION_PRICES[`${area} * ${name}`];
  return subscribed === undefined ? listed : Math.min(listed, subscribed);
}

/**
 * The price key of a company-register notification's finalize (`GET /comunica_pec/{id}` on an
 * uploaded notification sends it; the same GET otherwise reads, free): read by `namedPriceOf`.
 */
export const PEC_FINALIZE_PRICE_KEY = 'pec GET comunica_pec/{id} finalize';

/** Euro of a price key that is no path of its own (`PEC_FINALIZE_PRICE_KEY`), from the process's table; 0 when absent. */
export const namedPriceOf = (key: string, table: PriceTable = current): number => table[key] ?? 0;

/** The process's whole table, for documentation, the emulator and the bench. */
export const priceTable = (): PriceTable => current;

// ---------------------------------------------------------------------------------------------
// Free tiers

/** The period a free tier counts over: a calendar day, month or year, Italian time. */
export type FreePeriod = 'day' | 'month' | 'year';

/** Calls of one endpoint an account makes free of charge per period. */
export interface FreeTier {
  period: FreePeriod;
  calls: number;
}

/**
 * The contract's free tiers (Limits, "Per-request prices and free tiers"), keyed like the prices
 * (`"<area> <METHOD> <endpoint>"`, or `*` for every method). Each method of an endpoint counts on
 * its own (the vendor's counters are per scope, `METHOD:host/endpoint`). A call is free when every
 * tier of its endpoint still has room (POST /tokens: within 150 this month and 1,500 this year).
 */
const FREE_TIERS: Readonly<Record<string, readonly FreeTier[]>> = {
  'oauth POST tokens': [
    { period: 'month', calls: 150 },
    { period: 'year', calls: 1500 },
  ],
  'oauth * tokens': [{ period: 'day', calls: 1440 }],
  'oauth * subscriptions': [{ period: 'day', calls: 1440 }],
  'oauth * errors': [{ period: 'day', calls: 1440 }],
  'oauth * scopes': [{ period: 'day', calls: 1440 }],
  'oauth * wallet': [{ period: 'day', calls: 1440 }],
  'oauth * callbacks': [{ period: 'day', calls: 1440 }],
  'oauth * stats': [{ period: 'day', calls: 1440 }],
  'pecmassiva * send': [{ period: 'day', calls: 1440 }],
  'pecmassiva * threads': [{ period: 'day', calls: 1440 }],
  'pecmassiva * inbox': [{ period: 'day', calls: 1440 }],
  'pecmassiva * quota': [{ period: 'day', calls: 1440 }],
  'pecmassiva * cron-start': [{ period: 'day', calls: 1440 }],
  'cap GET regioni': [{ period: 'month', calls: 10000 }],
  'cap GET province': [{ period: 'month', calls: 10000 }],
  'cap GET provincia': [{ period: 'month', calls: 10000 }],
  'cap GET citta_metropolitane': [{ period: 'month', calls: 10000 }],
  'cap GET comuni_soppressi': [{ period: 'month', calls: 10000 }],
  'cap GET dug': [{ period: 'month', calls: 44640 }],
  'cap GET cerca_comuni': [{ period: 'day', calls: 1440 }],
};

/** The free tiers of one call's endpoint and the key its use is counted under (`cap GET cerca_comuni`); null without one. */
export function freeTierOf(area: Area, method: string, path: string): { key: string; tiers: readonly FreeTier[] } | null {
  const ep = endpointOf(path);
  const m = method.toUpperCase();
  const tiers = FREE_TIERS[`${area} ${m} ${ep}`] ?? FREE_TIERS[`${area} * ${ep}`];
  return tiers ? { key: `${area} ${m} ${ep}`, tiers } : null;
}

/** Calendar day, month and year of `ms` in Italy, as `YYYY-MM-DD`, `YYYY-MM`, `YYYY`. */
const ROME_DAY = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Rome', year: 'numeric', month: '2-digit', day: '2-digit' });
/**
 * Italy's day of each UTC hour seen lately: Rome's offset from UTC is a whole number of hours (CET,
 * CEST) and changes on the hour, so the day is the same through a UTC hour. Formatting a date in a
 * time zone costs more than the paid call's whole bookkeeping otherwise (it ran several times per call).
 */
const romeDayOfHour = new Map<number, string>();
const HOUR_MS = 3_600_000;
function romeDay(ms: number): string {
  const hour = Math.floor(ms / HOUR_MS);
  let day = romeDayOfHour.get(hour);
  if (day === undefined) {
    if (romeDayOfHour.size >= 64) romeDayOfHour.clear();
    romeDayOfHour.set(hour, (day = ROME_DAY.format(new Date(hour * HOUR_MS))));
  }
  return day;
}
export function periodOf(period: FreePeriod, ms: number): string {
  const day = romeDay(ms);
  return period === 'day' ? day : period === 'month' ? day.slice(0, 7) : day.slice(0, 4);
}
