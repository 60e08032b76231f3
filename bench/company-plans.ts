/**
 * What the company planner buys (issue 8): for four operations — a common profile, the ownership
 * walk, status + managers, and a full report (every Company section) — upstream calls and euro per
 * operation, cold (nothing cached) and warm (the same operation again), with
 *
 * - the OLD rule, as a baseline computed in the same run from the same coverage and price tables
 *   (`facets.ts`, `contract/prices.ts`): the cheapest single tier of the six that covers the need,
 *   else the cheapest combination of tiers (no single-purpose endpoint);
 * - the NEW planner (least total euro over tiers and single-purpose endpoints, cached sources
 *   free), measured through the gateway against the embedded emulator (its `extensions.cost`).
 *
 * The baseline of the walk counts the root's plan plus one plan per distinct owner company that
 * the walk reached (the owners the new run's answer names). Fields bought from their own endpoint
 * whatever the planner (beneficialOwners, publicAdministration, splitPayment, isCeased) cost the
 * same under both rules: the baseline adds what the emulator charged for them in the new run.
 * Facets no tier holds (the PEC history) cannot be bought by the old rule: the baseline leaves
 * them out (it would have answered without them).
 *
 * `npx tsx bench/company-plans.ts` alone, or from `npm run bench` (`runCompanyPlansBench`).
 */
import { createRequire } from 'node:module';
import type * as GraphQLModule from 'graphql';
import { Kind, parse, type FieldNode, type OperationDefinitionNode } from 'graphql';
import { request } from 'undici';
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import { registeredVats } from '../emulator/company/index.ts';
import { cheapestEndpoint, isNestedCompanyPath, planCost, planPurchase, TIER_COVERAGE, TIERS, type Facet, type Source } from '../subgraphs/company/facets.ts';
import { companySubgraph } from '../subgraphs/company/index.ts';
import { companyFacetsFromInfo } from '../subgraphs/company/selection.ts';
import { startStack } from '../stack.ts';

// @apollo/subgraph builds with graphql's CommonJS build: walk its schema with the same instance.
const G = createRequire(import.meta.url)('graphql') as typeof GraphQLModule;

/** Endpoints of the fields bought from their own endpoint when selected (beneficialOwners, publicAdministration, splitPayment, isCeased): not planner decisions. */
const OWN_ENDPOINTS = ['/IT-ubo/', '/IT-pa/', '/IT-splitpayment/', '/IT-closed/'];
/** Not sections of the company: the hidden key, a check that takes another tax code, another area's field. */
const SKIPPED_FIELDS = new Set(['lookupCode', 'vatGroupTaxCodeCheck', 'municipality']);

/** A selection of every field of `type` (interfaces and unions through each possible type), nested companies left out. */
function selectAll(schema: GraphQLModule.GraphQLSchema, type: GraphQLModule.GraphQLNamedType, path: string, depth: number): string {
  if (G.isAbstractType(type)) {
    const parts = schema.getPossibleTypes(type).map((t) => `... on ${t.name} { ${selectAll(schema, t, path, depth)} }`);
    return `__typename ${parts.join(' ')}`;
  }
  if (!G.isObjectType(type)) return '';
  const out: string[] = [];
  for (const f of Object.values(type.getFields())) {
    if (SKIPPED_FIELDS.has(f.name)) continue;
    if (f.args.some((a) => G.isNonNullType(a.type))) continue;
    const p = path ? `${path}.${f.name}` : f.name;
    if (isNestedCompanyPath(p)) continue;
    const named = G.getNamedType(f.type);
    if (G.isLeafType(named)) out.push(f.name);
    else if (depth < 5) {
      const inner = selectAll(schema, named, p, depth + 1);
      if (inner.trim() !== '') out.push(`${f.name} { ${inner} }`);
    }
  }
  return out.join(' ');
}

function fullReportSelection(): string {
  const schema = buildSubgraphSchema({ typeDefs: companySubgraph.typeDefs, resolvers: companySubgraph.resolvers as GraphQLResolverMap<unknown> });
  const company = schema.getType('Company');
  if (!company) throw new Error('no Company type');
  return selectAll(schema, company, '', 0);
}

interface Operation {
  name: string;
  query: string;
  vats: string[];
}

const WALK_VATS = ['04123450159', '03456783053', '03456782055', '03456781057', '12485671007'];

