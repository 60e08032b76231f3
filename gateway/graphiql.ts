/**
 * The offline GraphiQL page (`@graphql-yoga/render-graphiql`, 9 MB of HTML with the editor inlined),
 * served at `GET /graphql` to browsers (`Accept: text/html`) by the gateway itself rather than by the
 * runtime: the page never changes while the process runs, so it is rendered once, and compressed at
 * most once per encoding (brotli, gzip: 2 MB on the wire) the first time a browser asks for it,
 * instead of being rendered and compressed again for every visit. An ETag lets a browser keep it.
 * The rendering and compressing run in a child process (`graphiql-build.ts`), whose memory goes with
 * it: done in the gateway's process, they kept ~100 MB of its RSS.
 *
 * What the bundled GraphiQL (v5) does not do as shipped, set up here:
 * - the tab open at load takes its editors' text from its storage (`graphiql:query`,
 *   `graphiql:variables`), not from its own `defaultTabs` entry: without variables its Run fails with
 *   `Variable "$vatCode" … was not provided`. A script seeds them on a first visit (no `graphiql:tabState`
 *   yet); the `query`/`variables` options would do it too, but GraphiQL opens a new tab for them on
 *   every reload once tabs are stored;
 * - its tab strip is a drag-to-reorder list whose drag gesture swallows the first click on a tab
 *   (a second click switches): a capturing listener keeps the tab buttons' pointer presses from the
 *   drag handler, so one click switches (tabs can no longer be dragged to reorder them);
 * - the variables pane is open at load, and the docs explorer is the sidebar's book button;
 * - headers typed in the headers pane (a token) are not kept in the browser's storage;
 * - the cost panel (`graphiql-cost.ts`): the estimate before Run, the actual cost after, spending.
 *
 * Left as shipped: GraphiQL reads the query editor 100 ms after its text changes (a debounce), and
 * only then updates the operation name Run sends; a Run pressed within 100 ms of a tab switch sends
 * the previous tab's name and fails with "Cannot infer operation …" (pressed again, it runs). No
 * person is that fast; the browser test waits for the tab's text to be stored before it presses Run.
 *
 * The page is not framed by other sites (`frame-ancestors 'none'`, `X-Frame-Options`), nor served in
 * trusted-documents mode (GraphiQL could run none of its own documents there).
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GraphiQLOptions } from 'graphql-yoga';
import { compressBody, negotiateEncoding, type ContentEncoding } from './compression.ts';
import type { ExampleOperation } from './examples.ts';
import { costPluginScript, RENDER_CALL, RENDER_THROUGH_PLUGIN, withExtraPlugins } from './graphiql-cost.ts';
import type { GatewayRoute } from './index.ts';
import { buildGraphiQLPageInChild, type BuiltGraphiQLPage } from './graphiql-build.ts';
import { log } from '../platform/log.ts';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';

export interface GraphiQLPageOptions {
  /** @default 'openapi-supergraph' */
  title?: string;
  /** One tab each, the first open at load. */
  examples: readonly ExampleOperation[];
  /** Path of the GraphQL endpoint the page is served at and talks to. @default '/graphql' */
  endpoint?: string;

  /** Set: the page is not served, this short text is (e.g. trusted-documents mode). */
  disabled?: string;
  /** Serve the page compressed when the browser accepts it. @default true */
  compress?: boolean;
  /** Work around the tab strip's swallowed first click (see the module's comment). @default true */
  oneClickTabs?: boolean;
  /** The compressor (tests count its calls). @default compressBody */
  compressor?: typeof compressBody;
  /** The cost panel: the estimate before Run, the actual cost after, spending (`graphiql-cost.ts`). @default true */
  costPanel?: boolean;
}

export type GraphiQLPageSettings = GraphiQLOptions;

const json = (v: Record<string, unknown> | undefined): string | null => (v ? JSON.stringify(v, null, 2) : null);

