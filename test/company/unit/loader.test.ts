/**
 * The company loader with a scripted upstream: which failures a request remembers, and which
 * cached tiers it uses.
 */
import { describe, expect, it } from 'vitest';
import { vendorData } from '../../../subgraphs/company/fixtures/examples.ts';
import type { Facet } from '../../../subgraphs/company/facets.ts';
import { loadCompany } from '../../../subgraphs/company/loaders.ts';
import type { SubgraphContext } from '../../../subgraphs/runtime/context.ts';
import type { CallOptions, UpstreamClient } from '../../../subgraphs/upstream/client.ts';
import { CostMeter } from '../../../subgraphs/upstream/cost.ts';
import { fillPath, type Endpoint } from '../../../subgraphs/upstream/endpoint.ts';
import { UpstreamError } from '../../../subgraphs/upstream/errors.ts';
import { endpointOf } from '../../../contract/prices.ts';

const VAT = '12485671007';
const EXAMPLE_OF: Record<string, string> = {
  'IT-start': 'GET /IT-start/{vatCode_taxCode_or_id}',
  'IT-name': 'GET /IT-name/{vatCode_taxCode_or_id}',
  'IT-aml': 'GET /IT-aml/{vatCode_or_taxCode} #synchronous',
  'IT-full': 'GET /IT-full/{vatCode_or_taxCode} #synchronous',
};

/** Answers IT-start, IT-name, IT-aml and IT-full with the vendor examples; `failures` are thrown first, one per call. */
class ScriptedUpstream {
  readonly calls: string[] = [];
  readonly cached = new Set<string>();
  constructor(readonly failures: Error[] = []) {}

  async call<T = unknown>(_ctx: unknown, ep: Endpoint, opts: CallOptions = {}): Promise<T> {
    const path = fillPath(ep.path, opts.params);
    this.calls.push(path);
    const failure = this.failures.shift();
    if (failure) throw failure;
    const example = EXAMPLE_OF[endpointOf(path)];
    if (!example) throw new Error(`scripted upstream: ${path} not scripted`);
    return vendorData(example) as T;
  }

  async isCached(_ctx: unknown, ep: Endpoint, opts: CallOptions = {}): Promise<boolean> {
    return this.cached.has(fillPath(ep.path, opts.params));
  }
}

function contextOf(upstream: ScriptedUpstream): SubgraphContext {
  const memo = new Map<string, unknown>();
  return {
    auth: { token: 't', tenant: 'tenant' },
    meter: new CostMeter(),
    upstream: upstream as unknown as UpstreamClient,
    once<T>(key: string, make: () => T): T {
      if (!memo.has(key)) memo.set(key, make());
      return memo.get(key) as T;
    },
  };
}

const NAME = new Set<Facet>(['companyName']);
const unavailable = (): UpstreamError => new UpstreamError('http', 'boom', 'company', 'IT-start', 503);
const notFound = (): UpstreamError => new UpstreamError('http', 'no company', 'company', 'IT-start', 404);

describe('failures within one request', () => {
  it('a failure that is not not-found is retried by the same need later in the request', async () => {
    const upstream = new ScriptedUpstream([unavailable()]);
    const ctx = contextOf(upstream);
    await expect(loadCompany(ctx, { vatCode: VAT }, NAME)).rejects.toMatchObject({ status: 503 });
    const again = await loadCompany(ctx, { vatCode: VAT }, NAME);
    expect(again.model.companyName).toBe('OPENAPI S.P.A.');
    // The name alone: IT-name (€0.02), bought again after the 503.
    expect(upstream.calls).toEqual([`/IT-name/${VAT}`, `/IT-name/${VAT}`]);
  });

  it('a not-found failure is remembered: later needs fail without another call', async () => {
    const upstream = new ScriptedUpstream([notFound()]);
    const ctx = contextOf(upstream);
    await expect(loadCompany(ctx, { vatCode: VAT }, NAME)).rejects.toMatchObject({ status: 404 });
    await expect(loadCompany(ctx, { vatCode: VAT }, NAME)).rejects.toMatchObject({ status: 404 });
    await expect(loadCompany(ctx, { vatCode: VAT }, new Set<Facet>(['address']))).rejects.toMatchObject({ status: 404 });
    expect(upstream.calls).toEqual([`/IT-name/${VAT}`]);
  });
});

