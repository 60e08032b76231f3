/**
 * Heap a hostile request can cause (issue 18): the one-process stack (emulator, subgraphs, gateway,
 * as `npm start`), each request sent alone and four at once, the V8 heap sampled every 2 ms while it
 * is handled (peak `heapUsed` over the value before), after a full GC when `--expose-gc` is given.
 * The largest is a body at the limits made of files (strings the scan lets through to JSON.parse).
 *
 *   node --expose-gc --max-old-space-size=256 --import tsx bench/limits.ts
 */
import { request } from 'undici';
import { startTestStack } from '../test/support/stack.ts';
import { DEFAULT_JSON_LIMITS } from '../platform/json-limits.ts';

const t = await startTestStack({ LAYER_SECRET: 'bench-limits-secret-0123456789abcdef', RISK_POLL_MAX_CALLS_PER_MIN: '0' });
const gc = (globalThis as { gc?: () => void }).gc;

const wrap = (inner: Buffer): Buffer => Buffer.concat([Buffer.from('{"query":"{ __typename }","variables":{"v":'), inner, Buffer.from('}}')]);
function emptyObjects(n: number): Buffer {
  const b = Buffer.alloc(3 * n + 1, '{},');
  b[0] = 0x5b;
  b.write('{}]', 3 * n - 2);
  return b;
}
/** Files at the limits: 14 MiB of file contents in strings of 1 MiB, and some structure. */
function filesAtLimit(): Buffer {
  const file = `"${'A'.repeat(2 ** 20 - 2)}"`;
  const count = Math.floor(DEFAULT_JSON_LIMITS.maxUploadBytes / (2 ** 20 - 64 * 1024));
  return Buffer.from(`[${Array.from({ length: count }, () => file).join(',')}]`);
}

const cases: Array<[string, Buffer]> = [
  ['2,000,000 empty objects (5.7 MB)', wrap(emptyObjects(2_000_000))],
  ['3,000,000 empty objects (8.6 MB)', wrap(emptyObjects(3_000_000))],
  ['1,000,000-deep arrays', wrap(Buffer.concat([Buffer.alloc(1_000_000, '['), Buffer.alloc(1_000_000, ']')]))],
  ['document { a × 2,400', Buffer.from(JSON.stringify({ query: `${'{ a '.repeat(2400)}${'}'.repeat(2400)}` }))],
  [`files at the limits (${(filesAtLimit().length / 2 ** 20).toFixed(1)} MiB, accepted)`, wrap(filesAtLimit())],
];

async function post(body: Buffer): Promise<number> {
  const res = await request(t.stack.gateway.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' }, body });
  await res.body.arrayBuffer();
  return res.statusCode;
}

async function peak(work: () => Promise<number[]>): Promise<{ mib: number; statuses: number[] }> {
  gc?.();
  const before = process.memoryUsage().heapUsed;
  let max = before;
  const timer = setInterval(() => (max = Math.max(max, process.memoryUsage().heapUsed)), 2);
  const statuses = await work();
  clearInterval(timer);
  max = Math.max(max, process.memoryUsage().heapUsed);
  return { mib: (max - before) / 2 ** 20, statuses };
}

console.log(`heap limit ${(await import('node:v8')).getHeapStatistics().heap_size_limit / 2 ** 20} MiB, gc ${gc ? 'exposed' : 'not exposed'}`);
for (const [name, body] of cases) {
  const one = await peak(async () => [await post(body)]);
  const four = await peak(() => Promise.all([1, 2, 3, 4].map(() => post(body))));
  const eight = await peak(() => Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map(() => post(body))));
  console.log(
    `${name}: alone +${one.mib.toFixed(1)} MiB (${one.statuses.join()}), 4 at once +${four.mib.toFixed(1)} MiB (${four.statuses.join()}), 8 at once +${eight.mib.toFixed(1)} MiB`,
  );
}
await t.close();
