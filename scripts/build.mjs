// `npm run build`: the layer as JavaScript in dist/ (git-ignored), for `node` without a TypeScript
// loader (`npm run start:prod`, `node dist/services/gateway.js`, the container image).
//
// 1. tsc with tsconfig.build.json (emit only; `.ts` import specifiers become `.js`).
// 2. Every file the code reads at run time is copied to the same place under dist/, so that
//    `new URL('./schema.graphql', import.meta.url)` and the like resolve from dist/ exactly as from
//    the sources: each non-TypeScript file of the compiled folders (schemas, vendor fixtures),
//    `supergraph.graphql` and `data/`. This list is the one place that knows what is packaged.
//
// `--out <dir>` builds elsewhere (the directory must be inside the package, for node_modules).
// The build's folder gets `.built`: the fingerprint of the sources it was built from (see
// scripts/build-inputs.mjs, which lists what is read and packaged).
import { cpSync, existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { ASSETS, CODE_DIRS, fingerprint, SKIP, STAMP } from './build-inputs.mjs';

const ROOT = resolve(import.meta.dirname, '..');
const outArg = process.argv.indexOf('--out');
const OUT = resolve(ROOT, outArg > 0 ? process.argv[outArg + 1] : 'dist');

// The fingerprint is taken before compiling: an edit made while the build runs makes the next
// `npm start` build again.
const sources = fingerprint(ROOT);
rmSync(OUT, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', OUT], { cwd: ROOT, stdio: 'inherit' });

let copied = 0;
function copyTree(rel) {
  const from = join(ROOT, rel);
  if (SKIP.test(rel)) return;
  if (statSync(from).isDirectory()) {
    for (const entry of readdirSync(from)) copyTree(join(rel, entry));
    return;
  }
  cpSync(from, join(OUT, rel));
  copied++;
}
for (const dir of CODE_DIRS) copyTree(dir);
for (const asset of ASSETS) {
  if (!existsSync(join(ROOT, asset))) throw new Error(`build: ${asset} is missing`);
  copyTree(asset);
}
console.log(`build: JavaScript and ${copied} runtime files in ${relative(ROOT, OUT) || '.'}/`);
writeFileSync(join(OUT, STAMP), `${sources}\n`);
