/**
 * The embedded emulator's settings (`npm start`, `startStack`): `EMULATOR_PORT` pins its port (parsed
 * as `npm run emulator` parses it), `EMULATOR_RISK_COMPLETE_AFTER_MS` sets how long risk requests
 * take; and the GraphiQL live-status example (OrderPatrimonialReport, then WatchRequest) does what
 * its comment says at `npm start`'s pace: PROCESSING at once, COMPLETE 30 s after the order. The
 * emulator's clock is moved by its control API (manual mode), nothing here waits for real time.
 */
import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { EXAMPLES } from '../../../gateway/examples.ts';
import { emulatorOptionsFromEnv, START_RISK_COMPLETE_AFTER_MS } from '../../../services/build.ts';
import { DEFAULT_COMPLETE_AFTER_MS } from '../../../emulator/risk/index.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';

const stacks: TestStack[] = [];
const clients: Client[] = [];
afterAll(async () => {
  for (const c of clients) await c.dispose();
  await Promise.all(stacks.map((s) => s.close()));
});

async function started(...args: Parameters<typeof startTestStack>): Promise<TestStack> {
  const t = await startTestStack(...args);
  stacks.push(t);
  return t;
}

/** A loopback port free a moment ago. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const riskTiming = async (t: TestStack): Promise<{ pending: string[]; completeAfterMs: number }> =>
  (await t.control('risk/pending', {})) as { pending: string[]; completeAfterMs: number };

describe('embedded emulator settings', () => {
  it('EMULATOR_PORT pins the embedded emulator; EMULATOR_RISK_COMPLETE_AFTER_MS sets the pace of risk requests', async () => {
    const port = await freePort();
    const t = await started({ EMULATOR_PORT: String(port), EMULATOR_RISK_COMPLETE_AFTER_MS: '2500' });
    expect(t.stack.emulatorUrl).toBe(`http://127.0.0.1:${port}`);
    expect((await riskTiming(t)).completeAfterMs).toBe(2500);
  });

  it('without them: any free port, and the emulator’s own pace (or the caller’s default, as npm start gives)', async () => {
    const t = await started();
    expect(t.stack.emulatorUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await riskTiming(t)).completeAfterMs).toBe(DEFAULT_COMPLETE_AFTER_MS);
  });

  it.each([
    ['EMULATOR_PORT', 'abc', /^Invalid setting EMULATOR_PORT="abc": expected a whole number from 0 to 65535$/],
    ['EMULATOR_PORT', '70000', /^Invalid setting EMULATOR_PORT="70000": expected a whole number from 0 to 65535$/],
    ['EMULATOR_RISK_COMPLETE_AFTER_MS', '30s', /^Invalid setting EMULATOR_RISK_COMPLETE_AFTER_MS="30s": expected a whole number of milliseconds ≥ 0$/],
    ['EMULATOR_RISK_COMPLETE_AFTER_MS', '-1', /^Invalid setting EMULATOR_RISK_COMPLETE_AFTER_MS="-1": expected a whole number of milliseconds ≥ 0$/],
  ])('refuses to start with %s=%s, naming the setting', async (name, value, message) => {
    await expect(startTestStack({ [name]: value })).rejects.toThrow(message);
  });

  it('npm run emulator reads the same settings', () => {
    const settings = expect.objectContaining({ token: 'emulator-token', maxTokens: 10_000 });
    expect(emulatorOptionsFromEnv({})).toEqual({ port: 4010, host: '127.0.0.1', settings });
    expect(emulatorOptionsFromEnv({ EMULATOR_PORT: '0', EMULATOR_RISK_COMPLETE_AFTER_MS: '0' })).toEqual({ port: 0, host: '127.0.0.1', riskCompleteAfterMs: 0, settings });
    expect(emulatorOptionsFromEnv({ EMULATOR_TOKEN: 'another-token', EMULATOR_MAX_TOKENS: '5' }).settings).toMatchObject({ token: 'another-token', maxTokens: 5 });
  });
});

describe('the live-status example at npm start’s pace', () => {
  const order = EXAMPLES.find((e) => e.title === 'OrderPatrimonialReport')!;
  const watch = EXAMPLES.find((e) => e.title === 'WatchRequest')!;

  it('says the pace it has', () => {
    expect(START_RISK_COMPLETE_AFTER_MS).toBe(30_000);
    expect(order.query).toContain('completes it 30 s after the order (EMULATOR_RISK_COMPLETE_AFTER_MS)');
    expect(watch.query).toMatch(/PROCESSING at once, COMPLETE \(with the report's URL\) 30 s after the order/);
    expect(watch.query).toContain('EMULATOR_RISK_COMPLETE_AFTER_MS, default 30000');
  });

  it('PROCESSING at once, still PROCESSING 25 s later (time to paste the id), COMPLETE at 30 s', async () => {
    // As main.ts starts it.
    const t = await started({}, { emulatorDefaults: { riskCompleteAfterMs: START_RISK_COMPLETE_AFTER_MS } });
    expect((await riskTiming(t)).completeAfterMs).toBe(START_RISK_COMPLETE_AFTER_MS);
    // The emulator's clock stands still from here: it moves only when the test says.
    await t.control('clock', { mode: 'manual' });

    const ordered = await t.gql<{ orderPatrimonialReport: { id: string; state: string } }>(order.query, order.variables);
    expect(ordered.errors).toBeUndefined();
    const { id, state } = ordered.data!.orderPatrimonialReport;
    expect(state).toBe('PROCESSING');

    const client = createClient({ url: t.stack.gateway.wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
    clients.push(client);
    const events = client.iterate<{ riskRequestUpdated: { id: string; state: string; report: { url: string } | null } }>({ query: watch.query, variables: { id } });
    const first = await events.next();
    expect(first.done).toBe(false);
    expect(first.value?.data?.riskRequestUpdated).toMatchObject({ id, state: 'PROCESSING' });

    // 25 s after the order: not complete yet.
    await t.control('clock', { advanceMs: 25_000 });
    expect((await riskTiming(t)).pending).toContain(id.toLowerCase());

    // 30 s after the order: complete, and the subscription shows it.
    await t.control('clock', { advanceMs: 5_000 });
    expect((await riskTiming(t)).pending).not.toContain(id.toLowerCase());
    const next = await events.next();
    expect(next.value?.data?.riskRequestUpdated).toMatchObject({ id, state: 'COMPLETE', report: { url: expect.stringMatching(/\/files\/risk\//) } });
    await events.return?.();
  });
});
