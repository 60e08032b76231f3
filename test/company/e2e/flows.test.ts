/**
 * Company data end to end: a client talks to the gateway over HTTP; the gateway, the company
 * subgraph and the upstream client run for real against the embedded emulator, whose call log is
 * the ground truth for what was bought.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isRegistered } from '../../../emulator/company/index.ts';
import { isValidItalianVat, makeItalianVat } from '../../../contract/checksums.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { untilInFlight } from '../../support/inflight.ts';

let t: TestStack;

const OPENAPI_SPA = '12485671007';
const BETA_SERVIZI = '04123450159'; // two company shareholders
/** A VAT number with a valid check digit that the emulated register does not know. */
const NOT_REGISTERED = (() => {
  for (let n = 1000000; ; n++) {
    const vat = makeItalianVat(String(n).padStart(10, '0'));
    if (!isRegistered(vat)) return vat;
  }
})();

beforeAll(async () => {
  t = await startTestStack({ OPENAPI_RETRY_BASE_MS: '5', OPENAPI_POLL_MIN_MS: '50', OPENAPI_TIMEOUT_MS: '2000', OPENAPI_MAX_EURO_PER_OPERATION: '2' });
});
afterAll(async () => {
  await t?.close();
});
beforeEach(async () => {
  await t.cold();
});

const companyCalls = async () => (await t.calls('company')).map((c) => `${c.method} ${c.path}`);

const OVERVIEW = /* GraphQL */ `
  query Overview($vatCode: String!) {
    company(vatCode: $vatCode) {
      vatCode
      taxCode
      companyName
      address {
        streetName
        zipCode
        town
        province {
          code
        }
      }
      managers {
        __typename
        roles {
          role {
            code
            description
          }
        }
        ... on ManagerPerson {
          name
          surname
          taxCode
        }
      }
      shareholders {
        percentShare
        owners {
          __typename
          taxCode
        }
      }
      ecofin {
        turnover
        netWorth
        shareCapital
      }
    }
  }
`;

describe('least euro', () => {
  it('buys identity, address, managers, shareholders and ecofin with IT-stakeholders + IT-advanced (€0.65, not IT-aml €0.90), then nothing', async () => {
    const first = await t.gql<{ company: { companyName: string; managers: unknown[] } }>(OVERVIEW, { vatCode: OPENAPI_SPA });
    expect(first.errors).toBeUndefined();
    expect(first.data?.company.companyName).toBe('OPENAPI S.P.A.');
    expect(first.data?.company.managers.length).toBeGreaterThan(0);
    // In parallel: the set, not the order (the slow tier by its GET, the default).
    expect((await companyCalls()).sort()).toEqual([`GET /IT-advanced/${OPENAPI_SPA}`, `GET /IT-stakeholders/${OPENAPI_SPA}`]);
    expect(first.extensions?.cost).toMatchObject({ upstreamCalls: 2, cacheHits: 0, euro: 0.65 });
    expect(first.extensions?.cost?.calls.map((c) => c.path).sort()).toEqual([`/IT-advanced/${OPENAPI_SPA}`, `/IT-stakeholders/${OPENAPI_SPA}`]);

    const again = await t.gql(OVERVIEW, { vatCode: OPENAPI_SPA });
    expect(again.data).toEqual(first.data);
    expect(await companyCalls()).toHaveLength(2);
    expect(again.extensions?.cost).toMatchObject({ upstreamCalls: 0, cacheHits: 2, euro: 0 });
  });

  it('buys IT-address (€0.03, not IT-start €0.05) for identity and address alone', async () => {
    const res = await t.gql(`{ company(vatCode: "${OPENAPI_SPA}") { companyName address { town } } }`);
    expect(res.errors).toBeUndefined();
    expect(await companyCalls()).toEqual([`GET /IT-address/${OPENAPI_SPA}`]);
    expect(res.extensions?.cost).toMatchObject({ upstreamCalls: 1, euro: 0.03 });
  });
});