/** The options the page is rendered with (see the module's comment). */
export function graphiqlSettings(opts: GraphiQLPageOptions): GraphiQLPageSettings {
  return {
    title: opts.title ?? 'openapi-supergraph',
    endpoint: opts.endpoint ?? '/graphql',
    subscriptionsProtocol: 'WS',
    defaultTabs: opts.examples.map((e) => ({ query: e.query, variables: json(e.variables) })),
    defaultEditorToolsVisibility: 'variables',
    shouldPersistHeaders: false,
  };
}

/** A value written into an inline script: JSON, with `<` escaped so no `</script>` ends it early. */
const scriptValue = (v: string): string => JSON.stringify(v).replace(/</g, '\\u003c');

/** Seeds the open tab's editors with the first example on a first visit (see the module's comment). */
function seedFirstTab(first: ExampleOperation | undefined): string {
  if (!first) return '';
  return `<script>
try {
  if (window.localStorage.getItem('graphiql:tabState') === null) {
    window.localStorage.setItem('graphiql:query', ${scriptValue(first.query)});
    window.localStorage.setItem('graphiql:variables', ${scriptValue(json(first.variables) ?? '')});
  }
} catch (e) {}
</script>`;
}

/**
 * Runs before GraphiQL's own code: a pointer press on a tab button does not reach the tab strip's
 * drag handler (React listens at the root, so a capturing listener on the window comes first); the
 * click that follows reaches the button as usual.
 */
const ONE_CLICK_TABS = `<style>.graphiql-tab { transform: none !important; }</style>
<script>
window.addEventListener('pointerdown', function (event) {
  var target = event.target;
  if (target instanceof Element && target.closest('.graphiql-tab-button')) event.stopPropagation();
}, true);
</script>`;

/**
 * Every example's tab title whole in one row from 1,440 px wide (GraphiQL's strip scrolls and cuts
 * the last title otherwise): tabs 4 px apart instead of 8, 4 px less room beside the close button
 * (20 px, positioned over the padding), and the logo as its icon alone (its text, the page title,
 * wraps onto two lines and takes 150 px; the browser tab shows the title).
 */
const TAB_STRIP = `<style>.graphiql-tabs { gap: 4px; } .graphiql-tab-button { padding-right: 24px; } .graphiql-logo span { display: none; }</style>
`;

/**
 * The page's HTML. The renderer is loaded on first use: its module holds the 9 MB editor bundle as
 * a string, which a gateway nobody opens GraphiQL on never needs in memory.
 */
export async function renderGraphiQLPage(opts: GraphiQLPageOptions): Promise<string> {
  const { renderGraphiQL } = await import('@graphql-yoga/render-graphiql');
  let html = renderGraphiQL(graphiqlSettings(opts));
  let panel = '';
  const call = html.lastIndexOf(RENDER_CALL);
  if (opts.costPanel !== false && call >= 0) {
    html = html.slice(0, call) + RENDER_THROUGH_PLUGIN + html.slice(call + RENDER_CALL.length);
    const patched = withExtraPlugins(html);
    html = patched.html;
    panel = costPluginScript({ endpoint: opts.endpoint ?? '/graphql', patched: patched.patched });
  }
  const at = html.indexOf('<script>');
  const before = TAB_STRIP + (opts.oneClickTabs === false ? '' : ONE_CLICK_TABS) + seedFirstTab(opts.examples[0]) + panel;
  return at < 0 ? html : html.slice(0, at) + before + html.slice(at);
}

/** Whether a request asks for the page: GET or HEAD of the endpoint, accepting HTML. */
export function wantsGraphiQL(req: IncomingMessage, path: string, endpoint: string): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && path === endpoint && (req.headers.accept ?? '').includes('text/html');
}

/**
 * Whether an `If-None-Match` header matches `etag`: a list of tags, weak (`W/`) compared as strong
 * ones (RFC 9110 weak comparison), or `*`.
 */
