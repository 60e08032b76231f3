/** What the postal resolvers pass down as parents (mapped onto the GraphQL types by codegen). */

/** A municipality as far as it is known; missing facts are read (and paid) only when selected. */
export interface MunicipalityParent {
  /** The reference another subgraph gave (see `lookupCode` in the schema). */
  lookupCode?: string;
  istatCode?: string;
  cadastralCode?: string;
  name?: string;
  suppressed?: boolean;
}

/** A postal code's places: the municipality (by Istat code and name) and the hamlet, if any. */
export interface PostalCodePlaceParent {
  municipality: MunicipalityParent;
  hamlet: string | null;
}
