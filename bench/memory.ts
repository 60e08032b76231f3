/**
 * The layer's memory alone, as `npm start` runs it (`npx tsx bench/memory.ts`): RSS after one
 * query, after GraphiQL's page was served once, and the peak under 200 concurrent connections,
 * read from /proc of the layer's own process (the client is never counted). `npm run bench` prints
 * the same readings beside the bare-runtime baseline (`speed.ts`).
 */
import { measureLayerMemory } from './speed.ts';

const runs = Number(process.env.BENCH_MEMORY_RUNS ?? 3);
console.log(`Node ${process.versions.node} (the layer runs under the same binary)`);
for (let i = 0; i < runs; i++) {
  const m = await measureLayerMemory();
  console.log(
    `run ${i + 1}: idle after one query ${m.idleMb.toFixed(0)} MB, after GraphiQL ${m.graphiqlMb?.toFixed(0) ?? '-'} MB, under 200 connections (peak) ${m.loadedMb.toFixed(0)} MB`,
  );
}
