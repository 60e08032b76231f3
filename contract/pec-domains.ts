/**
 * Which provider domains serve which PEC box types (the contract: STANDARD, BRONZE, SILVER and GOLD
 * addresses are in the standard provider domain, DIGITALDOMICILE ones in the digital-domicile
 * provider domain, PECBULK ones in the bulk provider domain). Neither the contract nor the vendor's
 * `domini_pec` names them per type: these are the vendor's example domains (`legalmail.it`,
 * `domiciliodigitale.legalmail.it`, `pecmassiva.com`; the sandbox's `testcert.legalmail.it` only in
 * the sandbox's and the emulator's defaults). The
 * emulator registers addresses in them; the layer refuses a registration whose domain does not serve
 * its box type before any paid call (`PEC_PROVIDER_DOMAINS` changes the table per deployment).
 * Nothing here imports the layer or the emulator.
 */

/** The box families as the contract names them. */
export type PecBoxFamily = 'standard' | 'DIGITALDOMICILE' | 'PECBULK';

export type PecProviderDomains = Readonly<Record<PecBoxFamily, readonly string[]>>;

/** Production's provider domains (`OPENAPI_ENV=production`). */
export const PEC_PROVIDER_DOMAINS: PecProviderDomains = {
  standard: ['legalmail.it'],
  DIGITALDOMICILE: ['domiciliodigitale.legalmail.it'],
  PECBULK: ['pecmassiva.com'],
};

/** The sandbox's and the emulator's: production's plus the sandbox's test domain `testcert.legalmail.it`. */
export const PEC_SANDBOX_PROVIDER_DOMAINS: PecProviderDomains = {
  ...PEC_PROVIDER_DOMAINS,
  standard: [...PEC_PROVIDER_DOMAINS.standard, 'testcert.legalmail.it'],
};

/** The default table of an environment (`OPENAPI_ENV`: emulator, sandbox, production; emulator when unset). */
export const pecProviderDomainsOf = (openapiEnv: string | undefined): PecProviderDomains =>
  openapiEnv?.trim().toLowerCase() === 'production' ? PEC_PROVIDER_DOMAINS : PEC_SANDBOX_PROVIDER_DOMAINS;

/** The family of a box type in either spelling (`DOMICILIODIGITALE`, `PECMASSIVA` too); null when unknown. */
export function pecBoxFamily(boxType: string): PecBoxFamily | null {
  const t = boxType.trim().toUpperCase();
  if (t === 'STANDARD' || t === 'BRONZE' || t === 'SILVER' || t === 'GOLD') return 'standard';
  if (t === 'DIGITALDOMICILE' || t === 'DOMICILIODIGITALE') return 'DIGITALDOMICILE';
  if (t === 'PECBULK' || t === 'PECMASSIVA') return 'PECBULK';
  return null;
}
