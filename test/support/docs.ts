/**
 * The documentation as data: README.md and docs/*.md, their example operations with the figures
 * they quote, and their relative links. Used by test/docs/e2e/figures.test.ts and test/docs/unit/links.test.ts.
 *
 * An example is a ```graphql block right after a marker comment naming it and its figures:
 *
 *     <!-- example: company-profile calls=2 euro=0.65 again.calls=0 again.euro=0 -->
 *     ```graphql
 *     query { … }
 *     ```
 *
 * optionally followed by a ```json block of variables. Keys: `calls` (extensions.cost.upstreamCalls,
 * and the emulator's call log), `euro` (extensions.cost.euro), `estimate` (extensions.cost.estimate.euro),
 * `code` (the only error's extensions.code; none without it), `from` (extensions.cost.answeredFrom),
 * `estimateOnly=true` (sent with the header `x-openapi-estimate-only: true`); the same with `again.`
 * for the same operation run a second time by the same caller, and with `other.` for it run next by
 * another caller (a new account). Unit prices: `<!-- prices: … -->` (see `docPrices`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, relative } from 'node:path';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface DocFile {
  /** Path from the project's root (`README.md`, `docs/cost-and-budgets.md`). */
  path: string;
  text: string;
}

/** README.md and every page under docs/. */
export function docFiles(): DocFile[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => join(ROOT, 'docs', f));
  return [join(ROOT, 'README.md'), ...docs].map((abs) => ({ path: relative(ROOT, abs), text: readFileSync(abs, 'utf8') }));
}

export interface Figures {
  calls?: number;
  euro?: number;
  estimate?: number;
  code?: string;
  /** extensions.cost.answeredFrom (`response-cache`, `in-flight`). */
  from?: string;
  /** Sent with `x-openapi-estimate-only: true`: nothing runs, the answer is the estimate. */
  estimateOnly?: boolean;
}

export interface DocExample {
  name: string;
  file: string;
  query: string;
  variables?: Record<string, unknown>;
  first: Figures;
  again?: Figures;
  /** The same operation run next by another caller (a new account), caches kept. */
  other?: Figures;
}

const MARKER = /<!--\s*example:\s*([\w-]+)((?:\s+[\w.]+=[^\s]+)*)\s*-->\s*\n```graphql\n([\s\S]*?)```(?:\s*\n```json\n([\s\S]*?)```)?/g;

function figures(pairs: Array<[string, string]>): Figures | undefined {
  if (pairs.length === 0) return undefined;
  const out: Figures = {};
  for (const [key, value] of pairs) {
    if (key === 'code') out.code = value;
    else if (key === 'from') out.from = value;
    else if (key === 'estimateOnly') out.estimateOnly = value === 'true';
    else if (key === 'calls' || key === 'euro' || key === 'estimate') {
      const n = Number(value);
      if (!Number.isFinite(n)) throw new Error(`figure ${key}=${value} is not a number`);
      out[key] = n;
    } else throw new Error(`unknown figure ${key}`);
  }
  return out;
}

/** Every marked example of every page. */
export function docExamples(files: DocFile[] = docFiles()): DocExample[] {
  const out: DocExample[] = [];
  for (const file of files) {
    for (const m of file.text.matchAll(MARKER)) {
      const pairs = (m[2] ?? '')
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map((p) => p.split('=', 2) as [string, string]);
      const first = figures(pairs.filter(([k]) => !k.includes('.')));
      const prefixed = (prefix: string): Figures | undefined => figures(pairs.filter(([k]) => k.startsWith(prefix)).map(([k, v]) => [k.slice(prefix.length), v]));
      const again = prefixed('again.');
      const other = prefixed('other.');
      const variables = m[4] === undefined ? undefined : (JSON.parse(m[4]) as Record<string, unknown>);
      out.push({ name: m[1], file: file.path, query: m[3], variables, first: first ?? {}, again, other });
    }
  }
  return out;
}

/** The ```graphql blocks of a page (marked or not). */
export function graphqlBlocks(text: string): string[] {
  return [...text.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1]);
}

export interface DocLink {
  file: string;
  target: string;
}

/** Every relative link of a page (`[text](target)`, outside code), http(s) and mailto excluded. */
export function relativeLinks(file: DocFile): DocLink[] {
  const prose = file.text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((m) => m[1])
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
    .map((target) => ({ file: file.path, target }));
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a page's headings (repeated headings get -1, -2, … as on GitHub). */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const prose = text.replace(/```[\s\S]*?```/g, '');
  for (const m of prose.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

export interface DocPrice {
  file: string;
  /** `prices`: the built-in table (DEFAULT_PRICE_TABLE); `subscription-prices`: INVOICE_SUBSCRIPTION_PRICES. */
  table: 'prices' | 'subscription-prices';
  /** A price key, `"<area> <METHOD> <endpoint>"` (`pec POST pec`). */
  key: string;
  euro: number;
}

/**
 * Unit prices a page quotes, each list in a marker beside the text:
 * `<!-- prices: pec POST pec=5, pec GET pec/{id}/rinnovo=5 -->`.
 */
export function docPrices(files: DocFile[] = docFiles()): DocPrice[] {
  const out: DocPrice[] = [];
  for (const file of files) {
    for (const m of file.text.matchAll(/<!--\s*(prices|subscription-prices):\s*([\s\S]*?)-->/g)) {
      for (const entry of m[2]
        .split(',')
        .map((e) => e.trim())
        .filter(Boolean)) {
        const at = entry.lastIndexOf('=');
        const euro = Number(entry.slice(at + 1));
        if (at < 0 || !Number.isFinite(euro)) throw new Error(`${file.path}: bad price entry "${entry}"`);
        out.push({ file: file.path, table: m[1] as DocPrice['table'], key: entry.slice(0, at).trim(), euro });
      }
    }
  }
  return out;
}
