/**
 * The token background work calls with. Work that outlives its operation (pollers, callback
 * re-reads, bulk sendings) keeps the token it started with: a caller's token (pass-through) as it
 * is, the layer's own (`OPENAPI_TOKEN` or the managed token of `service-token.ts`) as a marker,
 * resolved when the work calls. Work started before a rotation (or before a restart with another
 * `OPENAPI_TOKEN`) thus calls with the token valid now, never a dead one. Subgraphs receive the
 * accessor in their deps (`SubgraphDeps.tokens`).
 */

/** What background work keeps in place of the layer's own token (never sent: `WorkTokens.use` resolves it). */
export const LAYER_TOKEN = '\u0000layer-token';

/** The one accessor background work picks its token with. */
export interface WorkTokens {
  /** What to keep for work started with `token`: the marker when it is the layer's, else `token`. */
  keep(token: string): string;
  /** The token to call with now for what was kept ('' when it was the layer's and the layer has none now). */
  use(kept: string): string;
}

/** The layer's token as work tokens see it: the current value and whether a value is one of its own. */
export interface LayerToken {
  current(): string;
  owns(value: string): boolean;
}

/** A fixed `OPENAPI_TOKEN` as a `LayerToken`. */
export const fixedLayerToken = (token: string): LayerToken => ({ current: () => token, owns: (v) => v === token });

/** The work tokens of a process whose own token is `layer` (null: pass-through only). */
export function workTokens(layer: LayerToken | null): WorkTokens {
  return {
    keep: (token) => (token !== '' && (token === LAYER_TOKEN || layer?.owns(token)) ? LAYER_TOKEN : token),
    use: (kept) => (kept !== LAYER_TOKEN ? kept : layer ? layer.current() : ''),
  };
}

/** Pass-through only: every token kept as it is. */
export const PASS_THROUGH_TOKENS: WorkTokens = workTokens(null);

/**
 * The work tokens of a subgraph process: its managed token when it has one, else its fixed
 * `OPENAPI_TOKEN` (a service token given as a string), else pass-through. One choice for every
 * place that starts subgraphs.
 */
export const workTokensOf = (managed: LayerToken | null | undefined, serviceToken: unknown): WorkTokens =>
  workTokens(managed ?? (typeof serviceToken === 'string' && serviceToken ? fixedLayerToken(serviceToken) : null));
