// Installs Debian's `chromium` when /usr/bin/chromium is missing, so that `npm test` can run the
// real-browser tests (test/gateway/e2e/csrf-browser.test.ts, driven by playwright-core) on a fresh machine.
// Needs apt-get and root (or passwordless sudo). When it cannot install, it says why and exits
// non-zero: the browser tests must fail rather than be skipped silently.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const CHROMIUM = '/usr/bin/chromium';

function fail(message) {
  console.error(`[setup] ${message}`);
  console.error(`[setup] The browser tests need ${CHROMIUM}. Install it with: apt-get update && apt-get install -y chromium`);
  process.exit(1);
}

function onPath(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

function run(argv) {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const result = spawnSync(argv[0], argv.slice(1), { stdio: 'inherit', env });
  if (result.error) fail(`${argv.join(' ')} could not run: ${result.error.message}`);
  if (result.status !== 0) fail(`${argv.join(' ')} failed (exit ${result.status ?? result.signal}).`);
}

if (!existsSync(CHROMIUM)) {
  if (!onPath('apt-get')) fail(`${CHROMIUM} is missing and apt-get is not available on this machine.`);
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const prefix = isRoot ? [] : onPath('sudo') ? ['sudo', '-n'] : null;
  if (!prefix) fail(`${CHROMIUM} is missing; installing it needs root (or passwordless sudo).`);
  console.log('[setup] installing chromium for the browser tests (apt-get install chromium)…');
  run([...prefix, 'apt-get', 'update']);
  run([...prefix, 'apt-get', 'install', '-y', 'chromium']);
  if (!existsSync(CHROMIUM)) fail(`apt-get install chromium finished but ${CHROMIUM} is still missing.`);
}