/** The facets the root `company` field of an operation needs (as the estimate reads them). */
function rootNeed(query: string): Set<Facet> {
  const doc = parse(query);
  const op = doc.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const root = op?.selectionSet.selections.find((s): s is FieldNode => s.kind === Kind.FIELD && s.name.value === 'company');
  if (!root) throw new Error('no company field');
  return companyFacetsFromInfo({ fieldNodes: [root], fragments: {}, variableValues: {} });
}

/** The OLD rule: the cheapest single tier covering the need, else the cheapest combination of tiers. */
function oldPlan(need: Iterable<Facet>): Source[] {
  const tierNeed = [...need].filter((f) => TIERS.some((t) => TIER_COVERAGE[t].has(f)));
  if (tierNeed.length === 0) return [];
  const single = cheapestEndpoint(tierNeed);
  return single ? [single] : planPurchase(tierNeed, { allowed: TIERS });
}

/** The NEW planner's plan for a need (nothing cached, identifiers all known). */
const newPlan = (need: Iterable<Facet>): Source[] => planPurchase(need);

interface Measured {
  calls: number;
  euro: number;
  endpoints: string[];
  ownEndpointCalls: number;
  ownEndpointEuro: number;
  owners: number;
}

export interface CompanyPlanRow {
  operation: string;
  rule: string;
  mode: 'cold' | 'warm';
  calls: number;
  euro: number;
  /** The gateway's worst-case estimate per operation (the new planner's rows), NaN for the baseline. */
  estimate: number;
  endpoints: string;
}

