/**
 * Frontend caches out of the box: Apollo Client (`InMemoryCache`) and urql (Graphcache), configured
 * with client/apollo.ts and client/urql.ts, talk to the real gateway over HTTP. They match fragments
 * on `Manager`/`Shareholder` exactly, keep one normalized `Company` per VAT number (fetched without
 * its Openapi `id`), and answer a query whose fields they hold without any request: no call to the
 * gateway and none upstream. Each claim has a control: the same client without our configuration.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { format, promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { loadDevMessages, loadErrorMessages } from '@apollo/client/dev';
import { Client, fetchExchange, gql as urqlGql } from '@urql/core';
import { cacheExchange, type Cache, type CacheExchangeOpts, type FieldInfo, type ResolverConfig } from '@urql/exchange-graphcache';
import { apolloCacheConfig } from '../../../client/apollo.ts';
import { graphcacheConfig } from '../../../client/urql.ts';
import { startTestStack, type GraphQLResponse, type TestStack } from '../../support/stack.ts';

const OPENAPI_SPA = '12485671007'; // managers: people and a company (OPEN HOLDING S.R.L.)
const OPEN_HOLDING = '16935371001'; // manager and shareholder of OPENAPI S.P.A.

let t: TestStack;

beforeAll(async () => {
  // Readable Apollo Client warnings (the default build logs only an error number).
  loadDevMessages();
  loadErrorMessages();
  t = await startTestStack();
});
afterAll(async () => {
  await t?.close();
});
beforeEach(async () => {
  await t.cold();
});

/** Everything the clients log: Apollo Client writes through console, Graphcache through console or its logger. */
let logged: string[] = [];
beforeEach(() => {
  logged = [];
  for (const level of ['warn', 'error'] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      logged.push(`${level}: ${format(...args)}`);
    });
  }
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** A fetch that counts the client's requests to the gateway and keeps the gateway's answers. */
function countingFetch() {
  const answers: GraphQLResponse[] = [];
  const fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const res = await globalThis.fetch(input, init);
    answers.push((await res.clone().json()) as GraphQLResponse);
    return res;
  };
  return { fetch, answers };
}

/** The emulator calls must be exactly the ones the gateway reported for the client's requests. */
async function expectUpstreamCallsOf(answers: GraphQLResponse[]): Promise<void> {
  const reported = answers.flatMap((a) => a.extensions?.cost?.calls ?? []).filter((c) => c.source === 'upstream');
  expect((await t.calls()).map((c) => c.path).sort()).toEqual(reported.map((c) => c.path).sort());
}

const PEOPLE = /* GraphQL */ `
  query People($vatCode: String!) {
    company(vatCode: $vatCode) {
      vatCode
      companyName
      managers {
        ...ManagerFields
      }
      shareholders {
        percentShare
        owners {
          ...OwnerFields
        }
      }
    }
  }
  fragment ManagerFields on Manager {
    taxCode
    isLegalRepresentative
    roles {
      role {
        code
      }
    }
    ... on ManagerPerson {
      name
      surname
    }
    ... on ManagerCompany {
      companyName
      company {
        vatCode
        companyName
      }
    }
  }
  fragment OwnerFields on Shareholder {
    taxCode
    sinceDate
    ... on ShareholderPerson {
      name
      surname
    }
    ... on ShareholderCompany {
      companyName
    }
  }
`;

// Two queries for the same company without its `id`, each with other fields, then their union.
const NAME = /* GraphQL */ `
  query Name($vatCode: String!) {
    company(vatCode: $vatCode) {
      vatCode
      companyName
    }
  }
`;
const PLACE = /* GraphQL */ `
  query Place($vatCode: String!) {
    company(vatCode: $vatCode) {
      vatCode
      address {
        town
        zipCode
      }
    }
  }
`;
const NAME_AND_PLACE = /* GraphQL */ `
  query NameAndPlace($vatCode: String!) {
    company(vatCode: $vatCode) {
      vatCode
      companyName
      address {
        town
        zipCode
      }
    }
  }
`;