describe('walking the ownership graph', () => {
  const WALK = /* GraphQL */ `
    query Walk($vatCode: String!) {
      company(vatCode: $vatCode) {
        companyName
        shareholders {
          percentShare
          owners {
            ... on ShareholderCompany {
              company {
                vatCode
                companyName
                address {
                  town
                }
              }
            }
          }
        }
      }
    }
  `;
  type Walk = { company: { shareholders: Array<{ owners: Array<{ company?: { vatCode: string; companyName: string } }> }> } };

  const ownerVats = (data: Walk | null | undefined): string[] => (data?.company.shareholders ?? []).flatMap((s) => s.owners.flatMap((o) => (o.company ? [o.company.vatCode] : [])));

  it('makes one call per distinct company', async () => {
    const res = await t.gql<Walk>(WALK, { vatCode: BETA_SERVIZI });
    expect(res.errors).toBeUndefined();
    const owners = ownerVats(res.data);
    expect(owners.length).toBeGreaterThanOrEqual(2);
    const distinct = new Set([BETA_SERVIZI, ...owners]);
    const calls = await companyCalls();
    expect(calls).toHaveLength(distinct.size);
    expect(new Set(calls.map((c) => c.split('/').pop()))).toEqual(distinct);
    expect(res.extensions?.cost?.upstreamCalls).toBe(distinct.size);
    for (const o of res.data?.company.shareholders.flatMap((s) => s.owners) ?? []) {
      if (o.company) expect(o.company.companyName).toMatch(/\S/);
    }
  });

  it('twenty concurrent identical operations make one call per company in all', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, () => t.gql<Walk>(WALK, { vatCode: BETA_SERVIZI })));
    for (const r of results) expect(r.errors).toBeUndefined();
    const distinct = new Set([BETA_SERVIZI, ...ownerVats(results[0].data)]);
    expect(await companyCalls()).toHaveLength(distinct.size);
    const total = results.reduce(
      (acc, r) => ({ up: acc.up + (r.extensions?.cost?.upstreamCalls ?? 0), saved: acc.saved + (r.extensions?.cost?.dedupHits ?? 0) + (r.extensions?.cost?.cacheHits ?? 0) }),
      { up: 0, saved: 0 },
    );
    expect(total.up).toBe(distinct.size);
    expect(total.saved).toBe(20 * distinct.size - distinct.size);
  });

  it('twenty concurrent lookups of one company make one call', async () => {
    const q = `{ company(vatCode: "${OPENAPI_SPA}") { companyName address { town } } }`;
    const results = await Promise.all(Array.from({ length: 20 }, () => t.gql(q)));
    for (const r of results) expect(r.errors).toBeUndefined();
    expect(await companyCalls()).toEqual([`GET /IT-address/${OPENAPI_SPA}`]);
  });
});

