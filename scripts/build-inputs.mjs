// What the build reads and packages (`scripts/build.mjs`), and a fingerprint of it, by which
// `npm start` (`scripts/start.mjs`) tells whether dist/ is the build of the sources as they are.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Folders compiled by tsconfig.build.json; their non-TypeScript files are copied beside the code. */
export const CODE_DIRS = ['platform', 'contract', 'services', 'gateway', 'subgraphs', 'emulator'];
/** Files and folders read at run time outside those (copied as they are). */
export const ASSETS = ['supergraph.graphql', 'data'];
/** Top-level sources and settings the build reads. */
export const INPUTS = ['main.ts', 'stack.ts', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json', 'scripts/build.mjs', 'scripts/build-inputs.mjs'];
/** Not sources: generated types, installed packages. */
const NOT_SOURCE = /(^|\/)(__generated__|node_modules)(\/|$)/;
/** Never packaged (copied as is): what is not a source, and what the compiler reads instead. */
export const SKIP = new RegExp(`${NOT_SOURCE.source}|\\.(ts|tsbuildinfo)$`);
/** The file in a build's folder holding the fingerprint of the sources it was built from. */
export const STAMP = '.built';

/**
 * A hash of every input's path, size and modification time: a file added, removed, moved or
 * changed gives another fingerprint.
 */
export function fingerprint(root) {
  const hash = createHash('sha256');
  const visit = (rel) => {
    const path = join(root, rel);
    if (!existsSync(path) || NOT_SOURCE.test(rel)) return;
    const st = statSync(path);
    if (st.isDirectory()) {
      for (const entry of readdirSync(path).sort()) visit(join(rel, entry));
      return;
    }
    hash.update(`${rel}\u0000${st.size}\u0000${st.mtimeMs}\n`);
  };
  for (const rel of [...CODE_DIRS, ...ASSETS, ...INPUTS]) visit(rel);
  return hash.digest('hex');
}
