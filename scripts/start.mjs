// `npm start`: the whole layer in this process, run as JavaScript from dist/ (plain `node`, no
// TypeScript loader: about 100 MB less memory than tsx, and a faster start).
//
// dist/ is built first when it is not the build of the sources as they are (its `.built`
// fingerprint differs: a fresh clone, a pull, an edit, a file added or removed; see
// scripts/build-inputs.mjs). One start builds at a time (a lock file holding its pid); the build
// goes to a private folder that then replaces dist/, so no start ever runs half a build. Without
// TypeScript installed (`npm ci --omit=dev`) nothing can be built: the sources run through tsx.
import { closeSync, existsSync, openSync, readFileSync, renameSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { fingerprint, STAMP } from './build-inputs.mjs';

const ROOT = resolve(import.meta.dirname, '..');
const DIST = join(ROOT, 'dist');
const LOCK = join(ROOT, '.build.lock');
const LOCK_WAIT_MS = 180_000;

const fresh = () => existsSync(join(DIST, STAMP)) && readFileSync(join(DIST, STAMP), 'utf8').trim() === fingerprint(ROOT);

function canBuild() {
  try {
    createRequire(import.meta.url).resolve('typescript/bin/tsc');
    return true;
  } catch {
    return false;
  }
}

/** Whether the process that wrote the lock is gone (a start that crashed mid-build). */
function lockAbandoned() {
  try {
    const pid = Number(readFileSync(LOCK, 'utf8'));
    if (!Number.isInteger(pid) || pid <= 0) return true;
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return err.code === 'ESRCH' || err.code === 'ENOENT';
  }
}

async function lock() {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const fd = openSync(LOCK, 'wx');
      writeSync(fd, String(process.pid));
      return fd;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    if (lockAbandoned()) rmSync(LOCK, { force: true });
    else if (Date.now() > deadline) throw new Error(`another start has been building dist/ for ${LOCK_WAIT_MS / 1000} s (${LOCK})`);
    else await new Promise((r) => setTimeout(r, 250));
  }
}

/** Builds dist/ when stale; false when it cannot (no TypeScript installed). */
async function ensureBuilt() {
  if (fresh()) return true;
  if (!canBuild()) return false;
  const fd = await lock();
  try {
    // Another start may have built it while this one waited.
    if (fresh()) return true;
    console.log(existsSync(DIST) ? '[setup] sources changed: building dist/ again…' : '[setup] building dist/ (first start)…');
    const tmp = join(ROOT, `.build-${process.pid}`);
    const old = join(ROOT, `.build-old-${process.pid}`);
    try {
      execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs'), '--out', tmp], { cwd: ROOT, stdio: 'inherit' });
      if (!existsSync(join(tmp, STAMP))) throw new Error(`the build wrote nothing to ${tmp}`);
      if (existsSync(DIST)) renameSync(DIST, old);
      renameSync(tmp, DIST);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
      rmSync(old, { recursive: true, force: true });
    }
    return true;
  } finally {
    closeSync(fd);
    unlinkSync(LOCK);
  }
}

if (await ensureBuilt()) {
  await import(pathToFileURL(join(DIST, 'main.js')).href);
} else {
  console.log('[setup] TypeScript is not installed (dev dependencies omitted), so dist/ cannot be built: running the sources through tsx');
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(ROOT, 'main.ts')).href);
}
