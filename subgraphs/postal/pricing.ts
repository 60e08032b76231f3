/**
 * The postal area's part of the cost estimate: each query by the endpoint it calls, and a
 * `Municipality` by the endpoints its selected fields need (worst case: nothing cached, the province
 * and region lists bought too).
 */
import { Kind, type SelectionSetNode } from 'graphql';
import { endpointPrice, type EntityPosition, type PricingTable } from '../runtime/pricing.ts';
import { POSTAL } from './upstream.ts';

const fixed = (price: number) => ({ euro: () => price });

/** The most distinct municipalities one postal code serves (24060, in Istat's list). */
export const MAX_MUNICIPALITIES_PER_POSTAL_CODE = 44;

/** `searchMunicipalities`' page size: its `limit` (1–50), 20 when not given. */
export const MAX_SEARCH_LIMIT = 50;
export const DEFAULT_SEARCH_LIMIT = 20;
const searchLimit = (limit: unknown): number => (typeof limit === 'number' ? Math.max(0, Math.min(MAX_SEARCH_LIMIT, limit)) : DEFAULT_SEARCH_LIMIT);

/** Field names selected directly on an entity (through fragments too). */
function selected(set: SelectionSetNode | undefined, at: EntityPosition, out = new Set<string>()): Set<string> {
  for (const sel of set?.selections ?? []) {
    if (sel.kind === Kind.FIELD) out.add(sel.name.value);
    else if (sel.kind === Kind.INLINE_FRAGMENT) selected(sel.selectionSet, at, out);
    else selected(at.fragments[sel.name.value]?.selectionSet, at, out);
  }
  return out;
}

/** Worst case for one municipality: identity search, `comuni_base` (+ lists for codes), `comuni_advance`. */
function municipalityPrice(at: EntityPosition): number {
  const f = selected(at.node.selectionSet, at);
  let euro = endpointPrice(POSTAL.search);
  if (f.has('province') || f.has('region') || f.has('postalCodes')) euro += endpointPrice(POSTAL.base);
  if (f.has('province')) euro += endpointPrice(POSTAL.provinces);
  if (f.has('region')) euro += endpointPrice(POSTAL.regions);
  if (f.has('details') || f.has('cadastralCode')) euro += endpointPrice(POSTAL.advance);
  return euro;
}

export const postalPricing: PricingTable = {
  fields: {
    'Query.postalCode': { euro: () => endpointPrice(POSTAL.cap), maxItems: () => 1 },
    // The most distinct municipalities one postal code serves (Istat's list: 24060 serves 44); the
    // hamlets of one municipality share its calls (cache and in-flight de-duplication).
    'PostalCodeArea.places': { maxItems: () => MAX_MUNICIPALITIES_PER_POSTAL_CODE },
    'Query.municipality': fixed(0),
    'Query.searchMunicipalities': { euro: () => endpointPrice(POSTAL.search), maxItems: (args) => searchLimit(args.limit) },
    'Query.completeMunicipality': {
      euro: () => endpointPrice(POSTAL.search),
      maxItems: (args) => (typeof args.limit === 'number' ? Math.max(0, Math.min(50, args.limit)) : 10),
    },
    'Query.regions': { euro: () => endpointPrice(POSTAL.regions), maxItems: () => 20 },
    'Query.provinces': { euro: () => endpointPrice(POSTAL.provinces), maxItems: () => 110 },
    'Query.province': { euro: () => endpointPrice(POSTAL.province) },
    'Query.metropolitanCities': { euro: () => endpointPrice(POSTAL.metroCities), maxItems: () => 14 },
    'Query.suppressedMunicipalities': { euro: () => endpointPrice(POSTAL.suppressed) },
    'Query.streetTypes': { euro: () => endpointPrice(POSTAL.streetTypes) },
  },
  entities: { Municipality: municipalityPrice },
};
