/**
 * Which provider domains serve which PEC box types (the contract: STANDARD, BRONZE, SILVER and GOLD
 * addresses are in the standard provider domain, DIGITALDOMICILE ones in the digital-domicile
 * provider domain, PECBULK ones in the bulk provider domain). Neither the contract nor the vendor's
 * `domini_pec` names them per type: these are the vendor's example domains (`legalmail.it`, the
 * sandbox's `testcert.legalmail.it`, `domiciliodigitale.legalmail.it`, `pecmassiva.com`). The
 * emulator registers addresses in them; the layer refuses a registration whose domain does not serve
 * its box type before any paid call (`PEC_PROVIDER_DOMAINS` changes the table per deployment).
 * Nothing here imports the layer or the emulator.
 */

/** The box families as the contract names them. */
export type PecBoxFamily = 'standard' | 'DIGITALDOMICILE' | 'PECBULK';

export type PecProviderDomains = Readonly<Record<PecBoxFamily, readonly string[]>>;

export const PEC_PROVIDER_DOMAINS: PecProviderDomains = {
  standard: ['legalmail.it', 'testcert.legalmail.it'],
  DIGITALDOMICILE: ['domiciliodigitale.legalmail.it'],
  PECBULK: ['pecmassiva.com'],
};

/** The family of a box type in either spelling (`DOMICILIODIGITALE`, `PECMASSIVA` too); null when unknown. */
export function pecBoxFamily(boxType: string): PecBoxFamily | null {
  const t = boxType.trim().toUpperCase();
  if (t === 'STANDARD' || t === 'BRONZE' || t === 'SILVER' || t === 'GOLD') return 'standard';
  if (t === 'DIGITALDOMICILE' || t === 'DOMICILIODIGITALE') return 'DIGITALDOMICILE';
  if (t === 'PECBULK' || t === 'PECMASSIVA') return 'PECBULK';
  return null;
}
