/**
 * The one price table (euro per call). The layer's cost meter and the emulator's wallet both read it.
 *
 * Where the contract gives prices (authorization, bulk mail, postal codes) these are its base
 * prices. The contract does not show company and risk prices: those below are documented defaults,
 * chosen so that the tiers keep their real order (start < advanced < marketing/stakeholders < aml <
 * full). A deployment sets its own with `OPENAPI_PRICES` (a JSON file mapping keys to euro).
 *
 * Keys are `"<area> <METHOD> <endpoint>"`, where endpoint is the first path segment
 * (e.g. `company GET IT-start`). A key with `*` as method matches every method.
 */
import { readFileSync } from 'node:fs';
import type { Area } from '../../emulator/core.ts';

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
};

/** Country start/advanced endpoints share one price each. */
for (const c of ['FR', 'DE', 'ES', 'PT', 'GB', 'BE', 'AT', 'CH', 'PL']) {
  DEFAULT_PRICES[`company GET ${c}-start`] = 0.1;
  DEFAULT_PRICES[`company GET ${c}-advanced`] = 0.3;
}

function loadOverrides(): Record<string, number> {
  const file = process.env.OPENAPI_PRICES;
  if (!file) return {};
  const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(parsed as Record<string, unknown>)) {
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) out[k] = v;
    else throw new Error(`OPENAPI_PRICES: price of "${k}" must be a non-negative number`);
  }
  return out;
}

const TABLE: Record<string, number> = { ...DEFAULT_PRICES, ...loadOverrides() };

/** The first path segment, which names the endpoint (`/IT-start/123` → `IT-start`). */
export const endpointOf = (path: string): string => path.replace(/^\/+/, '').split(/[/?]/)[0] ?? '';

/** Euro for one successful call; 0 for calls the table does not price (reads of own records, polls). */
export function priceOf(area: Area, method: string, path: string): number {
  const ep = endpointOf(path);
  return TABLE[`${area} ${method.toUpperCase()} ${ep}`] ?? TABLE[`${area} * ${ep}`] ?? 0;
}

/** The whole table, for documentation and the bench. */
export const priceTable = (): Readonly<Record<string, number>> => TABLE;
