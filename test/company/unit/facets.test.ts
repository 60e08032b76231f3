/**
 * The company subgraph's cheapest-endpoint logic: facet tables, tier choice, and what a GraphQL
 * operation buys (executed against the real subgraph schema with a fake upstream that answers with
 * the vendor spec's examples and records every call).
 */
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import { createRequire } from 'node:module';
import type * as GraphQLModule from 'graphql';
import type { GraphQLSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import type { SubgraphContext } from '../../../subgraphs/runtime/context.ts';
import type { CallOptions, UpstreamClient } from '../../../subgraphs/upstream/client.ts';
import { CostMeter } from '../../../subgraphs/upstream/cost.ts';
import { fillPath, type Endpoint } from '../../../subgraphs/upstream/endpoint.ts';
import { UpstreamError } from '../../../subgraphs/upstream/errors.ts';
import { endpointOf, priceOf } from '../../../contract/prices.ts';
import {
  cheapestEndpoint,
  FACETS,
  facetOfPath,
  facetsForPaths,
  FIELD_FACETS,
  planPurchase,
  SOURCE_COVERAGE,
  SOURCES,
  TIER_COVERAGE,
  TIERS,
  tierPrice,
  type Facet,
} from '../../../subgraphs/company/facets.ts';
import { vendorData, vendorExampleKeys } from '../../../subgraphs/company/fixtures/examples.ts';
import { companySubgraph } from '../../../subgraphs/company/index.ts';
import { undescribed } from '../../support/schema.ts';
import { searchEnrichment } from '../../../subgraphs/company/resolvers/search.ts';
import { nextTurn } from '../../support/wait.ts';

// @apollo/subgraph loads graphql's CommonJS build; vitest would give this file the ESM one (two
// instances of graphql cannot share a schema), so execute with the instance @apollo/subgraph uses.
const { getNamedType, graphql, isInterfaceType, isObjectType } = createRequire(import.meta.url)('graphql') as typeof GraphQLModule;

const VAT = '12485671007'; // OPENAPI S.P.A., the company of the vendor's examples
const HOLDING = '16935371001'; // OPEN HOLDING S.R.L., its sole owner

// ---------------------------------------------------------------------------------------------
// Fake upstream: the spec's example of each endpoint, re-keyed to the identifier asked for
// ---------------------------------------------------------------------------------------------

const EXAMPLE_OF: Record<string, string> = {
  'IT-start': 'GET /IT-start/{vatCode_taxCode_or_id}',
  'IT-advanced': 'GET /IT-advanced/{vatCode_taxCode_or_id}',
  'IT-marketing': 'GET /IT-marketing/{vatCode_or_taxCode} #synchronous',
  'IT-stakeholders': 'GET /IT-stakeholders/{vatCode_or_taxCode} #synchronous',
  'IT-aml': 'GET /IT-aml/{vatCode_or_taxCode} #synchronous',
  'IT-full': 'GET /IT-full/{vatCode_or_taxCode} #synchronous',
  'IT-legalforms': 'GET /IT-legalforms',
  'IT-name': 'GET /IT-name/{vatCode_taxCode_or_id}',
  'IT-address': 'GET /IT-address/{vatCode_taxCode_or_id}',
  'IT-pec': 'GET /IT-pec/{vatCode_taxCode_or_id}',
  'IT-sdicode': 'GET /IT-sdicode/{vatCode_taxCode_or_id}',
  'IT-vatgroup': 'GET /IT-vatgroup/{vatCode_or_id} #without taxCode',
};

const FOREIGN_EXAMPLES = vendorExampleKeys().filter((k) => /^GET \/(EU|FR|DE|ES|PT|GB|BE|AT|CH|PL|WW)-(start|advanced|top)\//.test(k));

interface Call {
  endpoint: string;
  path: string;
  query: CallOptions['query'];
  euro: number;
}

class FakeUpstream {
  readonly calls: Call[] = [];
  notFound = new Set<string>();

  async call<T = unknown>(_ctx: unknown, ep: Endpoint, opts: CallOptions = {}): Promise<T> {
    const path = fillPath(ep.path, opts.params);
    const endpoint = endpointOf(path);
    this.calls.push({ endpoint, path, query: opts.query, euro: priceOf(ep.area, ep.method, path) });
    await nextTurn(); // answers on a later turn of the event loop, as the network does
    const ident = opts.params?.id ?? '';
    if (this.notFound.has(ident)) throw new UpstreamError('http', 'no company matches', 'company', endpoint, 404, 302);
    if (endpoint === 'IT-search') {
      const e = opts.query?.dataEnrichment;
      return vendorData(`GET /IT-search #${e === 'start' ? 'Start' : e === 'advanced' ? 'Advanced' : 'NoEnrichment'}`) as T;
    }
    if (endpoint === 'FR-search') {
      if (opts.query?.dryRun === 1) return { count: 1234, cost: 12.34, success: true } as T;
      const e = opts.query?.dataEnrichment;
      return vendorData(`GET /FR-search #${e === 'start' ? 'Start' : e === 'advanced' ? 'Advanced' : 'NoEnrichment'}`) as T;
    }
    if (endpoint === 'monitor') {
      if (ep.method === 'POST') return vendorData('POST /monitor') as T;
      if (ep.method === 'DELETE') return [] as T;
      return vendorData(opts.params?.id ? 'GET /monitor/{id}' : 'GET /monitor') as T;
    }
    const key = EXAMPLE_OF[endpoint] ?? FOREIGN_EXAMPLES.find((k) => k.startsWith(`GET /${endpoint}/`));
    if (!key) throw new Error(`fake upstream: no example for ${endpoint}`);
    const data = vendorData(key);
    return rekey(data, ident) as T;
  }

  /** The fake has no cache: every tier is bought. */
  async isCached(): Promise<boolean> {
    return false;
  }
}

/** The example made to describe the company asked for (VAT/tax code, or id). */
function rekey(data: unknown, ident: string): unknown {
  const setIds = (o: Record<string, unknown>): void => {
    if (/^[0-9a-f]{24}$/.test(ident)) o.id = ident;
    else if (ident) {
      o.vatCode = ident;
      o.taxCode = ident;
    }
  };
  if (Array.isArray(data)) data.forEach((r) => r && typeof r === 'object' && setIds(r as Record<string, unknown>));
  else if (data && typeof data === 'object') {
    const details = (data as { companyDetails?: Record<string, unknown> }).companyDetails;
    if (details && !/^[0-9a-f]{24}$/.test(ident)) setIds(details);
  }
  return data;
}

interface Run {
  data: Record<string, unknown> | null | undefined;
  errors: readonly { message: string; extensions?: Record<string, unknown> }[] | undefined;
  calls: Call[];
}

let schema: GraphQLSchema | undefined;
const getSchema = (): GraphQLSchema =>
  (schema ??= buildSubgraphSchema({
    typeDefs: companySubgraph.typeDefs,
    resolvers: companySubgraph.resolvers as GraphQLResolverMap<unknown>,
  }));

async function run(source: string, variableValues?: Record<string, unknown>, fake = new FakeUpstream()): Promise<Run> {
  const memo = new Map<string, unknown>();
  const ctx: SubgraphContext = {
    auth: { token: 't', tenant: 'tenant' },
    meter: new CostMeter(),
    upstream: fake as unknown as UpstreamClient,
    once<T>(key: string, make: () => T): T {
      if (!memo.has(key)) memo.set(key, make());
      return memo.get(key) as T;
    },
  };
  const res = await graphql({ schema: getSchema(), source, contextValue: ctx, variableValues });
  return {
    data: res.data,
    errors: res.errors?.map((e) => ({ message: e.message, extensions: e.extensions })),
    calls: fake.calls,
  };
}

const endpoints = (r: Run): string[] => r.calls.map((c) => c.endpoint);

// ---------------------------------------------------------------------------------------------
// Tables
// ---------------------------------------------------------------------------------------------

describe('company facet tables', () => {
  it('map every field of Company (schema) to a facet', () => {
    const company = getSchema().getType('Company');
    if (!isObjectType(company)) throw new Error('no Company type');
    // The key known without a purchase, and the fields bought from their own endpoint when asked
    // (resolvers/sources.ts), need no facet.
    const own = ['lookupCode', 'beneficialOwners', 'publicAdministration', 'splitPayment', 'isCeased', 'vatGroupTaxCodeCheck'];
    for (const field of Object.keys(company.getFields())) {
      if (own.includes(field)) expect(facetOfPath(field), field).toBeNull();
      else expect(facetOfPath(field), field).not.toBeNull();
    }
  });

  it('list only paths that exist in the schema', () => {
    const s = getSchema();
    for (const path of Object.keys(FIELD_FACETS)) {
      let type = s.getType('Company');
      for (const seg of path.split('.')) {
        // an interface: look the segment up in its implementations
        const holders = isObjectType(type) ? [type] : isInterfaceType(type) ? s.getPossibleTypes(type) : [];
        const field = holders.map((t) => t.getFields()[seg]).find((f) => f !== undefined);
        expect(field, `${path} (${seg})`).toBeDefined();
        type = field ? getNamedType(field.type) : undefined;
      }
    }
  });

  it('cover every facet by at least one source, IT-full by all but the start/advanced-only and single-purpose ones', () => {
    for (const f of FACETS)
      expect(
        SOURCES.some((s) => SOURCE_COVERAGE[s].has(f)),
        f,
      ).toBe(true);
    // Only IT-pec holds the PEC history.
    expect(FACETS.filter((f) => !TIERS.some((t) => TIER_COVERAGE[t].has(f)))).toEqual(['pecHistory']);
    const notInFull = FACETS.filter((f) => !TIER_COVERAGE['IT-full'].has(f));
    expect(notInFull.sort()).toEqual(
      [
        'addressDetail',
        'ateco2025',
        'balanceSheetHistory',
        'ceased',
        'openapiId',
        'pecHistory',
        'recordCreation',
        'registryStatus',
        'sdiCode',
        'sdiCodeUpdate',
        'taxCodeCeased',
        'vatGroup',
      ].sort(),
    );
  });

  it('price the tiers from the shared price table, in their real order', () => {
    const prices = TIERS.map(tierPrice);
    expect(prices[0]).toBeLessThan(prices[1]);
    expect(tierPrice('IT-aml')).toBeLessThan(tierPrice('IT-full'));
    expect(tierPrice('IT-stakeholders')).toBeLessThan(tierPrice('IT-aml'));
  });

  it('resolve nested paths by their longest listed prefix', () => {
    expect(facetOfPath('ecofin.turnover')).toBe('ecofinSummary');
    expect(facetOfPath('ecofin.turnoverRange.code')).toBe('ecofin');
    expect(facetOfPath('address.province.code')).toBe('address');
    expect(facetOfPath('address.province.description')).toBe('addressNames');
    expect(facetOfPath('managers.company')).toBe('managers');
    expect(facetOfPath('shareholders.owners.company')).toBe('shareholdersSummary');
    expect(facetOfPath('creditScore')).toBeNull(); // another subgraph's field
    expect(facetOfPath('creditScore.rating')).toBeNull();
  });
});

describe('company schema', () => {
  it('describes every type, field, argument, enum value and input field', () => {
    expect(undescribed(getSchema(), ['Query', 'Mutation'])).toEqual([]);
  });
});

describe('cheapestEndpoint', () => {
  const pick = (...paths: string[]): string | null => cheapestEndpoint(facetsForPaths(paths));

  it('buys IT-start for identity alone', () => {
    expect(pick('companyName', 'vatCode', 'taxCode')).toBe('IT-start');
    expect(pick('id', 'address.town', 'activityStatus')).toBe('IT-start');
  });

  it('buys IT-aml for identity, address, managers, shareholders and ecofin', () => {
    expect(pick('companyName', 'vatCode', 'address.streetName', 'managers.taxCode', 'shareholders.percentShare', 'ecofin.turnover', 'ecofin.enterpriseSize.code')).toBe('IT-aml');
  });

  it('buys the cheapest tier holding a section', () => {
    expect(pick('pec')).toBe('IT-advanced');
    expect(pick('ecofin.turnover')).toBe('IT-advanced');
    expect(pick('ecofin.turnoverRange.code')).toBe('IT-marketing');
    expect(pick('managers.roles.role.code')).toBe('IT-stakeholders');
    expect(pick('webAndSocial.linkedin', 'allOffices.town')).toBe('IT-marketing');
    expect(pick('rae.code')).toBe('IT-aml');
    expect(pick('ratios.profitability.roe')).toBe('IT-full');
    expect(pick('pec', 'managers.taxCode')).toBe('IT-full');
  });

  it('needs two tiers only when none holds everything', () => {
    expect(pick('id', 'managers.taxCode')).toBeNull();
    // IT-name (€0.02) holds the Openapi id and tells the VAT number: €0.52, not IT-start + IT-stakeholders €0.55.
    expect(planPurchase(facetsForPaths(['id', 'managers.taxCode']))).toEqual(['IT-stakeholders', 'IT-name']);
    expect(planPurchase(new Set<Facet>(['managers']), { byIdOnly: true })).toEqual(['IT-stakeholders', 'IT-name']);
    // IT-pec takes the Openapi id: €0.03, not IT-advanced €0.15.
    expect(planPurchase(new Set<Facet>(['pec']), { byIdOnly: true })).toEqual(['IT-pec']);
    // The composite tiers take no id: IT-name (tells the VAT number) beside IT-marketing.
    expect(planPurchase(new Set<Facet>(['webAndSocial']), { byIdOnly: true })).toEqual(['IT-marketing', 'IT-name']);
    expect(planPurchase(new Set<Facet>())).toEqual([]);
  });

  it('chooses the search enrichment from the items selection', () => {
    expect(searchEnrichment(new Set<Facet>(['openapiId']))).toBe('none');
    expect(searchEnrichment(new Set<Facet>(['companyName', 'address']))).toBe('start');
    expect(searchEnrichment(new Set<Facet>(['companyName', 'pec']))).toBe('advanced');
    expect(searchEnrichment(new Set<Facet>(['managers']))).toBe('start');
  });
});

// ---------------------------------------------------------------------------------------------
// What operations buy
// ---------------------------------------------------------------------------------------------

describe('company operations buy the least euro per company', () => {
  it('identity alone: one IT-name call (€0.02, not IT-start €0.05)', async () => {
    const r = await run(`{ company(vatCode: "${VAT}") { vatCode taxCode companyName } }`);
    expect(r.errors).toBeUndefined();
    expect(endpoints(r)).toEqual(['IT-name']);
    expect(r.calls[0].path).toBe(`/IT-name/${VAT}`);
    expect(r.data).toEqual({ company: { vatCode: VAT, taxCode: VAT, companyName: 'OPENAPI S.P.A.' } });
  });

  it('identity, address, managers, shareholders, ecofin: exactly one IT-aml call', async () => {
    const r = await run(`{
      company(vatCode: "${VAT}") {
        companyName vatCode
        address { streetName town province { code description } }
        managers { taxCode roles { role { code } } ... on ManagerPerson { name surname } ... on ManagerCompany { companyName } }
        shareholders { percentShare owners { taxCode ... on ShareholderCompany { companyName } } }
        ecofin { turnover netWorth enterpriseSize { code } }
      }
    }`);
    expect(r.errors).toBeUndefined();
    expect(endpoints(r)).toEqual(['IT-aml']);
    const c = r.data?.company as Record<string, unknown>;
    expect(c.companyName).toBe('OPENAPI SPA');
    expect(c.address).toEqual({ streetName: 'VIALE FILIPPO TOMMASO MARINETTI, 221', town: 'ROMA', province: { code: 'RM', description: 'ROMA' } });
    expect((c.managers as unknown[]).length).toBe(4);
    expect(c.ecofin).toEqual({ turnover: 4432761, netWorth: 563473, enterpriseSize: { code: 'SMALL' } });
  });

  it('selecting only the key makes no call', async () => {
    const r = await run(`{ company(vatCode: "IT ${VAT}") { vatCode __typename } }`);
    expect(r.errors).toBeUndefined();
    expect(r.calls).toEqual([]);
    expect(r.data).toEqual({ company: { vatCode: VAT, __typename: 'Company' } });
  });

  it('walks named fragments, inline fragments, aliases and @include', async () => {
    const r = await run(
      `query Q($more: Boolean!) {
        company(vatCode: "${VAT}") { ...Ident mail: pec ... on Company { dates { startDate } } ratios @include(if: $more) { profitability { roe } } }
      }
      fragment Ident on Company { companyName }`,
      { more: false },
    );
    expect(r.errors).toBeUndefined();
    expect(endpoints(r)).toEqual(['IT-advanced']);
    expect(r.data?.company).toEqual({ companyName: 'OPENAPI S.P.A.', mail: 'openapi@legalmail.it', dates: { startDate: '2013-10-20T00:00:00.000Z' } });

    const more = await run(`query Q($more: Boolean!) { company(vatCode: "${VAT}") { pec ratios @include(if: $more) { profitability { roe } } } }`, { more: true });
    expect(endpoints(more)).toEqual(['IT-full']);
    expect(more.data?.company).toEqual({ pec: 'OPENAPI@LEGALMAIL.IT', ratios: { profitability: { roe: 83.3 } } });
  });

  it('unions the needs of every field asking for the same company (one plan)', async () => {
    const r = await run(`{ a: company(vatCode: "${VAT}") { pec } b: company(vatCode: "${VAT}") { managers { taxCode } } c: companyByTaxCode(taxCode: "${VAT}") { companyName } }`);
    expect(r.errors).toBeUndefined();
    // IT-stakeholders + IT-pec (€0.53) rather than IT-full (€1.50), each once for the three fields.
    expect(endpoints(r).sort()).toEqual(['IT-pec', 'IT-stakeholders']);
    expect(r.calls.reduce((sum, c) => sum + c.euro, 0)).toBeCloseTo(0.53, 6);
  });

  it('buys nothing for a nested company when the parent payload holds what is selected', async () => {
    const r = await run(`{ company(vatCode: "${VAT}") { managers { ... on ManagerCompany { company { companyName taxCode } } } } }`);
    expect(r.errors).toBeUndefined();
    expect(endpoints(r)).toEqual(['IT-stakeholders']);
    const managers = (r.data?.company as { managers: Array<{ company?: unknown }> }).managers;
    expect(managers.find((m) => m.company)?.company).toEqual({ companyName: 'OPEN HOLDING SRL', taxCode: HOLDING });
  });

  it('walks the ownership graph: the same nested company met twice is bought once', async () => {
    const r = await run(`{
      company(vatCode: "${VAT}") {
        managers { ... on ManagerCompany { company { vatCode pec } } }
        shareholders { owners { ... on ShareholderCompany { company { vatCode companyName } } } }
      }
    }`);
    expect(r.errors).toBeUndefined();
    // The holding's VAT number and PEC: IT-name + IT-pec (€0.05) rather than IT-advanced (€0.15), once.
    expect(r.calls.map((c) => c.path).sort()).toEqual([`/IT-name/${HOLDING}`, `/IT-pec/${HOLDING}`, `/IT-stakeholders/${VAT}`]);
    const c = r.data?.company as { managers: Array<{ company?: { vatCode: string; pec: string } }> };
    expect(c.managers.find((m) => m.company)?.company).toEqual({ vatCode: HOLDING, pec: 'openapi@legalmail.it' });
  });

  it('answers a later need from what the request already bought', async () => {
    const r = await run(`{
      holding: company(vatCode: "${HOLDING}") { pec companyName }
      company(vatCode: "${VAT}") { managers { ... on ManagerCompany { company { pec } } } }
    }`);
    expect(r.errors).toBeUndefined();
    expect(endpoints(r).sort()).toEqual(['IT-name', 'IT-pec', 'IT-stakeholders']);
  });

  it('resolves entity references by each kind of lookupCode, batching them', async () => {
    const r = await run(`{
      _entities(representations: [
        { __typename: "Company", lookupCode: "${VAT}" },
        { __typename: "Company", lookupCode: " ${VAT} " },
        { __typename: "Company", lookupCode: "60b4a85585e34e615c569ef5" }
      ]) { ... on Company { vatCode companyName } }
    }`);
    expect(r.errors).toBeUndefined();
    // The same VAT number twice: one company, one call; the id is not known to be it.
    expect(endpoints(r)).toEqual(['IT-name', 'IT-name']);
    expect(r.calls.map((c) => c.path).sort()).toEqual([`/IT-name/${VAT}`, '/IT-name/60b4a85585e34e615c569ef5']);
    expect(r.data?._entities).toEqual([
      { vatCode: VAT, companyName: 'OPENAPI S.P.A.' },
      { vatCode: VAT, companyName: 'OPENAPI S.P.A.' },
      { vatCode: VAT, companyName: 'OPENAPI S.P.A.' },
    ]);
  });

  it('a company known by id only: IT-name first (it tells the VAT number), then the composite tier by VAT', async () => {
    const r = await run(`{ companyById(id: "60B4A85585E34E615C569EF5") { id vatCode managers { taxCode } } }`);
    expect(r.errors).toBeUndefined();
    expect(r.calls.map((c) => c.path)).toEqual(['/IT-name/60b4a85585e34e615c569ef5', `/IT-stakeholders/${VAT}`]);
  });

  it('refuses bad input before any call', async () => {
    const cases = [
      `{ company(vatCode: "12485671008") { companyName } }`,
      `{ company(vatCode: "1248567100") { companyName } }`,
      `{ companyByTaxCode(taxCode: "SCRLCU73R02H501X") { companyName } }`,
      `{ companyById(id: "xyz") { companyName } }`,
      `{ searchCompanies(filter: {}) { count } }`,
      `{ searchCompanies(filter: { companyName: "ab" }) { count } }`,
      `{ searchCompanies(filter: { province: "RM" }, limit: 5000) { count } }`,
      `{ searchCompanies(filter: { near: { latitude: 95, longitude: 12, radiusMeters: 100 } }) { count } }`,
      `{ searchCompanies(filter: { province: "RM" }, limit: 100) { items { managers { taxCode } } } }`,
      `{ foreignCompany(country: "FRA", id: "x") { companyName } }`,
      `{ foreignCompany(country: "IT", id: "${VAT}") { companyName } }`,
      `{ foreignCompany(country: "US", id: "123", level: VAT_REGISTRY) { companyName } }`,
      `mutation { createCompanyMonitor(input: { code: "${VAT}", dataset: IT_START, monitoredFields: [] }) { id } }`,
      `mutation { createCompanyMonitor(input: { code: "${VAT}", dataset: IT_START, callbackUrl: "ftp://x" }) { id } }`,
      `mutation { deleteCompanyMonitor(id: "nope") }`,
    ];
    for (const q of cases) {
      const r = await run(q);
      expect(r.calls, q).toEqual([]);
      expect(r.errors?.[0]?.extensions?.code, q).toBe('BAD_USER_INPUT');
    }
  });

  it('reports a company that does not exist, and buys no other tier for it in the same request', async () => {
    const fake = new FakeUpstream();
    fake.notFound.add(HOLDING);
    const r = await run(
      `{ a: company(vatCode: "${HOLDING}") { companyName } company(vatCode: "${VAT}") { managers { ... on ManagerCompany { company { companyName pec } } } } }`,
      undefined,
      fake,
    );
    expect(r.data?.a).toBeNull();
    expect(r.errors?.map((e) => e.message)).toEqual(['no company matches', 'no company matches']);
    // the nested company keeps what the parent payload says of it; its pec reports the failure
    const managers = (r.data?.company as { managers: Array<{ company?: unknown }> }).managers;
    expect(managers.find((m) => m.company)?.company).toEqual({ companyName: 'OPEN HOLDING SRL', pec: null });
    expect(endpoints(r).sort()).toEqual(['IT-name', 'IT-stakeholders']);
  });
});

describe('search buys the enrichment it needs', () => {
  it('ids only: no enrichment', async () => {
    const r = await run(`{ searchCompanies(filter: { province: "rm", atecoCode: "62.01" }, limit: 10) { count items { id } } }`);
    expect(r.errors).toBeUndefined();
    expect(r.calls).toHaveLength(1);
    expect(r.calls[0].query).toMatchObject({ province: 'RM', atecoCode: '6201', limit: 10, skip: 0, dataEnrichment: undefined });
    expect(r.data?.searchCompanies).toEqual({ count: 2, items: [{ id: '60d1bfc731177b0a092cdfc1' }, { id: '45d1bfc788174b9u092cdtr5' }] });
  });

  it('start data: start enrichment, nothing bought per item', async () => {
    const r = await run(`{ searchCompanies(filter: { companyName: "openapi", registryStatus: ACTIVE }) { items { vatCode companyName registryStatus address { town } } } }`);
    expect(r.errors).toBeUndefined();
    expect(endpoints(r)).toEqual(['IT-search']);
    expect(r.calls[0].query).toMatchObject({ companyName: 'openapi', activityStatus: 'ATTIVA', dataEnrichment: 'start' });
    const items = (r.data?.searchCompanies as { items: unknown[] }).items;
    expect(items[1]).toEqual({ vatCode: '12345678910', companyName: 'OPENAPI TEST S.P.A.', registryStatus: 'REGISTERED', address: { town: 'ROMA' } });
  });

  it('more than the enrichment holds: one tier per item, within the item limit', async () => {
    const r = await run(`{ searchCompanies(filter: { province: "RM" }, limit: 2) { items { vatCode ecofin { turnoverRange { code } } } } }`);
    expect(r.errors).toBeUndefined();
    expect(endpoints(r)).toEqual(['IT-search', 'IT-marketing', 'IT-marketing']);
    expect(
      r.calls
        .slice(1)
        .map((c) => c.path)
        .sort(),
    ).toEqual(['/IT-marketing/12345678910', `/IT-marketing/${VAT}`]);
  });
});

describe('other root fields', () => {
  it('foreignCompany uses the cheaper of the country and worldwide endpoints', async () => {
    const fr = await run(`{ foreignCompany(country: "fr", id: "85126642900014") { companyName sirenCode address { town } level } }`);
    expect(fr.errors).toBeUndefined();
    expect(fr.calls.map((c) => c.path)).toEqual(['/FR-start/85126642900014']);
    expect(fr.data?.foreignCompany).toEqual({ companyName: 'LES QUATRE HUB', sirenCode: '851266429', address: { town: 'SAINT-VAAST-LA-HOUGUE' }, level: 'START' });

    const lt = await run(`{ foreignCompany(country: "LT", id: "LT100003695519", level: TOP) { companySize identifiers { number } } }`);
    expect(lt.calls.map((c) => c.path)).toEqual(['/WW-top/LT/LT100003695519']);
    expect(lt.data?.foreignCompany).toEqual({ companySize: 'Medium sized company', identifiers: [{ number: '300556523' }, { number: 'LT100003695519' }] });

    const us = await run(`{ foreignCompany(country: "US", id: "123456", level: ADVANCED) { companyName } }`);
    expect(us.calls.map((c) => c.path)).toEqual(['/WW-advanced/US/123456']);

    const vies = await run(`{ foreignCompany(country: "IE", id: "6388047V", level: VAT_REGISTRY) { companyName vatRegistration { valid } } }`);
    expect(vies.calls.map((c) => c.path)).toEqual(['/EU-start/IE6388047V']);
    expect(vies.data?.foreignCompany).toEqual({ companyName: 'GOOGLE IRELAND LIMITED', vatRegistration: { valid: true } });
  });

  it('foreignCompany VAT_REGISTRY for Greece: the country is GR (ISO), the VAT number asked of VIES is EL-prefixed, once', async () => {
    for (const id of ['094014201', 'EL094014201', 'el 094.014.201']) {
      const r = await run(`{ foreignCompany(country: "GR", id: "${id}", level: VAT_REGISTRY) { companyName } }`);
      expect(r.errors, id).toBeUndefined();
      expect(
        r.calls.map((c) => c.path),
        id,
      ).toEqual(['/EU-start/EL094014201']);
    }
    // EL is how VAT numbers write Greece, not its country code
    const el = await run(`{ foreignCompany(country: "EL", id: "094014201", level: VAT_REGISTRY) { companyName } }`);
    expect(el.calls).toEqual([]);
    expect(el.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('frenchCompanySearch picks its enrichment from the items selection; dry runs return the count', async () => {
    const r = await run(`{ frenchCompanySearch(filter: { town: "paris", activityStatus: CEASED }, limit: 5) { count items { companyName legalForm { code } } } }`);
    expect(r.errors).toBeUndefined();
    expect(r.calls[0].query).toMatchObject({ town: 'paris', activityStatus: 'CEASED', dataEnrichment: 'advanced', limit: 5 });
    expect((r.data?.frenchCompanySearch as { count: number }).count).toBe(2);

    const dry = await run(`{ frenchCompanySearch(filter: { nafCode: "5610A" }, dryRun: true) { total cost count dryRun } }`);
    expect(dry.calls[0].query).toMatchObject({ nafCode: '5610A', dryRun: 1 });
    expect(dry.data?.frenchCompanySearch).toEqual({ total: 1234, cost: 12.34, count: 0, dryRun: true });
  });

  it('legalForms', async () => {
    const r = await run(`{ legalForms { code description } }`);
    expect(r.calls.map((c) => c.path)).toEqual(['/IT-legalforms']);
    expect((r.data?.legalForms as unknown[]).length).toBe(4);
  });

  it('monitors: create, list, read with its company, delete', async () => {
    const created = await run(
      `mutation { createCompanyMonitor(input: { code: "IT${VAT}", dataset: IT_ADVANCED, monitoredFields: ["pec"], callbackUrl: "https://example.com/hook" }) { id dataset monitoredFields nextOn company { vatCode companyName } } }`,
    );
    expect(created.errors).toBeUndefined();
    expect(created.calls.map((c) => `${c.path} ${c.euro}`)).toEqual(['/monitor 0.1']);
    expect(created.data?.createCompanyMonitor).toEqual({
      id: '6981e3571a222556460af532',
      dataset: 'IT_ADVANCED',
      monitoredFields: ['pec'],
      nextOn: '2026-03-05T00:00:00.000Z',
      company: { vatCode: VAT, companyName: 'OPENAPI S.P.A.' },
    });
    const list = await run(`{ companyMonitors { id companyName expiresOn } }`);
    expect((list.data?.companyMonitors as unknown[]).length).toBe(2);
    const one = await run(`{ companyMonitor(id: "6981e3571a222556460af532") { updatedFields } }`);
    expect(one.data?.companyMonitor).toEqual({ updatedFields: { pec: 'openapi@legalmail.it' } });
    const del = await run(`mutation { deleteCompanyMonitor(id: "6981E3571A222556460AF532") }`);
    expect(del.data).toEqual({ deleteCompanyMonitor: '6981e3571a222556460af532' });
  });
});
