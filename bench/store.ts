/**
 * The embedded store's commits (`platform/sqlite.ts`), part of `npm run bench` and runnable alone
 * (`npx tsx bench/store.ts`): what a paid call's bookkeeping costs the process when every commit
 * must be on disk before anyone is told, in three ways, in the same run on the same disk:
 *
 * - **sync in COMMIT** (`synchronous=FULL`, what the layer did before): SQLite fsyncs the WAL inside
 *   each COMMIT, on the event loop;
 * - **group commit** (the layer now): `synchronous=NORMAL`, and each writer waits for
 *   `durable()`, one `fdatasync` of the WAL on libuv's thread pool for every commit waiting together;
 * - **no disk** (the bare baseline): the same statements on an in-memory database.
 *
 * Each writer runs, for `BENCH_STORE_MS` (default 2000) ms, the bookkeeping of one paid call (a
 * transaction of three upserts, as the ledger and the pending store make), waits for it to be
 * durable and lets the event loop turn, again and again; `BENCH_STORE_WRITERS` (default `1,16`) writers at once. Printed:
 * commits per second, WAL syncs per commit, CPU per commit, and how late the event loop answered
 * meanwhile (`monitorEventLoopDelay`, p99 and max): every other request and WebSocket of the process
 * waits that long.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { openDatabase, type SqliteDatabase } from '../platform/sqlite.ts';

type Mode = 'sync in COMMIT' | 'group commit' | 'no disk';
const MODES: Mode[] = ['sync in COMMIT', 'group commit', 'no disk'];

export interface StoreRow {
  mode: Mode;
  writers: number;
  commitsPerSecond: number;
  syncsPerCommit: number;
  cpuUsPerCommit: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

const UPSERT = 'INSERT INTO kv (ns, k, v, exp, tag) VALUES (?, ?, ?, ?, ?) ON CONFLICT (ns, k) DO UPDATE SET v = excluded.v, exp = excluded.exp, tag = excluded.tag';

async function measure(mode: Mode, writers: number, ms: number, dir: string): Promise<StoreRow> {
  const db: SqliteDatabase = openDatabase(mode === 'no disk' ? ':memory:' : join(dir, `${mode.replace(/\W/g, '')}-${writers}`, 'layer.db'));
  if (mode === 'sync in COMMIT') db.run('PRAGMA synchronous = FULL');
  await db.durable();
  const syncs0 = db.syncs;
  const loop = monitorEventLoopDelay({ resolution: 1 });
  let commits = 0;
  const until = performance.now() + ms;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  loop.enable();
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let i = 0; performance.now() < until; i++) {
        db.tx(() => {
          db.run(UPSERT, 'ledger', `op:${w}:${i}`, JSON.stringify({ euro: 0.03, at: Date.now() }), Date.now() + 3_600_000, null);
          db.run(UPSERT, 'ledger', `day:${w}`, String(i), null, null);
          db.run(UPSERT, 'pending', `call:${w}:${i}`, 'sent', Date.now() + 60_000, 'unfinished');
        });
        // FULL synced inside COMMIT: nothing more to wait for (the layer before).
        if (mode !== 'sync in COMMIT') await db.durable();
        commits++;
        // The rest of the operation: the event loop turns between two paid calls of a writer.
        await new Promise((r) => setImmediate(r));
      }
    }),
  );
  loop.disable();
  const elapsed = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const row: StoreRow = {
    mode,
    writers,
    commitsPerSecond: commits / (elapsed / 1000),
    syncsPerCommit: (db.syncs - syncs0) / commits,
    cpuUsPerCommit: (cpu.user + cpu.system) / commits,
    loopDelayP99Ms: loop.percentile(99) / 1e6,
    loopDelayMaxMs: loop.max / 1e6,
  };
  db.release();
  return row;
}

export async function runStoreBench(): Promise<StoreRow[]> {
  const ms = Number(process.env.BENCH_STORE_MS ?? 2000);
  const writerCounts = (process.env.BENCH_STORE_WRITERS ?? '1,16').split(',').map(Number);
  const dir = mkdtempSync(join(tmpdir(), 'bench-store-'));
  const rows: StoreRow[] = [];
  try {
    for (const writers of writerCounts) for (const mode of MODES) rows.push(await measure(mode, writers, ms, dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `\nThe embedded store's commits: a paid call's bookkeeping (one transaction, three upserts) made durable before the writer goes on, ${ms} ms per row, on ${tmpdir()}.\n`,
  );
  console.log('| writers | mode | commits/s | WAL syncs/commit | CPU/commit | event loop delay p99 | max |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.writers} | ${r.mode} | ${r.commitsPerSecond.toFixed(0)} | ${r.mode === 'group commit' ? r.syncsPerCommit.toFixed(2) : r.mode === 'no disk' ? '—' : '1 (in COMMIT)'} | ${r.cpuUsPerCommit.toFixed(0)} µs | ${r.loopDelayP99Ms.toFixed(2)} ms | ${r.loopDelayMaxMs.toFixed(2)} ms |`,
    );
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) await runStoreBench();
