/**
 * Where the layer keeps what it must not forget, as the environment says:
 *
 * - `redis` with `REDIS_URL`: shared by every replica (keys under `REDIS_PREFIX`);
 * - `sqlite` otherwise (the default): the embedded store, `<DATA_DIR>/layer.db`, kept across
 *   restarts of a single machine's processes. `DATA_DIR` defaults to `.data` under the working
 *   directory (the project's root under the npm scripts; the Docker image sets `/data`);
 * - `memory` when `STORE=memory`: one process, lost on restart (tests, throwaway runs).
 *
 * `STORE` (`memory` | `sqlite` | `redis`) forces a kind. It is read from the environment given,
 * else (when that names neither `REDIS_URL` nor `DATA_DIR`) from the process's own, so a test run
 * chooses memory once for every stack it builds (`vitest.config.ts`; `loadSettings` does it); every
 * other setting is read from the environment given only.
 *
 * A secret the layer makes for itself (no `LAYER_SECRET`) lives in `<DATA_DIR>/layer-secret`
 * (mode 0600) with the embedded store, so tokens signed before a restart verify after it.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { settingsOf, type SettingsSource } from './settings.ts';

export type StoreKind = 'memory' | 'sqlite' | 'redis';

export type StoreChoice = { kind: 'memory' } | { kind: 'sqlite'; dataDir: string; file: string } | { kind: 'redis'; url: string };

/** The data directory: `DATA_DIR`, else `.data` under the working directory. */
export function dataDirFromEnv(env: SettingsSource): string {
  return resolve(settingsOf(env).DATA_DIR ?? '.data');
}

export function storeChoiceFromEnv(source: SettingsSource): StoreChoice {
  const env = settingsOf(source);
  const url = env.REDIS_URL ?? '';
  const forced = env.STORE;
  if (forced === 'memory') return { kind: 'memory' };
  if (forced === 'redis' || (forced === null && url !== '')) {
    if (url === '') throw new Error('STORE=redis needs REDIS_URL');
    return { kind: 'redis', url };
  }
  const dataDir = resolve(env.DATA_DIR ?? '.data');
  return { kind: 'sqlite', dataDir, file: join(dataDir, 'layer.db') };
}

const SECRET_FILE = 'layer-secret';

/**
 * The secret kept in `dataDir` (made on first use: 32 random bytes, hex, mode 0600). Two processes
 * starting at once agree: each writes a whole file of its own and links it into place (a link
 * never replaces a file), and the loser reads the winner's.
 */
export function persistentSecret(dataDir: string): Buffer {
  const file = join(dataDir, SECRET_FILE);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (!existsSync(file)) {
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(tmp, randomBytes(32).toString('hex'), { mode: 0o600 });
    try {
      linkSync(tmp, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      unlinkSync(tmp);
    }
  }
  // The mode an older or hand-made file may have wider.
  chmodSync(file, 0o600);
  const hex = readFileSync(file, 'utf8').trim();
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`${file} does not hold a layer secret (64 hex characters): remove it or set LAYER_SECRET`);
  return Buffer.from(hex, 'hex');
}