interface Person {
  __typename: string;
  taxCode: string | null;
  company?: { vatCode: string; companyName: string } | null;
}
interface People {
  company: { vatCode: string; managers: Person[]; shareholders: Array<{ owners: Person[] }> };
}
interface NameAndPlace {
  company: { vatCode: string; companyName?: string; address?: { town: string | null; zipCode: string | null } };
}

describe('the client snippets of docs/clients.md in plain Node (no bundler, no TypeScript loader: Node strips the types)', () => {
  const root = new URL('../../..', import.meta.url);
  const readme = readFileSync(new URL('docs/clients.md', root), 'utf8');
  const snippets = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]).filter((code) => code.includes("from './client/"));

  it('uses Apollo Client 4 (its main entry point)', () => {
    const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { devDependencies: Record<string, string> };
    expect(pkg.devDependencies['@apollo/client']).toMatch(/^\^4\./);
    expect(snippets.filter((code) => code.includes("from '@apollo/client'")).length).toBeGreaterThanOrEqual(2);
    expect(readme).not.toContain("'@apollo/client/core'");
  });

  it('imports the shipped configurations and builds the clients', async () => {
    expect(snippets.length).toBeGreaterThanOrEqual(3);
    for (const code of snippets) {
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module-typescript', '-e', `${code}\nconsole.log('built');`], { cwd: root });
      expect(stdout.trim(), code).toBe('built');
    }
  });
});

