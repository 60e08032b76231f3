/**
 * The postal area's part of the cost estimate: each query by the endpoint it calls, and a
 * `Municipality` by the endpoints its selected fields need (worst case: nothing cached, the province
 * and region lists bought too).
 */
import { Kind, type SelectionSetNode } from 'graphql';
import { endpointPrice, type EntityPosition, type PricingTable } from '../runtime/pricing.ts';
import { POSTAL } from './upstream.ts';

const fixed = (price: number) => ({ euro: () => price });

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
    'PostalCodeArea.places': { maxItems: (_a, _p, assumed) => assumed },
    'Query.municipality': fixed(0),
    'Query.searchMunicipalities': { euro: () => endpointPrice(POSTAL.search) },
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
