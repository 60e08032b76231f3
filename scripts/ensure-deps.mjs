// Installs the locked dependencies when they are missing or older than the lockfile, so that
// `npm start` and `npm test` work on a fresh clone without a separate `npm install`; and brings a
// supported Node where the machine's own is older than the project's floor.
//
// The floor is what the dependencies declare (the gateway runtime's Fetch layer, `@whatwg-node/*`,
// needs Node >= 22.15). The project lists the npm registry's `node` package (which ships the Node
// binary) as a dev dependency, so `npm ci` puts Node 24 at `node_modules/.bin/node`; npm puts that
// folder first on every script's PATH, so every `npm run`/`npm start`/`npm test` script and every
// tool it starts (`#!/usr/bin/env node`) runs under it. The install itself must run under a
// supported Node too (under 20, npm warns EBADENGINE for ~150 packages): on an older machine Node
// is first fetched into `.node/` (the same package, once) and `npm ci` runs under that.
//
// This file runs under whatever Node the machine has (20 included): plain ESM, no dependency.
import { existsSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { execFileSync, execSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
/** The oldest Node the dependencies support: package.json's `engines.node` (`>=22.15.0`). */
const NODE_FLOOR = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  .engines.node.replace(/^>=\s*/, '')
  .split('.')
  .map(Number);
/** The Node fetched where the machine's is older than the floor (the reference: Node 24 LTS). */
const NODE_PACKAGE = 'node@24';

const older = (version, floor) => {
  const v = version.split('.').map(Number);
  for (let i = 0; i < floor.length; i++) if ((v[i] ?? 0) !== floor[i]) return (v[i] ?? 0) < floor[i];
  return false;
};

/** npm's own CLI script, to run it under another Node than the one npm was started with. */
function npmCli() {
  const candidates = [process.env.npm_execpath];
  try {
    const npm = realpathSync(execSync('command -v npm', { encoding: 'utf8', shell: '/bin/sh' }).trim());
    candidates.push(npm, join(dirname(npm), 'npm-cli.js'), join(dirname(npm), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'));
  } catch {
    // no npm on PATH: only npm_execpath is left
  }
  return candidates.find((c) => c && /npm-cli\.js$/.test(c) && existsSync(c));
}

/** The version a Node binary says it is, or null when it does not run (missing, half installed). */
function versionOf(bin) {
  try {
    return execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

/** Node >= the floor for installing: this one, else `.node/`'s (fetched once from the npm registry). */
function installNode() {
  if (!older(process.versions.node, NODE_FLOOR)) return process.execPath;
  const bin = join(ROOT, '.node', 'node_modules', 'node', 'bin', 'node');
  if (versionOf(bin) === null) {
    // Missing, or left half installed by an interrupted fetch: fetched again from scratch.
    rmSync(join(ROOT, '.node'), { recursive: true, force: true });
    console.log(`[setup] fetching ${NODE_PACKAGE} from the npm registry into .node/ (once)…`);
    execSync(`npm install --prefix .node --no-save --no-package-lock --no-audit --no-fund --loglevel=error ${NODE_PACKAGE}`, { cwd: ROOT, stdio: 'inherit' });
    if (versionOf(bin) === null) throw new Error(`${NODE_PACKAGE} was fetched into .node/ but its binary does not run: ${bin}`);
  }
  return bin;
}

const marker = join(ROOT, 'node_modules', '.package-lock.json');
const stale = !existsSync(marker) || statSync(join(ROOT, 'package-lock.json')).mtimeMs > statSync(marker).mtimeMs + 1000;
if (stale) {
  const node = installNode();
  const cli = node === process.execPath ? undefined : npmCli();
  console.log('[setup] installing dependencies (npm ci)…');
  // --include=dev: the `node` dev dependency is what runs the scripts, even under NODE_ENV=production.
  if (cli) execFileSync(node, [cli, 'ci', '--include=dev', '--no-audit', '--no-fund'], { cwd: ROOT, stdio: 'inherit' });
  else execSync('npm ci --include=dev --no-audit --no-fund', { cwd: ROOT, stdio: 'inherit' });
}

if (older(process.versions.node, NODE_FLOOR)) {
  const local = join(ROOT, 'node_modules', '.bin', 'node');
  const version = versionOf(local);
  if (version === null) {
    console.error(
      `[setup] Node ${process.versions.node} is older than ${NODE_FLOOR.join('.')} and node_modules/.bin/node does not run: remove node_modules and run the command again`,
    );
    process.exit(1);
  }
  console.log(`[setup] this machine's Node ${process.versions.node} is older than ${NODE_FLOOR.join('.')}: the scripts run Node ${version.slice(1)} from node_modules/.bin`);
}
