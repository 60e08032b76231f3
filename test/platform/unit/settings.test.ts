/**
 * The settings (`platform/settings.ts`): one schema, parsed once into a typed, frozen object; a bad
 * value is one line naming the setting and what is expected (never a secret's value), and stops a
 * start with exit code 1; `docs/configuration.md` is the schema's, and nothing else in product code
 * reads `process.env`.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  areaSetting,
  isSettings,
  PDF_AREAS,
  SUBGRAPH_URL_NAMES,
  TRACKED_AREAS,
  loadSettings,
  parseSetting,
  secretValues,
  SETTINGS_SCHEMA,
  settingsOf,
  SettingsError,
  SUBJECTS,
  type SettingSpec,
  type Settings,
} from '../../../platform/settings.ts';
import { CONFIGURATION_DOC, renderConfiguration } from '../../../scripts/settings-doc.ts';
import { baseEnv } from '../../../services/processes.ts';
import { AREA_REGISTRY, SUBGRAPH_NAMES } from '../../../subgraphs/index.ts';
import type { AreaDescriptor } from '../../../subgraphs/runtime/area.ts';

const ROOT = join(import.meta.dirname, '../../..');

/** The message of what `fn` throws. */
function thrown(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(SettingsError);
    return (err as Error).message;
  }
  throw new Error('nothing thrown');
}