describe('Apollo Client InMemoryCache', () => {
  const apollo = (cache: InMemoryCache, fetch: typeof globalThis.fetch) => new ApolloClient({ cache, link: new HttpLink({ uri: t.stack.gateway.graphqlUrl, fetch }) });

  it('matches Manager and Shareholder fragments with the generated possible types: nothing dropped, no warning', async () => {
    const net = countingFetch();
    const client = apollo(new InMemoryCache(apolloCacheConfig), net.fetch);
    const first = await client.query<People>({ query: gql(PEOPLE), variables: { vatCode: OPENAPI_SPA } });
    expect(net.answers).toHaveLength(1);
    // What the gateway sent is what the cache gives back, people and companies alike.
    const expected = net.answers[0].data as unknown as People;
    expect(new Set(expected.company.managers.map((m) => m.__typename))).toEqual(new Set(['ManagerPerson', 'ManagerCompany']));
    expect(expected.company.managers.every((m) => typeof m.taxCode === 'string')).toBe(true);
    expect(first.data).toEqual(expected);
    await expectUpstreamCallsOf(net.answers);

    // The same query again: from the cache, complete, no request at all.
    await t.cold();
    const again = await client.query<People>({ query: gql(PEOPLE), variables: { vatCode: OPENAPI_SPA } });
    expect(again.data).toEqual(expected);
    expect(net.answers).toHaveLength(1);
    expect(await t.calls()).toEqual([]);
    expect(logged).toEqual([]);
  });

  it('control: without the possible types the fields of interface fragments are lost', async () => {
    const net = countingFetch();
    const client = apollo(new InMemoryCache(), net.fetch);
    const res = await client.query<People>({ query: gql(PEOPLE), variables: { vatCode: OPENAPI_SPA } });
    // The gateway sent every manager's tax code; the cache matched no `... on Manager` and dropped it.
    const sent = net.answers[0].data as unknown as People;
    expect(sent.company.managers.every((m) => typeof m.taxCode === 'string')).toBe(true);
    expect(res.data!.company.managers.map((m) => m.taxCode)).toEqual(sent.company.managers.map(() => undefined));
  });

  it('keeps one Company per VAT number, fetched without id, merging the fields of both queries; their union needs no request', async () => {
    const net = countingFetch();
    const cache = new InMemoryCache(apolloCacheConfig);
    const client = apollo(cache, net.fetch);
    const name = await client.query<NameAndPlace>({ query: gql(NAME), variables: { vatCode: OPENAPI_SPA } });
    const place = await client.query<NameAndPlace>({ query: gql(PLACE), variables: { vatCode: OPENAPI_SPA } });
    expect(net.answers).toHaveLength(2);
    await expectUpstreamCallsOf(net.answers);
    expect(name.data!.company.companyName).toBe('OPENAPI S.P.A.');
    expect(place.data!.company.address?.town).toEqual(expect.any(String));

    const store = cache.extract();
    const id = `Company:{"vatCode":"${OPENAPI_SPA}"}`;
    expect(Object.keys(store).filter((k) => k.startsWith('Company'))).toEqual([id]);
    expect(store[id]).toEqual({
      __typename: 'Company',
      vatCode: OPENAPI_SPA,
      companyName: name.data!.company.companyName,
      address: place.data!.company.address,
    });
    expect(store.ROOT_QUERY?.[`company({"vatCode":"${OPENAPI_SPA}"})`]).toEqual({ __ref: id });

    await t.cold();
    const both = await client.query<NameAndPlace>({ query: gql(NAME_AND_PLACE), variables: { vatCode: OPENAPI_SPA } });
    expect(both.data).toEqual({ company: { ...name.data!.company, ...place.data!.company } });
    expect(net.answers).toHaveLength(2);
    expect(await t.calls()).toEqual([]);
    expect(logged).toEqual([]);
  });

  it('finds a company met as a manager under company(vatCode:) without a request', async () => {
    const net = countingFetch();
    const client = apollo(new InMemoryCache(apolloCacheConfig), net.fetch);
    const people = await client.query<People>({ query: gql(PEOPLE), variables: { vatCode: OPENAPI_SPA } });
    const holding = people.data!.company.managers.find((m) => m.company)!.company!;
    expect(holding.vatCode).toBe(OPEN_HOLDING);

    await t.cold();
    const res = await client.query<NameAndPlace>({ query: gql(NAME), variables: { vatCode: `IT ${OPEN_HOLDING}` } });
    expect(res.data).toEqual({ company: { __typename: 'Company', ...holding } });
    expect(net.answers).toHaveLength(1);
    expect(await t.calls()).toEqual([]);
    expect(logged).toEqual([]);
  });

  it('control: without the type policies the second query replaces the company (with a warning) and the union is fetched again', async () => {
    const net = countingFetch();
    const cache = new InMemoryCache();
    const client = apollo(cache, net.fetch);
    await client.query({ query: gql(NAME), variables: { vatCode: OPENAPI_SPA } });
    await client.query({ query: gql(PLACE), variables: { vatCode: OPENAPI_SPA } });
    expect(logged).toEqual([expect.stringContaining('Cache data may be lost when replacing the company field of a Query object')]);
    const store = cache.extract();
    expect(Object.keys(store).filter((k) => k.startsWith('Company'))).toEqual([]);
    expect(store.ROOT_QUERY?.[`company({"vatCode":"${OPENAPI_SPA}"})`]).not.toHaveProperty('companyName');

    await client.query({ query: gql(NAME_AND_PLACE), variables: { vatCode: OPENAPI_SPA } });
    expect(net.answers).toHaveLength(3);
  });
});

