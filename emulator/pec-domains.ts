/**
 * The PEC areas' domains (`pec/` registers and checks them, `pecmassiva/` sends to them): the
 * provider's own domains per box family (where `POST /pec` registers addresses and
 * `GET /verifica_pec` checks them) and the certified-domain list `GET /domini_pec`
 * answers from (the contract: "one of over 250,000 certified domains").
 *
 * The list is generated deterministically on first use: the well-known providers' domains, then
 * 250,000 company domains of the form `pec.<name>.it` / `<name>.pec.it` / `<name>-pec.it`, so a
 * lookup is a real set lookup over a list of realistic size (a few MB, built in well under a second).
 */
import { PEC_SANDBOX_PROVIDER_DOMAINS as PEC_PROVIDER_DOMAINS } from '../contract/pec-domains.ts';

/** Box types as the vendor spells them (`DOMICILIODIGITALE`, `PECMASSIVA`). */
export const STANDARD_FAMILY = ['STANDARD', 'BRONZE', 'SILVER', 'GOLD'] as const;
export type VendorBoxType = (typeof STANDARD_FAMILY)[number] | 'DOMICILIODIGITALE' | 'PECMASSIVA';

/** Both spellings (the contract's `DIGITALDOMICILE`, `PECBULK`; the vendor's) → the vendor's; case-insensitive. */
export function vendorBoxType(value: unknown): VendorBoxType | null {
  if (typeof value !== 'string') return null;
  const v = value.trim().toUpperCase();
  if ((STANDARD_FAMILY as readonly string[]).includes(v)) return v as VendorBoxType;
  if (v === 'DOMICILIODIGITALE' || v === 'DIGITALDOMICILE') return 'DOMICILIODIGITALE';
  if (v === 'PECMASSIVA' || v === 'PECBULK') return 'PECMASSIVA';
  return null;
}

export const isStandardFamily = (t: VendorBoxType): boolean => (STANDARD_FAMILY as readonly string[]).includes(t);

/** The provider's domains, per family (`contract/pec-domains.ts`, the sandbox's: the layer's default against the emulator), in the vendor's words. */
export const PROVIDER_DOMAINS: Record<'standard' | 'DOMICILIODIGITALE' | 'PECMASSIVA', readonly string[]> = {
  standard: PEC_PROVIDER_DOMAINS.standard,
  DOMICILIODIGITALE: PEC_PROVIDER_DOMAINS.DIGITALDOMICILE,
  PECMASSIVA: PEC_PROVIDER_DOMAINS.PECBULK,
};

/** The provider domains a box type's addresses must use. */
export const domainsOf = (t: VendorBoxType): readonly string[] => (isStandardFamily(t) ? PROVIDER_DOMAINS.standard : PROVIDER_DOMAINS[t as 'DOMICILIODIGITALE' | 'PECMASSIVA']);

/** A full PEC address `<box>@<domain>`: local part of letters, digits, `.`, `_`, `-` (3–64), a dotted domain. */
export const ADDRESS = /^([a-z0-9](?:[a-z0-9._-]{1,62})[a-z0-9])@([a-z0-9-]+(?:\.[a-z0-9-]+)+)$/i;

/** Well-known certified-mail providers' domains (part of the list). */
const PROVIDERS = [
  'legalmail.it',
  'pec.it',
  'arubapec.it',
  'postacert.it',
  'pec.aruba.it',
  'cert.legalmail.it',
  'pecveneto.it',
  'registerpec.it',
  'ingpec.eu',
  'pec.libero.it',
  'postecert.it',
  'cgn.legalmail.it',
  'pec.cgn.it',
  'pec.commercialisti.it',
  'pec.avvocati.it',
  'pec.notariato.it',
  'pec.ordineingegneri.it',
  'legalmail.com',
  'pec.sicurezzapostale.it',
  'actaliscertymail.it',
  'pecmassiva.com',
  'domiciliodigitale.legalmail.it',
  'testcert.legalmail.it',
];

const SYLLABLES = ['al', 'ba', 'ce', 'di', 'fo', 'ga', 'li', 'ma', 'no', 'pa', 're', 'sa', 'to', 'vi', 'ze', 'ro', 'mi', 'lu', 'ne', 'co'];
const SHAPES = [(n: string) => `pec.${n}.it`, (n: string) => `${n}.pec.it`, (n: string) => `${n}-pec.it`, (n: string) => `pec.${n}.com`];

/** How many company domains the generated list holds. */
export const GENERATED_DOMAINS = 250_000;

let list: Set<string> | null = null;

/** The certified-domain list (built once, on first use). */
export function certifiedDomains(): ReadonlySet<string> {
  if (list) return list;
  const out = new Set<string>(PROVIDERS);
  for (let i = 0; out.size < PROVIDERS.length + GENERATED_DOMAINS; i++) {
    // Four syllables from the index, then the index in base 36 to keep names distinct.
    let n = i;
    let name = '';
    for (let k = 0; k < 4; k++) {
      name += SYLLABLES[n % SYLLABLES.length];
      n = Math.floor(n / SYLLABLES.length);
    }
    out.add(SHAPES[i % SHAPES.length](`${name}${(i % 97).toString(36)}`));
  }
  list = out;
  return list;
}

/** Whether a domain (or an address's domain) is certified: in the list, or a subdomain of a provider's. */
export function isCertifiedDomain(domainOrAddress: string): boolean {
  const d = domainOrAddress.trim().toLowerCase().replace(/^.*@/, '');
  if (certifiedDomains().has(d)) return true;
  return PROVIDERS.some((p) => d.endsWith(`.${p}`));
}