describe('cached tiers', () => {
  it('are used when they cover the need, even when a cheaper source would, the fewest of them', async () => {
    const upstream = new ScriptedUpstream();
    upstream.cached.add(`/IT-full/${VAT}`);
    // IT-name would cost €0.02; the cached IT-full costs nothing.
    await loadCompany(contextOf(upstream), { vatCode: VAT }, NAME);
    expect(upstream.calls).toEqual([`/IT-full/${VAT}`]);

    // Two cached sources that each cover the need: one is read (the first in table order).
    upstream.calls.length = 0;
    upstream.cached.add(`/IT-start/${VAT}`);
    await loadCompany(contextOf(upstream), { vatCode: VAT }, NAME);
    expect(upstream.calls).toEqual([`/IT-start/${VAT}`]);

    upstream.calls.length = 0;
    upstream.cached.clear();
    upstream.cached.add(`/IT-start/${VAT}`).add(`/IT-aml/${VAT}`);
    const both = await loadCompany(contextOf(upstream), { vatCode: VAT }, new Set<Facet>(['openapiId', 'managers']));
    expect(upstream.calls.sort()).toEqual([`/IT-aml/${VAT}`, `/IT-start/${VAT}`]);
    expect(both.model.id).toBe('60b4a85585e34e615c569ef5');
    expect(both.model.managers?.length).toBeGreaterThan(0);
  });

  it('cover part of the need for free, and only the rest is bought', async () => {
    const upstream = new ScriptedUpstream();
    upstream.cached.add(`/IT-aml/${VAT}`);
    // managers are in the cached IT-aml; the Openapi id is not: buy IT-name (€0.02) instead of
    // IT-name + IT-stakeholders (€0.52).
    const both = await loadCompany(contextOf(upstream), { vatCode: VAT }, new Set<Facet>(['openapiId', 'managers']));
    expect(upstream.calls.sort()).toEqual([`/IT-aml/${VAT}`, `/IT-name/${VAT}`]);
    expect(both.model.id).toBe('60b4a85585e34e615c569ef5');
    expect(both.model.managers?.length).toBeGreaterThan(0);
  });

  it('are not used when they do not cover the need', async () => {
    const upstream = new ScriptedUpstream();
    upstream.cached.add(`/IT-start/${VAT}`);
    await loadCompany(contextOf(upstream), { vatCode: VAT }, new Set<Facet>(['companyName', 'ratios']));
    expect(upstream.calls).toEqual([`/IT-full/${VAT}`]);
  });

  it('are asked about under the Openapi id for a company known only by it, for the sources that take an id', async () => {
    const upstream = new ScriptedUpstream();
    const asked: string[] = [];
    const isCached = upstream.isCached.bind(upstream);
    upstream.isCached = async (ctx: unknown, ep: Endpoint, opts: CallOptions = {}) => {
      asked.push(fillPath(ep.path, opts.params));
      return isCached(ctx, ep, opts);
    };
    upstream.cached.add('/IT-start/60b4a85585e34e615c569ef5');
    await loadCompany(contextOf(upstream), { id: '60b4a85585e34e615c569ef5' }, NAME);
    expect(asked.sort()).toEqual([
      '/IT-address/60b4a85585e34e615c569ef5',
      '/IT-advanced/60b4a85585e34e615c569ef5',
      '/IT-name/60b4a85585e34e615c569ef5',
      '/IT-start/60b4a85585e34e615c569ef5',
    ]);
    expect(upstream.calls).toEqual(['/IT-start/60b4a85585e34e615c569ef5']);
  });
});
