/**
 * The offline GraphiQL page (`@graphql-yoga/render-graphiql`, 9 MB of HTML with the editor inlined),
 * served at `GET /graphql` to browsers (`Accept: text/html`) by the gateway itself rather than by the
 * runtime: the page never changes while the process runs, so it is rendered once, and compressed at
 * most once per encoding (brotli, gzip: 2 MB on the wire) the first time a browser asks for it,
 * instead of being rendered and compressed again for every visit. An ETag lets a browser keep it.
 *
 * What the bundled GraphiQL (v5) does not do as shipped, set up here:
 * - the tab open at load takes its variables from the `variables` option, not from its own
 *   `defaultTabs` entry: without them its Run fails with `Variable "$vatCode" … was not provided`;
 * - its tab strip is a drag-to-reorder list whose drag gesture swallows the first click on a tab
 *   (a second click switches): a capturing listener keeps the tab buttons' pointer presses from the
 *   drag handler, so one click switches (tabs can no longer be dragged to reorder them);
 * - the variables pane is open at load, and the docs explorer is the sidebar's book button.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GraphiQLOptions } from 'graphql-yoga';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { compressBody, negotiateEncoding, type ContentEncoding } from './compression.ts';
import type { ExampleOperation } from './examples.ts';
import type { GatewayRoute } from './index.ts';

export interface GraphiQLPageOptions {
  /** @default 'openapi-supergraph' */
  title?: string;
  /** One tab each, the first open at load. */
  examples: readonly ExampleOperation[];
  /** Path of the GraphQL endpoint the page is served at and talks to. @default '/graphql' */
  endpoint?: string;
}

/**
 * The bundled GraphiQL's options: the documented ones, plus `query` and `variables`, which its
 * wrapper reads (undocumented in the type) as the open tab's initial editors.
 */
export type GraphiQLPageSettings = GraphiQLOptions & { query?: string; variables?: string };

const json = (v: Record<string, unknown> | undefined): string | null => (v ? JSON.stringify(v, null, 2) : null);

/** The options the page is rendered with (see the module's comment). */
export function graphiqlSettings(opts: GraphiQLPageOptions): GraphiQLPageSettings {
  const [first] = opts.examples;
  return {
    title: opts.title ?? 'openapi-supergraph',
    endpoint: opts.endpoint ?? '/graphql',
    subscriptionsProtocol: 'WS',
    defaultTabs: opts.examples.map((e) => ({ query: e.query, variables: json(e.variables) })),
    ...(first ? { query: first.query, variables: json(first.variables) ?? '' } : {}),
    defaultEditorToolsVisibility: 'variables',
  };
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

/** The page's HTML. */
export function renderGraphiQLPage(opts: GraphiQLPageOptions): string {
  const html = renderGraphiQL(graphiqlSettings(opts));
  const at = html.indexOf('<script>');
  return at < 0 ? html : html.slice(0, at) + ONE_CLICK_TABS + html.slice(at);
}

/** Whether a request asks for the page: GET or HEAD of the endpoint, accepting HTML. */
export function wantsGraphiQL(req: IncomingMessage, path: string, endpoint: string): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && path === endpoint && (req.headers.accept ?? '').includes('text/html');
}

/**
 * The route serving the page: rendered on first use, each encoding compressed once (concurrent
 * first visits share the work), `ETag` + `Cache-Control: no-cache` (revalidated, 304 when unchanged).
 */
export function graphiqlRoute(opts: GraphiQLPageOptions): GatewayRoute {
  const endpoint = opts.endpoint ?? '/graphql';
  let page: { body: Buffer; etag: string } | null = null;
  const encoded = new Map<ContentEncoding, Promise<Buffer>>();
  const load = (): { body: Buffer; etag: string } => {
    if (!page) {
      const body = Buffer.from(renderGraphiQLPage(opts), 'utf8');
      page = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
    }
    return page;
  };
  const bodyIn = (encoding: ContentEncoding | null): Promise<Buffer> => {
    const { body } = load();
    if (!encoding) return Promise.resolve(body);
    let pending = encoded.get(encoding);
    if (!pending) {
      // Static content, compressed once: brotli 5 gives 1.9 MB in about a second; 11 would take a minute.
      pending = compressBody(body, encoding, { brotliQuality: 5, gzipLevel: 6 });
      pending.catch(() => encoded.delete(encoding));
      encoded.set(encoding, pending);
    }
    return pending;
  };
  return async (req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> => {
    if (!wantsGraphiQL(req, path, endpoint)) return false;
    const { etag } = load();
    const headers = {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-cache',
      etag,
      vary: 'Accept-Encoding',
    };
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, headers).end();
      return true;
    }
    const encoding = negotiateEncoding(req.headers['accept-encoding']);
    const body = await bodyIn(encoding);
    res.writeHead(200, { ...headers, ...(encoding ? { 'content-encoding': encoding } : {}), 'content-length': String(body.byteLength) });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  };
}
