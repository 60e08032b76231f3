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
import { openDatabase, sharedDatabase, SqliteKv } from '../../../platform/sqlite.ts';
import { persistentSecret, storeChoiceFromEnv } from '../../../platform/store-choice.ts';
import { layerSecret } from '../../../platform/signing.ts';

const dir = mkdtempSync(join(tmpdir(), 'embedded-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the database module', () => {
  it('opens a file in WAL mode with synchronous=FULL, its schema at the latest version', () => {
    const db = openDatabase(join(dir, 'a', 'layer.db'));
    try {
      expect(db.get('PRAGMA journal_mode')?.journal_mode).toBe('wal');
      // 2 = FULL
      expect(db.get('PRAGMA synchronous')?.synchronous).toBe(2);
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
