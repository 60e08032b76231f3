/**
 * The embedded store: one SQLite database file (`node:sqlite`, built into Node >= 22.5) holding what
 * the layer must not forget when it runs without Redis. Every durable store of the layer keeps its
 * rows in one generic table, `kv`, under its own namespace, so this module knows no store and no area.
 *
 * - One connection per process per file (`sharedDatabase`, reference-counted: `release()` closes it
 *   with its last user); `openDatabase` opens another one on purpose (a second "replica" in tests).
 * - WAL journal, commits on disk before anyone is told, without stopping the process for the disk:
 *   the database holds idempotency keys and the money ledger, and a commit lost to a power cut (a
 *   process crash loses nothing once SQLite has written the WAL: it is in the kernel's page cache)
 *   could be a purchase made twice. SQLite's `synchronous=FULL` would fsync the WAL inside each
 *   COMMIT, on the event loop: every request and WebSocket of the process waited for the disk
 *   (≈0.26 ms a commit on an idle local disk, milliseconds on a busy or network disk). Instead the
 *   connection runs `synchronous=NORMAL` (no sync in COMMIT; checkpoints still sync) and the
 *   stores' promises settle only after `durable()`: one `fdatasync` of the WAL file on libuv's
 *   thread pool covers every commit made before it started (group commit), so N concurrent writers
 *   share one sync and the event loop does not wait for each commit. It still waits for SQLite's
 *   automatic checkpoint (inside the COMMIT that takes the WAL past 1,000 pages: a sync of the WAL
 *   and of the database file), as it did under FULL. The stores get this from `durableStore`; a
 *   row another connection committed is synced before a read of it settles (`data_version`); a
 *   failed sync stops the connection's writes for good (the kernel reports a lost write-back once).
 * - `busy_timeout` 5 s: another process on the same file (e.g. the gateway and the subgraphs run as
 *   separate services; not replicas of one subgraph, which need Redis) holding the write
 *   lock is waited for, not failed.
 * - Transactions: `tx(fn)` runs `fn` (synchronous) between BEGIN IMMEDIATE and COMMIT: the write lock
 *   is taken first, so a read-modify-write is atomic across connections and processes (what the
 *   Redis stores do with Lua and MULTI).
 * - Schema: migrations by version (`schema_migrations`), applied once, in order, in one transaction.
 * - Expiry: a row may carry `exp` (ms, on the clock of the store that wrote it); reads treat an
 *   expired row as absent and delete it; each namespace sweeps its expired rows, 500 at a
 *   time while whole batches expire (at most 100 batches), on a write at most every 30 s.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { log } from './log.ts';

/** The schema, one step per version; a step never changes once released (add a new one). */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE kv (
     ns TEXT NOT NULL,
     k TEXT NOT NULL,
     v TEXT NOT NULL,
     exp INTEGER,
     tag TEXT,
     PRIMARY KEY (ns, k)
   ) WITHOUT ROWID;
   CREATE INDEX kv_exp ON kv (ns, exp) WHERE exp IS NOT NULL;
   CREATE INDEX kv_tag ON kv (ns, tag) WHERE tag IS NOT NULL;`,
];

export class SqliteDatabase {
  private readonly db: DatabaseSync;
  private readonly statements = new Map<string, StatementSync>();
  private depth = 0;
  private users = 1;
  private closed = false;
  /** Commits made by this connection, and how many of them are known to be on disk. */
  private commits = 0;
  private synced = 0;
  /**
   * Other connections' commits (`PRAGMA data_version` changes with each): a row this connection
   * reads may be one they have not synced yet, so a sync also covers what it saw of theirs.
   */
  private syncedVersion = 0;
  /** The sync under way (group commit: later commits wait for the next one). */
  private syncing: Promise<void> | null = null;
  private wal: Promise<FileHandle | null> | null = null;
  /**
   * A sync that failed: the kernel reports a failed write-back once and may drop the pages, so a
   * later sync succeeding proves nothing. From then on every `durable()` fails and no write is
   * taken; a restart recovers what is really on disk.
   */
  private failure: Error | null = null;
  /** The last sync, made when the connection closed (`release`). */
  private finalSync: Promise<void> = Promise.resolve();
  /** The file is in WAL mode (an in-memory database is not). */
  private readonly walMode: boolean;

  private constructor(
    readonly file: string,
    private readonly onClose: () => void,
    private readonly syncFile: (wal: FileHandle) => Promise<void>,
  ) {
    // The directory is the owner's only (the rows hold sealed tokens; the key is beside them).
    if (file !== ':memory:') {
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      // The file (and so its -wal and -shm, which SQLite creates with the database's mode) is the
      // owner's only, whatever the umask or an older file's mode.
      closeSync(openSync(file, 'a', 0o600));
      for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(f)) chmodSync(f, 0o600);
    }
    this.db = new DatabaseSync(file);
    this.db.exec('PRAGMA busy_timeout = 5000');
    // A file system without WAL support (shared memory) leaves SQLite in its rollback journal: then
    // SQLite syncs inside COMMIT (FULL) and `durable()` has nothing to do.
    this.walMode = this.db.prepare('PRAGMA journal_mode = WAL').get()?.journal_mode === 'wal';
    // No sync inside COMMIT: `durable()` syncs the WAL off the event loop (see the module doc).
    this.db.exec(this.walMode ? 'PRAGMA synchronous = NORMAL' : 'PRAGMA synchronous = FULL');
    this.migrate();
  }

  /** A new connection to `file` (created with its directory when missing), its schema brought up to date. */
  static open(file: string, onClose: () => void = () => undefined, opts: OpenOptions = {}): SqliteDatabase {
    return new SqliteDatabase(file, onClose, opts.syncFile ?? ((wal) => wal.datasync()));
  }

  private migrate(): void {
    this.tx(() => {
      this.db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
      const row = this.db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get();
      const current = typeof row?.v === 'number' ? row.v : 0;
      for (let v = current + 1; v <= MIGRATIONS.length; v++) {
        this.db.exec(MIGRATIONS[v - 1]);
        this.db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(v, Date.now());
      }
    });
  }

  /** The schema version of the file. */
  get version(): number {
    const row = this.get('SELECT MAX(version) AS v FROM schema_migrations');
    return typeof row?.v === 'number' ? row.v : 0;
  }

  private statement(sql: string): StatementSync {
    if (this.closed) throw new Error(`the embedded store ${this.file} is closed`);
    let s = this.statements.get(sql);
    if (!s) this.statements.set(sql, (s = this.db.prepare(sql)));
    return s;
  }

  run(sql: string, ...params: SQLInputValue[]): number {
    this.writable();
    const changes = Number(this.statement(sql).run(...params).changes);
    // Outside a transaction a statement commits on its own (a sync with nothing new is cheap; the
    // count of changed rows is not reliable after every kind of statement).
    if (this.depth === 0) this.commits++;
    return changes;
  }

  private writable(): void {
    if (this.failure) throw new Error(`the embedded store ${this.file} lost a write to the disk and takes no more: restart the process`, { cause: this.failure });
  }

  /**
   * Resolves once every commit this connection made so far, and every commit of another connection
   * it may have read, is on disk (the WAL file synced): the stores settle their promises after it
   * (`durableStore`). Commits waiting together share one sync, run on libuv's thread pool; nothing
   * to sync resolves at once. Rejects when the disk failed, then and ever after.
   */
  async durable(): Promise<void> {
    if (!this.walMode) return;
    if (this.closed) return this.finalSync;
    const target = this.commits;
    const version = this.dataVersion();
    while (this.synced < target || this.syncedVersion < version) {
      if (this.failure) throw this.failure;
      this.syncing ??= this.startSync();
      await this.syncing;
    }
    if (this.failure) throw this.failure;
  }

  private dataVersion(): number {
    const v = this.statement('PRAGMA data_version').get()?.data_version;
    return typeof v === 'number' ? v : 0;
  }

  /** One sync of the WAL covering what was committed and seen before it started. */
  private startSync(): Promise<void> {
    const upTo = this.commits;
    const version = this.closed ? this.syncedVersion : this.dataVersion();
    return this.syncWal()
      .then(
        () => {
          this.synced = Math.max(this.synced, upTo);
          this.syncedVersion = Math.max(this.syncedVersion, version);
        },
        (err: unknown) => {
          this.failure ??= err instanceof Error ? err : new Error(String(err));
          log.error({ err: this.failure, file: this.file }, '[store] the embedded store could not sync its journal to disk: it takes no more writes; restart the process');
        },
      )
      .finally(() => {
        this.syncing = null;
      });
  }

  /** How many syncs of the WAL this connection made (for tests: group commit). */
  syncs = 0;

  private async syncWal(): Promise<void> {
    if (!this.wal) {
      // The WAL exists from the first commit on and stays while a connection is open. Its directory
      // entry is made durable once, as SQLite does for a file it creates.
      this.wal = (async () => {
        const handle = await open(`${this.file}-wal`, 'r').catch((err: unknown) => {
          // Closed as the file's last connection: SQLite checkpointed the WAL into the database,
          // synced both and removed it. Nothing is left to sync.
          if (this.closed && (err as { code?: string }).code === 'ENOENT') return null;
          throw err;
        });
        if (handle === null) return null;
        try {
          const dir = await open(dirname(this.file), 'r');
          try {
            await dir.sync();
          } finally {
            await dir.close();
          }
        } catch (err) {
          await handle.close();
          throw err;
        }
        return handle;
      })();
      this.wal.catch(() => {
        this.wal = null;
      });
    }
    const handle = await this.wal;
    if (handle === null) return;
    this.syncs++;
    await this.syncFile(handle);
  }

  get(sql: string, ...params: SQLInputValue[]): Record<string, unknown> | undefined {
    return this.statement(sql).get(...params);
  }

  all(sql: string, ...params: SQLInputValue[]): Array<Record<string, unknown>> {
    return this.statement(sql).all(...params);
  }

  /** Runs `fn` in one write transaction (BEGIN IMMEDIATE … COMMIT; ROLLBACK when it throws); nested calls join the outer one. */
  tx<T>(fn: () => T): T {
    if (this.depth > 0) return fn();
    this.writable();
    this.db.exec('BEGIN IMMEDIATE');
    this.depth++;
    try {
      const out = fn();
      this.db.exec('COMMIT');
      this.commits++;
      return out;
    } catch (err) {
      if (this.db.isTransaction) this.db.exec('ROLLBACK');
      throw err;
    } finally {
      this.depth--;
    }
  }

  /** One more user of a shared connection. */
  retain(): this {
    this.users++;
    return this;
  }

  /** One user fewer; the connection closes with its last. */
  release(): void {
    if (this.closed || --this.users > 0) return;
    this.closed = true;
    this.onClose();
    this.statements.clear();
    this.db.close();
    // SQLite syncs on close only as the file's last connection (its checkpoint): commits not yet
    // synced get one last sync of the WAL, through the handle still open, then it is closed.
    // `durable()` on the closed connection waits for it.
    this.finalSync = (async () => {
      await this.syncing;
      if (this.walMode && this.failure === null && this.synced < this.commits) await this.startSync();
      const wal = this.wal;
      this.wal = null;
      await (await wal?.catch(() => null))?.close();
      if (this.failure) throw this.failure;
    })();
    this.finalSync.catch(() => undefined);
  }
}

/**
 * `store` whose every asynchronous method settles only once what it wrote is on disk
 * (`SqliteDatabase.durable`, group commit): the embedded stores are written synchronously and made
 * durable here, in one place, so no store can forget to wait (and none waits on the event loop).
 */
export function durableStore<T extends object>(db: SqliteDatabase, store: T): T {
  const wrapped = new WeakMap<(...a: unknown[]) => unknown, (...a: unknown[]) => unknown>();
  const proxy = new Proxy(store, {
    get(target, prop) {
      // Getters run on the store itself (its private fields are there, not on the proxy).
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function' || prop === 'constructor') return value;
      const method = value as (...a: unknown[]) => unknown;
      let wrapper = wrapped.get(method);
      if (!wrapper) {
        wrapper = (...args: unknown[]): unknown => {
          const out: unknown = Reflect.apply(method, target, args);
          if (!(out instanceof Promise)) return out;
          return out.then(
            async (v: unknown) => {
              await db.durable();
              return v;
            },
            async (err: unknown) => {
              await db.durable().catch(() => undefined);
              throw err;
            },
          );
        };
        wrapped.set(method, wrapper);
      }
      return wrapper;
    },
  });
  durableStores.add(proxy);
  return proxy;
}

const durableStores = new WeakSet<object>();
/** Whether `store` settles its writes once they are on disk (made by `durableStore`): for the factories' tests. */
export const isDurableStore = (store: object): boolean => durableStores.has(store);

const shared = new Map<string, SqliteDatabase>();

/** The process's connection to `file` (opened on first use); call `release()` when done with it. */
export function sharedDatabase(file: string): SqliteDatabase {
  const held = shared.get(file);
  if (held) return held.retain();
  const db = SqliteDatabase.open(file, () => shared.delete(file));
  shared.set(file, db);
  return db;
}

/** A new connection of its own to `file` (not shared): another replica's view of the same rows. */
export const openDatabase = (file: string, opts: OpenOptions = {}): SqliteDatabase => SqliteDatabase.open(file, undefined, opts);

export interface OpenOptions {
  /** Makes the WAL file's content durable (tests hold it to see who waits). @default `fdatasync` */
  syncFile?: (wal: FileHandle) => Promise<void>;
}

export interface KvRow {
  k: string;
  v: string;
  exp: number | null;
  tag: string | null;
}

export interface KvWrite {
  /** Expiry (ms on the namespace's clock); null: never. @default null */
  exp?: number | null;
  /** The row's tag (e.g. `unfinished`), listed by `tagged`. @default null */
  tag?: string | null;
}

const SWEEP_EVERY_MS = 30_000;
const SWEEP_BATCH = 500;
/** Batches a sweep deletes at most (50,000 rows every 30 s per namespace). */
const SWEEP_MAX_BATCHES = 100;

/** The rows of one namespace of the `kv` table, expiring on the namespace's clock. */
export class SqliteKv {
  private lastSweep = 0;

  constructor(
    readonly db: SqliteDatabase,
    readonly ns: string,
    private readonly now: () => number = Date.now,
  ) {}

  private live(row: Record<string, unknown> | undefined): KvRow | undefined {
    if (!row) return undefined;
    const r = row as unknown as KvRow;
    if (r.exp !== null && r.exp <= this.now()) {
      this.db.run('DELETE FROM kv WHERE ns = ? AND k = ? AND exp <= ?', this.ns, r.k, this.now());
      return undefined;
    }
    return r;
  }

  row(k: string): KvRow | undefined {
    return this.live(this.db.get('SELECT k, v, exp, tag FROM kv WHERE ns = ? AND k = ?', this.ns, k));
  }

  get(k: string): string | undefined {
    return this.row(k)?.v;
  }

  /** Writes `k` (replacing what it held). `keepExp`: an existing row keeps its expiry. */
  set(k: string, v: string, w: KvWrite & { keepExp?: boolean } = {}): void {
    this.sweep();
    const exp = w.exp ?? null;
    const tag = w.tag ?? null;
    if (w.keepExp) {
      this.db.run('INSERT INTO kv (ns, k, v, exp, tag) VALUES (?, ?, ?, ?, ?) ON CONFLICT (ns, k) DO UPDATE SET v = excluded.v, tag = excluded.tag', this.ns, k, v, exp, tag);
    } else {
      this.db.run(
        'INSERT INTO kv (ns, k, v, exp, tag) VALUES (?, ?, ?, ?, ?) ON CONFLICT (ns, k) DO UPDATE SET v = excluded.v, exp = excluded.exp, tag = excluded.tag',
        this.ns,
        k,
        v,
        exp,
        tag,
      );
    }
  }

  /** Writes `k` only when it holds nothing live (atomic: one statement); true when written. */
  setNx(k: string, v: string, w: KvWrite = {}): boolean {
    this.sweep();
    return (
      this.db.run(
        'INSERT INTO kv (ns, k, v, exp, tag) VALUES (?, ?, ?, ?, ?) ON CONFLICT (ns, k) DO UPDATE SET v = excluded.v, exp = excluded.exp, tag = excluded.tag WHERE kv.exp IS NOT NULL AND kv.exp <= ?',
        this.ns,
        k,
        v,
        w.exp ?? null,
        w.tag ?? null,
        this.now(),
      ) === 1
    );
  }

  /** Sets the expiry of a live row; false when there is none. */
  expire(k: string, exp: number | null): boolean {
    return this.db.run('UPDATE kv SET exp = ? WHERE ns = ? AND k = ? AND (exp IS NULL OR exp > ?)', exp, this.ns, k, this.now()) === 1;
  }

  delete(k: string): boolean {
    return this.db.run('DELETE FROM kv WHERE ns = ? AND k = ?', this.ns, k) === 1;
  }

  /** Live rows whose key starts with `prefix`, by key. */
  scan(prefix: string): KvRow[] {
    return this.db.all(
      'SELECT k, v, exp, tag FROM kv WHERE ns = ? AND k >= ? AND k < ? AND (exp IS NULL OR exp > ?) ORDER BY k',
      this.ns,
      prefix,
      `${prefix}\uffff`,
      this.now(),
    ) as unknown as KvRow[];
  }

  /** Live rows tagged `tag`. */
  tagged(tag: string): KvRow[] {
    return this.db.all('SELECT k, v, exp, tag FROM kv WHERE ns = ? AND tag = ? AND (exp IS NULL OR exp > ?)', this.ns, tag, this.now()) as unknown as KvRow[];
  }

  /** Live rows of the namespace. */
  count(): number {
    return Number(this.db.get('SELECT COUNT(*) AS n FROM kv WHERE ns = ? AND (exp IS NULL OR exp > ?)', this.ns, this.now())?.n ?? 0);
  }

  /** Deletes up to `n` live rows, soonest-expiring first (bounds a namespace); returns their keys. */
  dropSoonest(n: number): string[] {
    if (n <= 0) return [];
    const keys = (this.db.all('SELECT k FROM kv WHERE ns = ? ORDER BY exp IS NULL, exp LIMIT ?', this.ns, n) as Array<{ k: string }>).map((r) => r.k);
    for (const k of keys) this.delete(k);
    return keys;
  }

  /** Deletes at most 500 expired rows of the namespace, at most once every 30 s (on writes). */
  sweep(force = false): void {
    const t = Date.now();
    if (!force && t - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = t;
    // Batch after batch while a whole one expired (up to SWEEP_MAX_BATCHES a sweep, each its own
    // short statement): rows expiring faster than one batch per sweep never pile up.
    for (let i = 0; i < SWEEP_MAX_BATCHES; i++) {
      const gone = this.db.run(
        'DELETE FROM kv WHERE ns = ? AND k IN (SELECT k FROM kv WHERE ns = ? AND exp IS NOT NULL AND exp <= ? LIMIT ?)',
        this.ns,
        this.ns,
        this.now(),
        SWEEP_BATCH,
      );
      if (gone < SWEEP_BATCH) break;
    }
  }
}
