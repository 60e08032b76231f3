/**
 * The GraphiQL page built in a child process (`graphiql.ts` serves it). Rendering it loads
 * `@graphql-yoga/render-graphiql` (9 MB of editor source compiled into the heap) and builds 9 MB of
 * HTML; compressing it takes brotli's and zlib's working memory. In the gateway's process that work
 * left ~100 MB of RSS behind for good (measured on Node 24: +45 MB for the module, +26 MB for the
 * page, +31 MB for brotli, none of it given back), for a page that never changes. A child process
 * does it once and exits; the gateway keeps what it sends: the page in each encoding (2 MB brotli,
 * 2.4 MB gzip) and, only when it serves it uncompressed, the page itself.
 */
import { spawn } from 'node:child_process';
import type { ContentEncoding } from './compression.ts';
import type { GraphiQLPageOptions } from './graphiql.ts';

/** The page as served: its ETag's tag (a hash of the page), its length, and its bytes per encoding. */
export interface BuiltGraphiQLPage {
  tag: string;
  /** Bytes of the uncompressed page. */
  length: number;
  /** The uncompressed page, when asked for (`identity`). */
  identity: Buffer | null;
  encoded: Map<ContentEncoding, Buffer>;
}

/** What the child is told: the modules to load (the parent's own, .ts or .js) and what to build. */
interface ChildInput {
  page: string;
  compression: string;
  options: GraphiQLPageOptions;
  encodings: ContentEncoding[];
  identity: boolean;
}

/** Runs in the child (plain JavaScript, `node --input-type=module -e`): one header line, then the bodies. */
const CHILD = `
const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const input = JSON.parse(Buffer.concat(chunks).toString('utf8'));
const { renderGraphiQLPage } = await import(input.page);
const { compressBody } = await import(input.compression);
const { createHash } = await import('node:crypto');
const body = Buffer.from(await renderGraphiQLPage(input.options), 'utf8');
const parts = [];
for (const encoding of input.encodings) parts.push([encoding, await compressBody(body, encoding, { brotliQuality: 5, gzipLevel: 6 })]);
if (input.identity) parts.push(['identity', body]);
const tag = createHash('sha256').update(body).digest('base64url').slice(0, 27);
process.stdout.write(JSON.stringify({ tag, length: body.byteLength, parts: parts.map(([name, b]) => [name, b.byteLength]) }) + '\\n');
for (const [, b] of parts) process.stdout.write(b);
`;

/**
 * Renders the page with `options` and compresses it in each of `encodings` (brotli 5, gzip 6, as
 * `graphiql.ts` does in process) in a child process; `identity`: the uncompressed page too.
 */
export async function buildGraphiQLPageInChild(options: GraphiQLPageOptions, encodings: ContentEncoding[], identity: boolean): Promise<BuiltGraphiQLPage> {
  // As JSON: every rendering option goes (a function, such as `compressor`, does not).
  // The modules this one sits beside: sources under tsx and the tests (Node strips their types), dist/ once built.
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  const input: ChildInput = {
    page: new URL(`./graphiql${ext}`, import.meta.url).href,
    compression: new URL(`./compression${ext}`, import.meta.url).href,
    options,
    encodings,
    identity,
  };
  // Sources: Node's own TypeScript transform (parameter properties and enums included).
  const flags = ext === '.ts' ? ['--experimental-transform-types', '--disable-warning=ExperimentalWarning'] : [];
  const child = spawn(process.execPath, [...flags, '--input-type=module', '-e', CHILD], { stdio: ['pipe', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => err.push(c));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  child.stdin.end(JSON.stringify(input));
  const code = await exited;
  const all = Buffer.concat(out);
  const newline = all.indexOf(10);
  if (code !== 0 || newline < 0) throw new Error(`the GraphiQL page could not be built (exit ${String(code)}): ${Buffer.concat(err).toString('utf8').slice(0, 500)}`);
  const header = JSON.parse(all.subarray(0, newline).toString('utf8')) as { tag: string; length: number; parts: Array<[ContentEncoding | 'identity', number]> };
  const page: BuiltGraphiQLPage = { tag: header.tag, length: header.length, identity: null, encoded: new Map() };
  let at = newline + 1;
  for (const [name, length] of header.parts) {
    const bytes = all.subarray(at, at + length);
    at += length;
    if (bytes.byteLength !== length) throw new Error('the GraphiQL page came back truncated');
    if (name === 'identity') page.identity = bytes;
    else page.encoded.set(name, bytes);
  }
  return page;
}
