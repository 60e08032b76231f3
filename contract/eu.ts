/**
 * The European Union's member states, as the suite's areas need them: the EU VAT registry (VIES) by
 * country, and the EU origin of goods in electronic invoices (FatturaPA). Countries go by ISO 3166
 * code; VAT numbers write Greece `EL` (its ISO code is `GR`). Northern Ireland (`XI`) is not a
 * member state but stays inside the EU's VAT rules for goods, so VIES and VAT ids know it too.
 */

/** The member states by ISO 3166 code (Greece `GR`). */
export const EU_MEMBER_STATES = [
  'AT',
  'BE',
  'BG',
  'CY',
  'CZ',
  'DE',
  'DK',
  'EE',
  'ES',
  'FI',
  'FR',
  'GR',
  'HR',
  'HU',
  'IE',
  'IT',
  'LT',
  'LU',
  'LV',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SE',
  'SI',
  'SK',
] as const;

/** Northern Ireland: outside the EU, inside its VAT rules for goods (VAT ids `XI…`, listed in VIES). */
export const NORTHERN_IRELAND = 'XI';

/** Where the EU's VAT rules for goods apply, by ISO code: the member states and Northern Ireland. */
export const EU_VAT_COUNTRIES: readonly string[] = [...EU_MEMBER_STATES, NORTHERN_IRELAND];

/** The prefix of a VAT number of an EU VAT country given by ISO code: the ISO code, except Greece (`EL`). */
export const vatPrefixOf = (country: string): string => (country === 'GR' ? 'EL' : country);

/** The ISO 3166-1 code of a VAT prefix (VIES answers Greece's as `EL`). */
export const countryOfVatPrefix = (prefix: string): string => (prefix.toUpperCase() === 'EL' ? 'GR' : prefix.toUpperCase());