describe('the parser', () => {
  it('gives every setting its default, typed, in a frozen object', () => {
    const s: Settings = loadSettings({});
    expect(Object.isFrozen(s)).toBe(true);
    expect(Object.keys(s).sort()).toEqual(Object.keys(SETTINGS_SCHEMA).sort());
    expect(s.OPENAPI_ENV).toBe('emulator');
    expect(s.OPENAPI_MAX_RETRIES).toBe(2);
    expect(s.MAX_BODY_BYTES).toBe(1024 * 1024);
    expect(s.GATEWAY_COMPRESSION).toBe(true);
    expect(s.OPENAPI_TOKEN).toBeNull();
    expect(s.RISK_POLL_INTERVAL_MS).toBe(5000);
    expect(s.PEC_MAX_PDF_BYTES).toBe(5 * 1024 * 1024);
    expect(() => ((s as { PORT: number }).PORT = 1)).toThrow(TypeError);
  });

  it('reads each type: numbers, booleans, enums (with aliases), URLs, text; empty is unset', () => {
    const s = loadSettings({
      PORT: ' 8080 ',
      OPENAPI_MAX_EURO_PER_OPERATION: '2.5',
      OPENAPI_PRECHECK: 'YES',
      GATEWAY_COMPRESSION: 'off',
      LOG_LEVEL: 'Silent',
      COMPANY_SLOW_PURCHASE: 'poll',
      OPENAPI_RISK_URL: 'http://proxy.example/risk/',
      REDIS_URL: 'rediss://user:pa55word@redis.example:6380',
      HOST: '',
    });
    expect(s.PORT).toBe(8080);
    expect(s.OPENAPI_MAX_EURO_PER_OPERATION).toBe(2.5);
    expect(s.OPENAPI_PRECHECK).toBe(true);
    expect(s.GATEWAY_COMPRESSION).toBe(false);
    expect(s.LOG_LEVEL).toBe('off');
    expect(s.COMPANY_SLOW_PURCHASE).toBe('get');
    expect(s.OPENAPI_RISK_URL).toBe('http://proxy.example/risk/');
    expect(s.HOST).toBe('127.0.0.1');
    expect(secretValues(s)).toEqual(['pa55word']);
  });

  it.each([
    ['MAX_BODY_BYTES', 'abc', 'Invalid setting MAX_BODY_BYTES="abc": expected a whole number of bytes ≥ 1'],
    ['MAX_BODY_BYTES', '0', 'Invalid setting MAX_BODY_BYTES="0": expected a whole number of bytes ≥ 1'],
    ['PORT', '1.5', 'Invalid setting PORT="1.5": expected a whole number from 0 to 65535'],
    ['OPENAPI_TIMEOUT_MS', '-5', 'Invalid setting OPENAPI_TIMEOUT_MS="-5": expected a whole number of milliseconds ≥ 0'],
    ['OPENAPI_MAX_EURO_PER_DAY', 'ten', 'Invalid setting OPENAPI_MAX_EURO_PER_DAY="ten": expected a number ≥ 0'],
    ['OPENAPI_ENV', 'staging', 'Invalid setting OPENAPI_ENV="staging": expected emulator, sandbox or production'],
    ['GATEWAY_RESPONSE_CACHE', 'maybe', 'Invalid setting GATEWAY_RESPONSE_CACHE="maybe": expected on or off (also 1/0, true/false, yes/no)'],
    ['PUBLIC_URL', 'ftp://x', 'Invalid setting PUBLIC_URL="ftp://x": expected an http/https URL'],
  ])('refuses %s=%s with one line naming it', (name, value, message) => {
    expect(thrown(() => loadSettings({ [name]: value }))).toBe(message);
  });

  it("never shows a secret's value", () => {
    expect(thrown(() => loadSettings({ LAYER_SECRET: 'too-short' }))).toBe('Invalid setting LAYER_SECRET: expected a secret of at least 16 characters');
    expect(thrown(() => loadSettings({ REDIS_URL: 'http://user:hunter22@host' }))).toBe('Invalid setting REDIS_URL: expected a redis/rediss URL');
    expect(thrown(() => loadSettings({ OPENAPI_ACCOUNT_API_KEY: 'short-key' }))).not.toContain('short-key');
  });

  it('parses once: settings given are handed back as they are; variables are parsed', () => {
    const s = loadSettings({ PORT: '1234' });
    expect(isSettings(s)).toBe(true);
    expect(settingsOf(s)).toBe(s);
    expect(isSettings({ PORT: '1234' })).toBe(false);
    expect(settingsOf({ PORT: '1234' }).PORT).toBe(1234);
  });

  it("STORE alone falls back to the process's when the env given does not place the state", () => {
    // vitest.config.ts sets STORE=memory for the run.
    expect(process.env.STORE).toBe('memory');
    expect(loadSettings({}).STORE).toBe('memory');
    expect(loadSettings({ DATA_DIR: '/srv/x' }).STORE).toBeNull();
    expect(loadSettings({ STORE: 'sqlite' }).STORE).toBe('sqlite');
  });

  it("an area's settings by suffix", () => {
    const s = loadSettings({ PEC_POLL_MAX_CALLS_PER_MIN: '7' });
    expect(areaSetting(s, 'pec', 'POLL_MAX_CALLS_PER_MIN')).toBe(7);
    expect(areaSetting(s, 'risk', 'MAX_PDF_BYTES')).toBe(5 * 1024 * 1024);
    expect(() => areaSetting(s, 'postal', 'POLL_INTERVAL_MS')).toThrow(/POSTAL_POLL_INTERVAL_MS/);
  });

  it('every spec is complete: a description, a subject, processes, a default of its type within its bounds', () => {
    for (const [name, spec] of Object.entries(SETTINGS_SCHEMA as Readonly<Record<string, SettingSpec>>)) {
      expect(name).toMatch(/^[A-Z][A-Z0-9_]+$/);
      expect(spec.description.length, name).toBeGreaterThan(10);
      expect(Object.keys(SUBJECTS), name).toContain(spec.subject);
      expect(spec.process.length, name).toBeGreaterThan(0);
      if (spec.default !== null) expect(parseSetting(name, spec, String(spec.default)), name).toEqual(spec.default);
    }
  });
});

