/**
 * The embedded store's plumbing (`platform/sqlite.ts`, `platform/store-choice.ts`): the settings it
 * opens a file with, its schema version, one shared connection per file, transactions that roll
 * back, expiry on the namespace's clock; which kind the environment chooses; and the self-made
 * layer secret kept in the data directory (0600, the same on the next start, shared by processes).
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { FileHandle } from 'node:fs/promises';
import { durableStore, openDatabase, sharedDatabase, SqliteKv } from '../../../platform/sqlite.ts';
import { persistentSecret, storeChoiceFromEnv } from '../../../platform/store-choice.ts';
import { layerSecret } from '../../../platform/signing.ts';
import { waitFor } from '../../support/wait.ts';

const dir = mkdtempSync(join(tmpdir(), 'embedded-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the database module', () => {
  it('opens a file in WAL mode with synchronous=NORMAL (commits are synced by `durable`), its schema at the latest version', () => {
    const db = openDatabase(join(dir, 'a', 'layer.db'));
    try {
      expect(db.get('PRAGMA journal_mode')?.journal_mode).toBe('wal');
      // 1 = NORMAL: no sync inside COMMIT, on the event loop; `durable()` syncs the WAL (below).
      expect(db.get('PRAGMA synchronous')?.synchronous).toBe(1);
      expect(db.version).toBe(1);
    } finally {
      db.release();
    }
    // Opened again: nothing applied twice.
    const again = openDatabase(join(dir, 'a', 'layer.db'));
    expect(again.all('SELECT version FROM schema_migrations')).toEqual([{ version: 1 }]);
    again.release();
  });

  it('keeps its files the owner’s only (0600), whatever the umask or an older file’s mode', () => {
    const file = join(dir, 'perm', 'layer.db');
    mkdirSync(join(dir, 'perm'), { recursive: true });
    writeFileSync(file, '');
    chmodSync(file, 0o644);
    const old = process.umask(0o022);
    try {
      const db = openDatabase(file);
      db.tx(() => db.run('CREATE TABLE IF NOT EXISTS t (x)'));
      for (const f of [file, `${file}-wal`]) expect([f, statSync(f).mode & 0o777]).toEqual([f, 0o600]);
      db.release();
    } finally {
      process.umask(old);
    }
  });

  it('shares one connection per file in a process, closed with its last user', () => {
    const file = join(dir, 'shared.db');
    const a = sharedDatabase(file);
    const b = sharedDatabase(file);
    expect(b).toBe(a);
    a.release();
    expect(() => b.get('SELECT 1')).not.toThrow();
    b.release();
    expect(() => b.get('SELECT 1')).toThrow(/closed/);
    const c = sharedDatabase(file);
    expect(c).not.toBe(a);
    c.release();
  });

  it('rolls a transaction back when it throws; a second connection sees what was committed', () => {
    const file = join(dir, 'tx.db');
    const a = openDatabase(file);
    const b = openDatabase(file);
    try {
      const ka = new SqliteKv(a, 'ns');
      const kb = new SqliteKv(b, 'ns');
      expect(() =>
        a.tx(() => {
          ka.set('x', '1');
          throw new Error('no');
        }),
      ).toThrow('no');
      expect(kb.get('x')).toBeUndefined();
      a.tx(() => ka.set('x', '2'));
      expect(kb.get('x')).toBe('2');
      expect(kb.setNx('x', '3')).toBe(false);
    } finally {
      a.release();
      b.release();
    }
  });

  it("expires rows on the namespace's clock: absent once due, then taken again; other namespaces apart", () => {
    const db = openDatabase(join(dir, 'exp.db'));
    try {
      let now = 1_000;
      const kv = new SqliteKv(db, 'one', () => now);
      const other = new SqliteKv(db, 'two', () => now);
      kv.set('k', 'v', { exp: 2_000, tag: 't' });
      other.set('k', 'w');
      expect(kv.get('k')).toBe('v');
      expect(kv.tagged('t').map((r) => r.k)).toEqual(['k']);
      now = 2_000;
      expect(kv.get('k')).toBeUndefined();
      expect(kv.tagged('t')).toEqual([]);
      expect(kv.setNx('k', 'again', { exp: 3_000 })).toBe(true);
      expect(kv.get('k')).toBe('again');
      expect(other.get('k')).toBe('w');
      now = 5_000;
      kv.sweep(true);
      expect(db.all("SELECT k FROM kv WHERE ns = 'one'")).toEqual([]);
    } finally {
      db.release();
    }
  });
});

describe('the store choice', () => {
  it('embedded by default, Redis with REDIS_URL, memory when asked; STORE of the process only when the env names no place', () => {
    const saved = process.env.STORE;
    try {
      delete process.env.STORE;
      expect(storeChoiceFromEnv({})).toEqual({ kind: 'sqlite', dataDir: join(process.cwd(), '.data'), file: join(process.cwd(), '.data', 'layer.db') });
      expect(storeChoiceFromEnv({ DATA_DIR: '/srv/x' })).toEqual({ kind: 'sqlite', dataDir: '/srv/x', file: '/srv/x/layer.db' });
      expect(storeChoiceFromEnv({ REDIS_URL: 'redis://h:6379' })).toEqual({ kind: 'redis', url: 'redis://h:6379' });
      expect(storeChoiceFromEnv({ STORE: 'memory', REDIS_URL: 'redis://h:6379' })).toEqual({ kind: 'memory' });
      expect(() => storeChoiceFromEnv({ STORE: 'redis' })).toThrow(/REDIS_URL/);
      expect(() => storeChoiceFromEnv({ STORE: 'disk' })).toThrow(/memory, sqlite or redis/);
      process.env.STORE = 'memory';
      expect(storeChoiceFromEnv({})).toEqual({ kind: 'memory' });
      expect(storeChoiceFromEnv({ DATA_DIR: '/srv/x' }).kind).toBe('sqlite');
    } finally {
      if (saved === undefined) delete process.env.STORE;
      else process.env.STORE = saved;
    }
  });
});

describe('the self-made layer secret', () => {
  it('is made once in the data directory, mode 0600, and read back the same (by the layer, without LAYER_SECRET)', () => {
    const data = join(dir, 'secret');
    const first = persistentSecret(data);
    expect(first).toHaveLength(32);
    expect(statSync(join(data, 'layer-secret')).mode & 0o777).toBe(0o600);
    expect(persistentSecret(data).equals(first)).toBe(true);
    expect(layerSecret({ DATA_DIR: data }).equals(first)).toBe(true);
    // LAYER_SECRET, when set, wins.
    expect(layerSecret({ DATA_DIR: data, LAYER_SECRET: 'a-configured-secret-0123' }).toString()).toBe('a-configured-secret-0123');
  });

  it('refuses a file that holds no secret instead of signing with it', () => {
    const data = join(dir, 'broken');
    persistentSecret(data);
    writeFileSync(join(data, 'layer-secret'), 'oops');
    expect(() => persistentSecret(data)).toThrow(/does not hold a layer secret/);
  });
});

describe('commits on disk without stopping the process (group commit)', () => {
  /** WAL syncs the test lets through one at a time: who waits for them can be seen. */
  const heldSyncs = (): { syncFile: (wal: FileHandle) => Promise<void>; held(): number; releaseNext(): Promise<void>; releaseAll(): void } => {
    const waiting: Array<() => void> = [];
    return {
      syncFile: async (wal) => {
        await new Promise<void>((resolve) => waiting.push(resolve));
        await wal.datasync();
      },
      held: () => waiting.length,
      // The next sync, once it has started.
      releaseNext: async () => {
        await waitFor(() => waiting.length > 0, 'a WAL sync to start');
        waiting.shift()!();
      },
      releaseAll: () => {
        for (const r of waiting.splice(0)) r();
      },
    };
  };
  /** Whether `p` settles within a few turns of the event loop (it cannot while its sync is held). */
  const settlesNow = async (p: Promise<unknown>): Promise<boolean> => {
    let done = false;
    p.then(
      () => (done = true),
      () => (done = true),
    );
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    return done;
  };

  it('settles only after the WAL is synced; writers waiting together share one sync; nothing written, nothing synced', async () => {
    const sync = heldSyncs();
    const db = openDatabase(join(dir, 'group', 'layer.db'), { syncFile: sync.syncFile });
    const kv = new SqliteKv(db, 'g');
    try {
      // The schema's migration was a commit.
      const opened = db.durable();
      await sync.releaseNext();
      await opened;
      const base = db.syncs;
      await db.durable();
      expect(db.syncs).toBe(base);

      for (let i = 0; i < 20; i++) kv.set(`k${i}`, 'v');
      const all = Promise.all(Array.from({ length: 20 }, () => db.durable()));
      expect(await settlesNow(all)).toBe(false);
      expect(sync.held()).toBe(1);
      await sync.releaseNext();
      await all;
      expect(db.syncs).toBe(base + 1);

      // A commit made while a sync is under way is not covered by it: it waits for the next one.
      kv.set('a', '1');
      const first = db.durable();
      kv.set('b', '2');
      const second = db.durable();
      await sync.releaseNext();
      await first;
      expect(await settlesNow(second)).toBe(false);
      await sync.releaseNext();
      await second;
      expect(db.syncs).toBe(base + 3);
    } finally {
      sync.releaseAll();
      db.release();
    }
  });

  it('a failed sync fails every later wait and every write, even if a later sync would succeed', async () => {
    let failNext = false;
    const db = openDatabase(join(dir, 'failing', 'layer.db'), {
      syncFile: async (wal) => {
        if (failNext) throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
        await wal.datasync();
      },
    });
    const kv = new SqliteKv(db, 'f');
    try {
      await db.durable();
      kv.set('a', '1');
      failNext = true;
      await expect(db.durable()).rejects.toThrow('EIO');
      failNext = false;
      // The kernel reports a lost write-back once: a sync succeeding now would prove nothing.
      await expect(db.durable()).rejects.toThrow('EIO');
      expect(() => kv.set('b', '2')).toThrow(/takes no more/);
      expect(() => db.tx(() => kv.set('c', '3'))).toThrow(/takes no more/);
      expect(kv.get('b')).toBeUndefined();
    } finally {
      db.release();
    }
  });

  it('a row another connection committed is synced before a read of it settles; a connection closing syncs what it has not', async () => {
    const file = join(dir, 'two', 'layer.db');
    const sync = heldSyncs();
    const reader = openDatabase(file, { syncFile: sync.syncFile });
    const writer = openDatabase(file);
    const readerKv = new SqliteKv(reader, 'w');
    const writerKv = new SqliteKv(writer, 'w');
    try {
      const opened = reader.durable();
      await sync.releaseNext();
      await opened;
      const base = reader.syncs;
      // Written and committed by the other connection, not yet synced by it.
      writerKv.set('k', 'v');
      expect(readerKv.get('k')).toBe('v');
      const read = reader.durable();
      expect(await settlesNow(read)).toBe(false);
      await sync.releaseNext();
      await read;
      expect(reader.syncs).toBe(base + 1);
      // Nothing new from anyone: no sync.
      await reader.durable();
      expect(reader.syncs).toBe(base + 1);

      // The reader writes, then closes before syncing; the writer's connection keeps the file
      // open, so SQLite's close does not checkpoint: the closing connection syncs the WAL itself.
      readerKv.set('mine', '1');
      reader.release();
      const closed = reader.durable();
      expect(await settlesNow(closed)).toBe(false);
      await sync.releaseNext();
      await closed;
      expect(reader.syncs).toBe(base + 2);
    } finally {
      sync.releaseAll();
      reader.release();
      writer.release();
    }
  });

  it('a store over it settles a write after its sync and a read without one; a failed write still rejects', async () => {
    const sync = heldSyncs();
    const db = openDatabase(join(dir, 'store', 'layer.db'), { syncFile: sync.syncFile });
    const kv = new SqliteKv(db, 's');
    const store = durableStore(db, {
      prefix: 'x:',
      async write(k: string) {
        kv.set(this.prefix + k, '1');
        return k;
      },
      async read(k: string) {
        return kv.get(this.prefix + k) ?? null;
      },
      async fail() {
        kv.set('x:partial', '1');
        throw new Error('refused');
      },
      size: () => kv.count(),
    });
    try {
      const opened = db.durable();
      await sync.releaseNext();
      await opened;
      const base = db.syncs;
      const written = store.write('a');
      expect(await settlesNow(written)).toBe(false);
      await sync.releaseNext();
      expect(await written).toBe('a');
      expect(db.syncs).toBe(base + 1);
      expect(await store.read('a')).toBe('1');
      expect(db.syncs).toBe(base + 1);
      expect(store.size()).toBe(1);
      const failed = store.fail();
      expect(await settlesNow(failed)).toBe(false);
      await sync.releaseNext();
      await expect(failed).rejects.toThrow('refused');
      expect(db.syncs).toBe(base + 2);
    } finally {
      sync.releaseAll();
      db.release();
    }
  });
});