export async function runCompanyPlansBench(latencyMs: number, companies = 8): Promise<CompanyPlanRow[]> {
  const stack = await startStack({ env: { ...process.env, OPENAPI_ENV: 'emulator' }, port: 0, emulator: { latencyMs: { company: latencyMs } } });
  const emu = stack.emulatorUrl!;
  const emuCalls = async (): Promise<Array<{ method: string; path: string; area: string; status: number; price: number }>> => {
    const res = await request(`${emu}/_emulator/calls`);
    return ((await res.body.json()) as Array<{ method: string; path: string; area: string; status: number; price: number }>).filter((c) => c.area === 'company');
  };
  const clearCalls = async (): Promise<void> => {
    const res = await request(`${emu}/_emulator/calls`, { method: 'DELETE' });
    await res.body.dump();
  };
  const gql = async (query: string, variables: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const res = await request(stack.gateway.graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.body.json()) as { errors?: unknown[]; data?: unknown; extensions?: { cost?: { upstreamCalls: number; euro: number; estimate?: { euro: number } } } };
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return body;
  };

  const ops: Operation[] = [
    {
      name: 'profile (identity, address, managers, shareholders, ecofin)',
      query: `query($v: String!) { company(vatCode: $v) { companyName vatCode taxCode address { streetName zipCode town } managers { roles { role { code } } } shareholders { percentShare owners { taxCode } } ecofin { turnover netWorth } } }`,
      vats: registeredVats(6_000_000, companies),
    },
    {
      name: 'ownership walk (company → company shareholders → their address)',
      query: `query($v: String!) { company(vatCode: $v) { companyName shareholders { percentShare owners { ... on ShareholderCompany { taxCode company { companyName address { town } } } } } } }`,
      vats: WALK_VATS,
    },
    {
      name: 'status + managers',
      query: `query($v: String!) { company(vatCode: $v) { activityStatus rawActivityStatus managers { roles { role { code } } } } }`,
      vats: registeredVats(6_500_000, companies),
    },
    {
      name: 'full report (every Company section)',
      query: `query($v: String!) { company(vatCode: $v) { ${fullReportSelection()} } }`,
      vats: registeredVats(7_000_000, companies),
    },
  ];

  const rows: CompanyPlanRow[] = [];
  const avg = (xs: number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
  try {
    for (const op of ops) {
      const need = rootNeed(op.query);
      const estimates: number[] = [];
      const cold: Measured[] = [];
      const warm: Measured[] = [];
      for (const v of op.vats) {
        await stack.upstream.clearCache();
        estimates.push((await gql(op.query, { v }, { 'x-openapi-estimate-only': 'true' })).extensions!.cost!.estimate!.euro);
        for (const [mode, into] of [
          ['cold', cold],
          ['warm', warm],
        ] as const) {
          await clearCalls();
          const res = await gql(op.query, { v });
          const calls = await emuCalls();
          const own = calls.filter((c) => OWN_ENDPOINTS.some((p) => c.path.startsWith(p)));
          const ownerCodes = new Set<string>();
          const walk = (x: unknown): void => {
            if (Array.isArray(x)) x.forEach(walk);
            else if (x && typeof x === 'object') {
              const o = x as Record<string, unknown>;
              if (o.company && typeof o.taxCode === 'string') ownerCodes.add(o.taxCode);
              Object.values(o).forEach(walk);
            }
          };
          walk((res.data as { company?: unknown } | undefined)?.company);
          into.push({
            calls: res.extensions!.cost!.upstreamCalls,
            euro: res.extensions!.cost!.euro,
            endpoints: calls.map((c) => `${c.method === 'GET' ? '' : `${c.method} `}${c.path.split('/')[1]}`),
            ownEndpointCalls: mode === 'cold' ? own.length : 0,
            ownEndpointEuro: own.reduce((s, c) => s + c.price, 0),
            owners: ownerCodes.size,
          });
        }
      }
      // OLD rule: root plan (+ one plan per distinct owner company in the walk) + own-endpoint fields.
      const oldRoot = oldPlan(need);
      const nestedNeed = op.name.startsWith('ownership') ? new Set<Facet>(['address']) : null; // the stub knows name and tax code
      const oldNested = nestedNeed ? oldPlan(nestedNeed) : [];
      const oldCalls = cold.map((m) => oldRoot.length + m.owners * oldNested.length + m.ownEndpointCalls);
      const oldEuro = cold.map((m) => planCost(oldRoot).euro + m.owners * planCost(oldNested).euro + m.ownEndpointEuro);
      const planText = (root: Source[], nested: Source[]): string => `${root.join(' + ') || '—'}${nested.length ? `; per owner ${nested.join(' + ')}` : ''}`;
      rows.push({
        operation: op.name,
        rule: 'old (cheapest covering tier)',
        mode: 'cold',
        calls: avg(oldCalls),
        euro: avg(oldEuro),
        estimate: Number.NaN,
        endpoints: planText(oldRoot, oldNested),
      });
      rows.push({ operation: op.name, rule: 'old (cheapest covering tier)', mode: 'warm', calls: 0, euro: 0, estimate: Number.NaN, endpoints: 'cache' });
      const newNested = nestedNeed ? newPlan(nestedNeed) : [];
      rows.push({
        operation: op.name,
        rule: 'new (least euro), measured',
        mode: 'cold',
        calls: avg(cold.map((m) => m.calls)),
        euro: avg(cold.map((m) => m.euro)),
        estimate: avg(estimates),
        endpoints: `${planText(newPlan(need), newNested)} (first company: ${cold[0]?.endpoints.join(', ')})`,
      });
      rows.push({
        operation: op.name,
        rule: 'new (least euro), measured',
        mode: 'warm',
        calls: avg(warm.map((m) => m.calls)),
        euro: avg(warm.map((m) => m.euro)),
        estimate: avg(estimates),
        endpoints: warm[0]?.endpoints.join(', ') || 'cache',
      });
    }
  } finally {
    await stack.close();
  }

  console.log(
    `\nCompany plans (issue 8): old rule computed from the same tables, new planner measured through the gateway; ${companies} companies per operation (the walk: ${WALK_VATS.length}), upstream latency ${latencyMs} ms.\n`,
  );
  console.log('| operation | rule | mode | upstream calls/op | euro/op | estimate €/op | plan |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(
      `| ${r.operation} | ${r.rule} | ${r.mode} | ${r.calls.toFixed(2)} | ${r.euro.toFixed(4)} | ${Number.isNaN(r.estimate) ? '—' : r.estimate.toFixed(4)} | ${r.endpoints} |`,
    );
  const unreachable = [...rootNeed(ops[3].query)].filter((f) => !TIERS.some((t) => TIER_COVERAGE[t].has(f)));
  console.log(
    `\nThe full report's old baseline lacks ${unreachable.join(', ')} (no tier holds it: the old rule could not buy it); the new plan buys it from its single-purpose endpoint. Warm rows repeat the same operation: both rules are answered by the cache.`,
  );
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) await runCompanyPlansBench(Number(process.env.BENCH_UPSTREAM_LATENCY_MS ?? 40));