describe('the per-area settings', () => {
  it('cover every subgraph (SUBGRAPH_<NAME>_URL) and every area with tracked work (<AREA>_POLL_*, …)', () => {
    expect([...SUBGRAPH_URL_NAMES].sort()).toEqual([...SUBGRAPH_NAMES].sort());
    // The areas of the registry with tracked work (their descriptor names tracking-kit families).
    const tracked = AREA_REGISTRY.filter((a: AreaDescriptor) => (a.trackingFamilies?.length ?? 0) > 0).map((a) => a.name);
    expect(tracked.length).toBeGreaterThan(0);
    expect([...TRACKED_AREAS].sort()).toEqual(tracked.sort());
    for (const area of PDF_AREAS) expect(TRACKED_AREAS).toContain(area);
  });
});

describe('docs/configuration.md', () => {
  it('is generated from the schema (run `npm run settings-doc` after changing it)', () => {
    expect(readFileSync(CONFIGURATION_DOC, 'utf8')).toBe(renderConfiguration());
  });

  it('lists every setting', () => {
    const doc = readFileSync(CONFIGURATION_DOC, 'utf8');
    for (const name of Object.keys(SETTINGS_SCHEMA)) expect(doc).toContain(`| \`${name}\` |`);
  });
});

describe('product code', () => {
  const PRODUCT = ['main.ts', 'stack.ts', 'contract', 'platform', 'gateway', 'subgraphs', 'emulator', 'services'];
  /** The one reader of the environment, and the helper that builds spawned processes' environments. */
  const ALLOWED = new Set(['platform/settings.ts', 'services/processes.ts']);

  function* files(path: string): Generator<string> {
    const full = join(ROOT, path);
    if (path.endsWith('.ts')) return yield full;
    for (const e of readdirSync(full, { withFileTypes: true })) {
      if (e.isDirectory() && e.name !== 'generated' && e.name !== 'fixtures') yield* files(join(path, e.name));
      else if (e.isFile() && /\.(ts|mjs)$/.test(e.name)) yield join(full, e.name);
    }
  }

  it('reads process.env nowhere but platform/settings.ts', () => {
    const readers: string[] = [];
    for (const path of PRODUCT) {
      for (const file of files(path)) {
        const rel = relative(ROOT, file);
        // Comments may name it; code may not.
        const code = readFileSync(file, 'utf8')
          .replace(/\/\*[\s\S]*?\*\//g, '')
          .replace(/^\s*\/\/.*$/gm, '');
        if (!ALLOWED.has(rel) && /process\.env\b|from 'node:process'/.test(code)) readers.push(rel);
      }
    }
    expect(readers).toEqual([]);
  });
});

/** Runs `node <args>` in the project with `env`; resolves with its exit code and output. */
function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: ROOT, env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr });
    });
  });
}

describe('a start with a bad setting', () => {
  it.each([
    ['npm start (main.ts)', ['--import', 'tsx', 'main.ts'], '[start]'],
    ['npm run gateway', ['--import', 'tsx', 'services/gateway.ts'], '[gateway]'],
  ])('%s stops with one line naming the setting, exit code 1', async (_, args, prefix) => {
    const { code, stdout, stderr } = await run(args, baseEnv({ MAX_BODY_BYTES: 'abc' }));
    expect(code).toBe(1);
    expect(stderr.trim()).toBe(`${prefix} Invalid setting MAX_BODY_BYTES="abc": expected a whole number of bytes ≥ 1`);
    expect(stdout).not.toMatch(/listening|ready|at .*\.ts:\d+/);
  });

  it('npm run subgraph: a bad secret is named, its value never printed', async () => {
    const { code, stdout, stderr } = await run(['--import', 'tsx', 'services/subgraph.ts', 'risk'], baseEnv({ LAYER_SECRET: 'not-long-enough' }));
    expect(code).toBe(1);
    expect(stderr.trim()).toBe('[subgraph] Invalid setting LAYER_SECRET: expected a secret of at least 16 characters');
    expect(stdout + stderr).not.toContain('not-long-enough');
  });
});