describe('urql Graphcache', () => {
  /** Graphcache marks the `__typename`s it adds to a query as not enumerable; compare without them. */
  const withoutTypenames = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(withoutTypenames)
      : value && typeof value === 'object'
        ? Object.fromEntries(
            Object.entries(value)
              .filter(([k]) => k !== '__typename')
              .map(([k, v]) => [k, withoutTypenames(v)]),
          )
        : value;
  /** Graphcache's logger: warnings and errors (its debug level reports ordinary cache misses). */
  const log = (level: string, message: string) => {
    if (level !== 'debug') logged.push(`${level}: ${message}`);
  };

  const urql = (opts: CacheExchangeOpts, fetch: typeof globalThis.fetch) =>
    new Client({
      url: t.stack.gateway.graphqlUrl,
      exchanges: [cacheExchange(opts), fetchExchange],
      fetch,
      // urql sends queries as GET within URL limits: the gateway asks GET requests for a CSRF header.
      fetchOptions: { headers: { 'x-graphql-csrf': '1' } },
    });

  it('matches Manager and Shareholder fragments with the generated schema: nothing dropped, no warning', async () => {
    const net = countingFetch();
    const client = urql({ ...graphcacheConfig, logger: log }, net.fetch);
    const first = await client.query<People>(urqlGql(PEOPLE), { vatCode: OPENAPI_SPA }).toPromise();
    expect(first.error).toBeUndefined();
    expect(net.answers).toHaveLength(1);
    const expected = net.answers[0].data as unknown as People;
    expect(new Set(expected.company.managers.map((m) => m.__typename))).toEqual(new Set(['ManagerPerson', 'ManagerCompany']));
    expect(expected.company.managers.every((m) => typeof m.taxCode === 'string')).toBe(true);
    expect(withoutTypenames(first.data)).toEqual(withoutTypenames(expected));
    await expectUpstreamCallsOf(net.answers);

    await t.cold();
    const again = await client.query<People>(urqlGql(PEOPLE), { vatCode: OPENAPI_SPA }, { requestPolicy: 'cache-only' }).toPromise();
    expect(withoutTypenames(again.data)).toEqual(withoutTypenames(expected));
    expect(net.answers).toHaveLength(1);
    expect(await t.calls()).toEqual([]);
    expect(logged).toEqual([]);
  });

  it('control: without the configuration Graphcache guesses fragment matches and warns about unkeyed types', async () => {
    const net = countingFetch();
    const client = urql({ logger: log }, net.fetch);
    const res = await client.query(urqlGql(PEOPLE), { vatCode: OPENAPI_SPA }).toPromise();
    expect(res.error).toBeUndefined();
    expect(logged).toContainEqual(expect.stringContaining('Heuristic Fragment Matching'));
    expect(logged).toContainEqual(expect.stringContaining('Invalid key'));
  });

  it('keeps one Company per VAT number, fetched without id, merging the fields of both queries; their union needs no request', async () => {
    const net = countingFetch();
    // Graphcache's store can be read only while it serves an operation: look at it from a resolver
    // of Query.company that answers what is stored.
    const seen: Array<{ key: string | null; link: unknown; fields: string[] }> = [];
    const inspecting: ResolverConfig = {
      Query: {
        company: (_parent, args, cache: Cache) => {
          const key = cache.keyOfEntity({ __typename: 'Company', vatCode: OPENAPI_SPA });
          const link = cache.resolve('Query', 'company', args);
          seen.push({
            key,
            link,
            fields: key
              ? cache
                  .inspectFields(key)
                  .map((f: FieldInfo) => f.fieldKey)
                  .sort()
              : [],
          });
          return typeof link === 'string' ? link : undefined;
        },
      },
    };
    const client = urql({ ...graphcacheConfig, resolvers: inspecting, logger: log }, net.fetch);
    const name = await client.query<NameAndPlace>(urqlGql(NAME), { vatCode: OPENAPI_SPA }).toPromise();
    const place = await client.query<NameAndPlace>(urqlGql(PLACE), { vatCode: OPENAPI_SPA }).toPromise();
    expect(name.error ?? place.error).toBeUndefined();
    expect(name.data?.company.companyName).toBe('OPENAPI S.P.A.');
    expect(net.answers).toHaveLength(2);
    await expectUpstreamCallsOf(net.answers);

    await t.cold();
    seen.length = 0;
    const both = await client.query<NameAndPlace>(urqlGql(NAME_AND_PLACE), { vatCode: OPENAPI_SPA }, { requestPolicy: 'cache-only' }).toPromise();
    // One entity, keyed by the VAT number, holding the fields of both queries; Query.company links to it.
    const key = `Company:{"vatCode":"${OPENAPI_SPA}"}`;
    expect(seen).toEqual([{ key, link: key, fields: ['__typename', 'address', 'companyName', 'vatCode'] }]);
    expect(withoutTypenames(both.data)).toEqual(withoutTypenames({ company: { ...name.data!.company, ...place.data!.company } }));
    expect(net.answers).toHaveLength(2);
    expect(await t.calls()).toEqual([]);
    expect(logged).toEqual([]);
  });
});
