/**
 * How any subgraph's Italian address names its municipality for the postal subgraph: a
 * `Municipality` reference by `lookupCode` (the postal subgraph owns the type and resolves it).
 * One place, so every address type of the supergraph names municipalities the same way.
 */

/** What an address may know of its municipality. */
export interface AddressPlace {
  /** Cadastral (Belfiore) code, e.g. `H501`. */
  townCode?: string | null;
  /** Municipality name, any case. */
  town?: string | null;
  /** Province code (`RM`), as a string or a coded value. */
  province?: string | { code?: string | null } | null;
}

const CADASTRAL = /^[A-Za-z]\d{3}$/;

/**
 * The reference: `{lookupCode: "H501"}` from a cadastral code, else `"ROMA@RM"` from the town and
 * its two-letter province code; null when the address names no Italian municipality.
 */
export function municipalityRef(a: AddressPlace | null | undefined): { lookupCode: string } | null {
  if (!a) return null;
  const code = a.townCode?.trim();
  if (code && CADASTRAL.test(code)) return { lookupCode: code.toUpperCase() };
  const town = a.town?.trim();
  if (!town) return null;
  const p = typeof a.province === 'string' ? a.province : a.province?.code;
  const province = p?.trim().toUpperCase();
  // Without a two-letter province code the place is not an Italian one (a foreign residence, say).
  return province && /^[A-Z]{2}$/.test(province) ? { lookupCode: `${town}@${province}` } : null;
}
