/**
 * Per-tenant retention probe: runs the one-process stack (emulator, subgraphs, gateway) in this
 * process and sends N operations, each under a new caller token (a new tenant, passed through to
 * upstream), then reports heapUsed after GC against a warmed-up baseline: the bytes the layer and
 * the emulator keep per distinct caller.
 *
 *   node --expose-gc --import tsx bench/tenants.ts [N=20000] [query] [--tokens=random|minted] [--warm=2000] [--snapshot]
 *
 * `--tokens=minted` creates each token at the emulator first (in process, as its control API does),
 * so that upstream calls are answered rather than refused with 401; `--warm` tenants are sent before the baseline (more than
 * the bounds below, and the baseline holds every bounded map full: what grows after it is unbounded);
 * `--snapshot` writes a heap snapshot at the end. The bounds may be lowered for a short run:
 * `GATEWAY_RESPONSE_CACHE_MAX_ENTRIES`, `OPENAPI_CACHE_MAX_ENTRIES`, `EMULATOR_MAX_TOKENS` (read from this
 * process's environment).
 * Prints one JSON line (`bytesPerTenant`: heap growth after GC per tenant past the baseline).
 */
import { randomBytes } from 'node:crypto';
import { writeHeapSnapshot } from 'node:v8';
import { Agent, request } from 'undici';
import { startEmulator } from '../emulator/server.ts';
import { startStack } from '../stack.ts';
import { embeddedEmulatorOptionsFromEnv } from '../services/build.ts';

const args = process.argv.slice(2);
const flags = new Set(args.filter((a) => a.startsWith('--')));
const positional = args.filter((a) => !a.startsWith('--'));
const n = Number(positional[0] ?? 20_000);
const query = positional[1] ?? '{ postalCode(code: "00136") { code } }';
const minted = flags.has('--tokens=minted');
const warm = Number(args.find((a) => a.startsWith('--warm='))?.slice('--warm='.length) ?? 2_000);
const concurrency = 32;

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run node with --expose-gc');
/**
 * The heap after full collections, with a turn of the event loop between them: a WeakMap keyed by
 * requests (sessions, operation ids, memoised plugin work) keeps the table it grew to under load
 * until a collection after its entries died; collected back to back, that capacity was counted as
 * state per tenant (2.5 MB of empty tables over 15,000 callers, seen in a heap snapshot).
 */
const heapAfterGc = async (): Promise<number> => {
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage().heapUsed;
};

const bounds = { GATEWAY_RESPONSE_CACHE_MAX_ENTRIES: process.env.GATEWAY_RESPONSE_CACHE_MAX_ENTRIES, OPENAPI_CACHE_MAX_ENTRIES: process.env.OPENAPI_CACHE_MAX_ENTRIES };
// The emulator in this process too, started here to mint tokens without a control-API request each.
// Its settings (EMULATOR_MAX_TOKENS, …) from this process's environment, as `npm start` gives them.
const emulator = await startEmulator({ ...embeddedEmulatorOptionsFromEnv(process.env), port: 0 });
const stack = await startStack({ env: { OPENAPI_ENV: 'emulator', LOG_LEVEL: 'error', ...bounds }, port: 0, emulatorUrl: emulator.url });
const dispatcher = new Agent({ connections: concurrency, keepAliveTimeout: 30_000 });

const tokenFor = (): string => (minted ? emulator.tokens.create({ credit: 1 }).token : randomBytes(18).toString('base64url'));

const statuses = new Map<string, number>();
async function one(): Promise<void> {
  const token = tokenFor();
  const res = await request(stack.gateway.graphqlUrl, {
    method: 'POST',
    dispatcher,
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query }),
  });
  const body = (await res.body.json()) as { errors?: Array<{ extensions?: { code?: string } }> };
  const k = `${res.statusCode} ${body.errors?.[0]?.extensions?.code ?? 'ok'}`;
  statuses.set(k, (statuses.get(k) ?? 0) + 1);
}

async function run(count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next++;
        await one();
      }
    }),
  );
}

// The public postal answer cached once (with the emulator's own token): later callers' random
// tokens are then answered from the layer's cache, without an upstream call.
await request(stack.gateway.graphqlUrl, {
  method: 'POST',
  dispatcher,
  headers: { 'content-type': 'application/json', authorization: 'Bearer emulator-token' },
  body: JSON.stringify({ query }),
}).then((r) => r.body.text());
await run(warm);
const before = await heapAfterGc();
const started = Date.now();
// Full collections every 1,000 callers, as a process under steady load has them: a WeakMap keyed by
// requests (sessions, operation ids, memoised plugin work) keeps the table it grew to between two
// collections, and run back to back, 15,000 callers grew four of them to 256 KB each (seen in a heap
// snapshot): capacity, not state kept per tenant.
for (let done = 0; done < n; done += 1_000) {
  await run(Math.min(1_000, n - done));
  gc();
}
const ms = Date.now() - started;
const after = await heapAfterGc();
console.log(
  JSON.stringify({
    n,
    warm,
    query,
    minted,
    ms,
    opsPerS: Math.round((n * 1000) / ms),
    heapBeforeMB: +(before / 2 ** 20).toFixed(1),
    heapAfterMB: +(after / 2 ** 20).toFixed(1),
    bytesPerTenant: Math.round((after - before) / n),
    statuses: Object.fromEntries(statuses),
  }),
);
if (flags.has('--snapshot')) console.log(writeHeapSnapshot());
await dispatcher.close();
await stack.close();
await emulator.close();