export function ifNoneMatchHits(header: string | string[] | undefined, etag: string): boolean {
  if (!header) return false;
  const tags = (Array.isArray(header) ? header.join(',') : header).split(',').map((t) => t.trim().replace(/^W\//, ''));
  return tags.some((t) => t === '*' || t === etag);
}

/** Headers of every answer of the page: never framed by another site, its type never sniffed. */
const PAGE_HEADERS = {
  'content-security-policy': "frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
} as const;

/**
 * The route serving the page: rendered on first use, each encoding compressed once (concurrent
 * first visits share the work), an `ETag` per encoding + `Cache-Control: no-cache` (revalidated,
 * 304 when unchanged). With `disabled`, a short text instead.
 */
export function graphiqlRoute(opts: GraphiQLPageOptions): GatewayRoute {
  const endpoint = opts.endpoint ?? '/graphql';
  let page: Promise<{ body: Buffer; tag: string }> | null = null;
  const encoded = new Map<ContentEncoding, Promise<Buffer>>();
  const load = (): Promise<{ body: Buffer; tag: string }> => {
    page ??= renderGraphiQLPage(opts).then((html) => {
      const body = Buffer.from(html, 'utf8');
      return { body, tag: createHash('sha256').update(body).digest('base64url').slice(0, 27) };
    });
    page.catch(() => (page = null));
    return page;
  };
  const bodyIn = async (encoding: ContentEncoding | null): Promise<Buffer> => {
    const { body } = await load();
    if (!encoding) return body;
    let pending = encoded.get(encoding);
    if (!pending) {
      // Static content, compressed once: brotli 5 gives 1.9 MB in about a second; 11 would take a minute.
      pending = (opts.compressor ?? compressBody)(body, encoding, { brotliQuality: 5, gzipLevel: 6 });
      pending.catch(() => encoded.delete(encoding));
      encoded.set(encoding, pending);
    }
    return pending;
  };
  // Built in a child process (`graphiql-build.ts`), once per encoding asked for, unless a
  // compressor of its own is given (tests count its calls) or the child fails (then here, as above).
  const compress = opts.compress !== false;
  const built = new Map<ContentEncoding | 'identity', Promise<BuiltGraphiQLPage | null>>();
  const fromChild = (kind: ContentEncoding | 'identity'): Promise<BuiltGraphiQLPage | null> => {
    if (opts.compressor) return Promise.resolve(null);
    let pending = built.get(kind);
    if (!pending) {
      pending = buildGraphiQLPageInChild(opts, kind === 'identity' ? [] : [kind], kind === 'identity').catch((err: unknown) => {
        log.warn({ err }, '[gateway] the GraphiQL page was not built in a child process; building it here');
        return null;
      });
      built.set(kind, pending);
    }
    return pending;
  };
  return async (req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> => {
    if (!wantsGraphiQL(req, path, endpoint)) return false;
    if (opts.disabled !== undefined) {
      res.writeHead(404, { ...PAGE_HEADERS, 'content-type': 'text/plain; charset=utf-8' }).end(req.method === 'HEAD' ? undefined : opts.disabled);
      return true;
    }
    const encoding = compress ? negotiateEncoding(req.headers['accept-encoding']) : null;
    // Uncompressed for a client that accepts no encoding: the gzip page, inflated as it is sent
    // (the 9 MB page itself is kept only when nothing is compressed).
    const child = await fromChild(encoding ?? (compress ? 'gzip' : 'identity'));
    // One ETag per representation: a cache holding the brotli body never revalidates it for gzip.
    const etag = `"${child ? child.tag : (await load()).tag}${encoding ? `-${encoding}` : ''}"`;
    const headers = {
      ...PAGE_HEADERS,
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-cache',
      etag,
      vary: 'Accept-Encoding',
    };
    if (ifNoneMatchHits(req.headers['if-none-match'], etag)) {
      res.writeHead(304, headers).end();
      return true;
    }
    if (child && !encoding && compress) {
      res.writeHead(200, { ...headers, 'content-length': String(child.length) });
      if (req.method === 'HEAD') res.end();
      // A client gone mid-page only ends its own response.
      else await pipeline(Readable.from([child.encoded.get('gzip')!]), createGunzip(), res).catch(() => res.destroy());
      return true;
    }
    const body = child ? (encoding ? child.encoded.get(encoding)! : child.identity!) : await bodyIn(encoding);
    res.writeHead(200, { ...headers, ...(encoding ? { 'content-encoding': encoding } : {}), 'content-length': String(body.byteLength) });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  };
}
