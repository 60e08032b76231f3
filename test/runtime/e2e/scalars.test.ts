/**
 * The shared `DateTime` scalar: bad input is `BAD_USER_INPUT`, never read as "no value" (for
 * `riskRequestsUpdated(since:)` that meant replaying everything). Through the gateway, as a client
 * sends it (inline literal and variable, over graphql-ws and SSE), and the scalar itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';
import { Kind } from 'graphql';
import { DateTimeScalar, parseIsoDateTime } from '../../../subgraphs/runtime/scalars.ts';
import { CF } from '../../support/risk.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { within } from '../../support/wait.ts';

type Result = FormattedExecutionResult<Record<string, unknown>, unknown>;

const SAFETY_MS = 10_000;
const SINCE_VAR = 'subscription($since: DateTime) { riskRequestsUpdated(since: $since) { id } }';
const sinceInline = (value: string): string => `subscription { riskRequestsUpdated(since: ${JSON.stringify(value)}) { id } }`;

let t: TestStack;
let client: Client;
beforeAll(async () => {
  t = await startTestStack();
  client = createClient({ url: t.stack.gateway.wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
});
afterAll(async () => {
  await client?.dispose();
  await t?.close();
});

async function first(query: string, variables?: Record<string, unknown>): Promise<Result> {
  const results = client.iterate<Record<string, unknown>>({ query, variables });
  try {
    const next = await within(results.next(), 'a result', SAFETY_MS);
    return next.value as Result;
  } finally {
    await results.return?.();
  }
}

const BAD = ['garbage', '', '2024-05-01', '2024-05-01T12:00:00', '2024-05-01 12:00:00Z', '2023-02-30T00:00:00Z', '2024-05-01T25:00:00Z', '1714564800'];

describe('DateTime through the gateway', () => {
  it.each(BAD)('refuses since: %j as an inline literal with BAD_USER_INPUT', async (value) => {
    const res = await first(sinceInline(value));
    expect(res.errors?.[0]?.extensions?.code, JSON.stringify(res)).toBe('BAD_USER_INPUT');
    expect(res.errors?.[0]?.message).toMatch(/ISO 8601/);
    expect(res.data ?? null).toBeNull();
  });

  it.each(BAD)('refuses since: %j as a variable with BAD_USER_INPUT', async (value) => {
    const res = await first(SINCE_VAR, { since: value });
    expect(res.errors?.[0]?.extensions?.code, JSON.stringify(res)).toBe('BAD_USER_INPUT');
    expect(res.errors?.[0]?.message).toMatch(/ISO 8601/);
  });

  it('refuses a number as a variable or literal', async () => {
    expect((await first(SINCE_VAR, { since: 1714564800 })).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((await first('subscription { riskRequestsUpdated(since: 1714564800) { id } }')).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('refuses garbage over SSE too', async () => {
    const res = await fetch(t.stack.gateway.graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: SINCE_VAR, variables: { since: 'garbage' } }),
      signal: AbortSignal.timeout(SAFETY_MS),
    });
    const text = await res.text();
    const data = /data: ?(\{.*\})/.exec(text)?.[1];
    expect((JSON.parse(data ?? '{}') as Result).errors?.[0]?.extensions?.code, text).toBe('BAD_USER_INPUT');
  });

  it('accepts a valid ISO 8601 date-time (inline and variable, any offset) and filters by it', async () => {
    const order = await t.gql<{ orderPatrimonialReport: { id: string } }>(
      `mutation { orderPatrimonialReport(input: { name: "MARIO", surname: "ROSSI", taxCode: "${CF}" }) { id } }`,
    );
    expect(order.errors).toBeUndefined();
    const id = order.data!.orderPatrimonialReport.id;
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const inline = await first(sinceInline(hourAgo));
    expect(inline.errors).toBeUndefined();
    expect(inline.data).toEqual({ riskRequestsUpdated: { id } });
    // The same instant an hour ago, written with a +02:00 offset and no fraction.
    const d = new Date(Date.now() - 3_600_000 + 2 * 3_600_000);
    const withOffset = `${d.toISOString().slice(0, 19)}+02:00`;
    const variable = await first(SINCE_VAR, { since: withOffset });
    expect(variable.errors).toBeUndefined();
    expect(variable.data).toEqual({ riskRequestsUpdated: { id } });
  });
});

describe('DateTime scalar', () => {
  it('parses ISO 8601 date-times with a time zone, in UTC', () => {
    expect(DateTimeScalar.parseValue('2024-05-01T12:00:00Z')).toBe('2024-05-01T12:00:00.000Z');
    expect(DateTimeScalar.parseValue('2024-05-01T14:30+02:00')).toBe('2024-05-01T12:30:00.000Z');
    expect(DateTimeScalar.parseValue('2024-05-01t12:00:00.123456z')).toBe('2024-05-01T12:00:00.123Z');
    expect(DateTimeScalar.parseValue('2024-05-01T07:00:00-0500')).toBe('2024-05-01T12:00:00.000Z');
    expect(DateTimeScalar.parseValue('2024-02-29T00:00:00Z')).toBe('2024-02-29T00:00:00.000Z');
    expect(DateTimeScalar.parseLiteral({ kind: Kind.STRING, value: '2024-05-01T12:00:00Z' }, undefined)).toBe('2024-05-01T12:00:00.000Z');
  });

  it('throws BAD_USER_INPUT on anything else', () => {
    for (const v of [...BAD, '2023-02-29T00:00:00Z', '2024-05-01T12:00:00+24:00', null, 42, {}, []]) {
      expect(() => DateTimeScalar.parseValue(v), JSON.stringify(v)).toThrow(expect.objectContaining({ extensions: { code: 'BAD_USER_INPUT' } }));
    }
    expect(() => DateTimeScalar.parseLiteral({ kind: Kind.INT, value: '1714564800' }, undefined)).toThrow(expect.objectContaining({ extensions: { code: 'BAD_USER_INPUT' } }));
    expect(parseIsoDateTime('2024-05-01T12:00:00Z')).toBe(Date.UTC(2024, 4, 1, 12));
  });

  it('serializes a Date or an ISO string, in UTC', () => {
    expect(DateTimeScalar.serialize(new Date(Date.UTC(2024, 4, 1, 12)))).toBe('2024-05-01T12:00:00.000Z');
    expect(DateTimeScalar.serialize('2024-05-01T14:00:00+02:00')).toBe('2024-05-01T12:00:00.000Z');
    expect(() => DateTimeScalar.serialize('garbage')).toThrow();
    expect(() => DateTimeScalar.serialize(new Date(Number.NaN))).toThrow();
  });
});