describe('bad input and upstream failures', () => {
  it('refuses an invalid VAT number with BAD_USER_INPUT and no upstream call', async () => {
    const bad = '12485671008';
    expect(isValidItalianVat(bad)).toBe(false);
    const res = await t.gql(`{ company(vatCode: "${bad}") { companyName } }`);
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(await t.calls()).toEqual([]);
  });

  it('maps 401 to UNAUTHENTICATED with the upstream error number and without the token', async () => {
    const res = await t.gql(`{ company(vatCode: "${OPENAPI_SPA}") { companyName } }`, undefined, { authorization: 'Bearer not-a-real-token-123' });
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED', upstream: { status: 401, error: 125 } });
    expect(JSON.stringify(res)).not.toContain('not-a-real-token-123');
  });

  it('maps 402 to PAYMENT_REQUIRED', async () => {
    const { token } = (await t.control('tokens', { scopes: ['*:test.company.openapi.com/*'], credit: 0.01, owner: 'poor@example.com' })) as { token: string };
    const res = await t.gql(`{ company(vatCode: "${OPENAPI_SPA}") { companyName } }`, undefined, { authorization: `Bearer ${token}` });
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'PAYMENT_REQUIRED', upstream: { status: 402, error: 610 } });
  });

  it('maps a token without the scope to UNAUTHENTICATED', async () => {
    // The name alone is bought from IT-name: the token may call that and nothing else.
    const { token } = (await t.control('tokens', { scopes: ['GET:test.company.openapi.com/IT-name'], credit: 10, owner: 'narrow@example.com' })) as { token: string };
    const ok = await t.gql(`{ company(vatCode: "${OPENAPI_SPA}") { companyName } }`, undefined, { authorization: `Bearer ${token}` });
    expect(ok.errors).toBeUndefined();
    const res = await t.gql(OVERVIEW, { vatCode: OPENAPI_SPA }, { authorization: `Bearer ${token}` });
    expect(res.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('maps 404 to UPSTREAM_NOT_FOUND', async () => {
    expect(isValidItalianVat(NOT_REGISTERED)).toBe(true);
    const res = await t.gql(`{ company(vatCode: "${NOT_REGISTERED}") { companyName } }`);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_NOT_FOUND', upstream: { status: 404 } });
  });

  it('retries a 503 and then succeeds, paying only the answered call', async () => {
    await t.control('faults', { area: 'company', status: 503, retryAfter: 0, count: 2 });
    const res = await t.gql(`{ company(vatCode: "${OPENAPI_SPA}") { companyName } }`);
    expect(res.errors).toBeUndefined();
    expect((await t.calls('company')).map((c) => c.status)).toEqual([503, 503, 200]);
    expect(res.extensions?.cost).toMatchObject({ upstreamCalls: 3, euro: 0.02 });
  });

  it('maps persistent 5xx to UPSTREAM_UNAVAILABLE', async () => {
    await t.control('faults', { area: 'company', status: 500, count: 3 });
    const res = await t.gql(`{ company(vatCode: "${OPENAPI_SPA}") { companyName } }`);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', upstream: { status: 500 } });
    expect(await t.calls('company')).toHaveLength(3);
  });

  it('maps a hanging upstream to UPSTREAM_TIMEOUT', async () => {
    await t.control('faults', { area: 'company', hangMs: 4000, count: 3 });
    const res = await t.gql(`{ company(vatCode: "${OPENAPI_SPA}") { companyName } }`);
    expect(res.errors?.[0]?.extensions?.code).toBe('UPSTREAM_TIMEOUT');
    // The hung calls end (and are logged) before the next test reads the call log.
    await untilInFlight(t.stack.emulatorUrl!, 'none');
  });

  it('follows the 302 → IT-check_id flow of a slow dataset (COMPANY_SLOW_PURCHASE=poll)', async () => {
    const p = await startTestStack({ OPENAPI_RETRY_BASE_MS: '5', OPENAPI_POLL_MIN_MS: '50', COMPANY_SLOW_PURCHASE: 'poll' });
    try {
      // Not ready within the GET's wait (0 here): 302 at once, then the polls.
      await p.control('company/slow', { ms: 300, waitMs: 0 });
      const res = await p.gql(`query($vatCode: String!) { company(vatCode: $vatCode) { companyName managers { __typename } } }`, { vatCode: BETA_SERVIZI });
      expect(res.errors).toBeUndefined();
      const calls = await p.calls('company');
      expect(calls[0]).toMatchObject({ method: 'GET', path: `/IT-stakeholders/${BETA_SERVIZI}`, status: 302 });
      expect(calls.length).toBeGreaterThan(1);
      expect(calls.slice(1).every((c) => c.method === 'GET' && c.path.startsWith('/IT-check_id/'))).toBe(true);
      expect(calls.at(-1)!.status).toBe(200);
      expect(res.extensions?.cost).toMatchObject({ upstreamCalls: calls.length, euro: 0.5 });
    } finally {
      await p.close();
    }
  });

  it('gives partial data when one company of several fails', async () => {
    const res = await t.gql<{ a: { companyName: string } | null; b: unknown }>(
      `{ a: company(vatCode: "${OPENAPI_SPA}") { companyName } b: company(vatCode: "${NOT_REGISTERED}") { companyName } }`,
    );
    expect(res.data?.a?.companyName).toBe('OPENAPI S.P.A.');
    expect(res.data?.b).toBeNull();
    expect(res.errors?.map((e) => e.extensions?.code)).toEqual(['UPSTREAM_NOT_FOUND']);
  });
});

describe('cost limit', () => {
  it('refuses an operation whose estimate passes its budget before any call', async () => {
    const vats = ['03456780158', '03456781057', '03456782055', '03456783053'];
    const q = `{ ${vats.map((v, i) => `c${i}: company(vatCode: "${v}") { companyName managers { roles { role { code } } } ecofin { turnover } }`).join(' ')} }`;
    const res = await t.gql<Record<string, { companyName: string } | null>>(q);
    // four IT-stakeholders + IT-advanced purchases at €0.65 against a budget of €2: nothing is bought
    expect(res.errors?.map((e) => e.extensions?.code)).toEqual(['COST_LIMIT_EXCEEDED']);
    expect(res.errors?.[0]?.extensions).toMatchObject({ scope: 'operation', budget: 2, estimate: 2.6 });
    expect(res.data ?? null).toBeNull();
    expect(await t.calls('company')).toHaveLength(0);
    expect(res.extensions?.cost).toMatchObject({ upstreamCalls: 0, euro: 0, estimate: { euro: 2.6 } });
  });
});

describe('lookups by other keys', () => {
  it('resolves a company by tax code and by Openapi id to the same company', async () => {
    const byVat = await t.gql<{ company: { id: string; companyName: string } }>(`{ company(vatCode: "${OPENAPI_SPA}") { id companyName } }`);
    const id = byVat.data!.company.id;
    expect(id).toMatch(/^[0-9a-f]{24}$/);
    const byTax = await t.gql<{ companyByTaxCode: { vatCode: string } }>(`{ companyByTaxCode(taxCode: "${OPENAPI_SPA}") { vatCode companyName } }`);
    const byId = await t.gql<{ companyById: { vatCode: string } }>(`{ companyById(id: "${id}") { vatCode companyName } }`);
    expect(byTax.data?.companyByTaxCode.vatCode).toBe(OPENAPI_SPA);
    expect(byId.data?.companyById.vatCode).toBe(OPENAPI_SPA);
  });

  it('generates valid VAT numbers for unknown companies deterministically', async () => {
    const vat = makeItalianVat('0765432100');
    const a = await t.gql<{ company: { companyName: string } | null }>(`{ company(vatCode: "${vat}") { companyName } }`);
    await t.stack.upstream.clearCache();
    const b = await t.gql<{ company: { companyName: string } | null }>(`{ company(vatCode: "${vat}") { companyName } }`);
    expect(a).toEqual({ ...b, extensions: a.extensions });
  });
});
