/**
 * The postal-code area's REST endpoints (`cap.openapi.it`): the one table of paths, and the shapes
 * the vendor spec gives (REFERENCE §6). `/provincia` and `/dug` are the contract's; no public source
 * shows them, so their parameters and shapes are this project's design (see `emulator/cap/`).
 *
 * Every answer is public reference data (the same for every account), so every endpoint is
 * `publicData`: one cache entry serves every tenant, for days. Municipalities, postal codes and
 * provinces change a few times a year (mergers take effect on 1 January), so a stale day costs
 * nothing worse than an address completed with last week's list.
 */
import { defineEndpoints, type Endpoint } from '../upstream/endpoint.ts';

/** Seconds a postal answer stays cached (shared by every tenant): three days. */
export const POSTAL_TTL = 3 * 24 * 3600;

const get = (path: string): Endpoint => ({ area: 'cap', method: 'GET', path, ttl: POSTAL_TTL, publicData: true });

export const POSTAL = defineEndpoints({
  /** Search (`comune`, `cap`, `istat`, `codice_catasto`, `regione`, `provincia`, combinable): €0.001, 1,440 free a day. */
  search: get('/cerca_comuni'),
  /** Region, province (name) and postal codes of a municipality by Istat code: €0.04. */
  base: get('/comuni_base/{istat}'),
  /** Everything known of a municipality, cadastral code included: €0.05. */
  advance: get('/comuni_advance/{istat}'),
  /** Municipalities with one postal code: €0.04. */
  cap: get('/cap/{cap}'),
  regions: get('/regioni'),
  provinces: get('/province'),
  province: get('/province/{code}'),
  /** The contract's `/provincia`: provinces, optionally of one region (`regione`). */
  provincesOf: get('/provincia'),
  metroCities: get('/citta_metropolitane'),
  suppressed: get('/comuni_soppressi'),
  streetTypes: get('/dug'),
});

/** A `cerca_comuni` item. Istat codes come without leading zeros (`58091`). */
export interface SearchItem {
  istat: string | number;
  comune: string;
  suppressed?: boolean;
}

export interface BaseInfo {
  istat: string | number;
  comune: string;
  regione?: string;
  provincia?: string;
  cap?: string[];
}

export interface AdvanceInfo extends BaseInfo {
  cod_fisco?: string | number | null;
  sigla_provincia?: string;
  prefisso?: string;
  num_residenti?: number;
  superficie?: number;
  nome_abitanti?: string;
  email?: string;
  pec?: string;
  tel?: string;
  frazioni?: string[];
  istat_old?: string | null;
  patrono?: { nome?: string; data?: string } | null;
  municipio?: { municipio?: string } | null;
  fax?: string;
}

export interface CapInfo {
  /** The towns (their province follows from their Istat code: the vendor gives one for the code only). */
  comuni: Array<{ istat: string | number; comune: string; frazione?: string | null; comune_istat?: string | number }>;
  provincia?: string;
  sigla_provincia?: string;
  regione?: string;
}

export interface RegionInfo {
  regione: string;
  capoluogo?: string;
  num_residenti?: number;
  num_comuni?: number;
  num_province?: number;
  superficie?: number;
  istat?: string | number;
  presidente?: string;
  cod_fiscale?: string;
  /** '' when the region has no VAT number (the spec's example). */
  piva?: string;
  pec?: string;
  sito?: string;
  sede?: string;
}

export interface ProvinceInfo {
  sigla: string;
  provincia: string;
  residenti?: number;
  num_comuni?: number;
  superficie?: number;
  istat?: string | number;
  regione?: string;
}

export interface MetroCityInfo {
  denominazione: string;
  capoluogo?: string;
  popolazione?: number;
  superficie?: number;
  densita?: number;
  num_comuni?: number;
}

export interface SuppressedInfo {
  istat?: string | number | null;
  comune: string;
  cod_fisco?: string | number | null;
  sigla_provincia?: string;
  regione?: string;
  provincia?: string;
}

/** A 6-digit Istat code from the vendor's form (`58091`, 58091) or null (`contract/istat.ts`). */
export { istat6 } from '../../contract/istat.ts';
