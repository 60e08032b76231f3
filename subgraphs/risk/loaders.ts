/**
 * The risk area's per-request DataLoaders. A credit score is keyed by (identifier, level), where the
 * identifier is what goes into the upstream path (`/IT-creditscore-{start,advanced,top}/{vatCode_taxCode_or_id}`):
 * a VAT number, a tax code or an Openapi company id. However many times a company appears in one
 * query (as the root, a shareholder, a subsidiary…), each distinct identifier and level costs one
 * call; the upstream client's per-tenant cache and in-flight de-duplication save the calls across
 * requests, under the same identifier (the path).
 */
import DataLoader from 'dataloader';
import type { SubgraphContext } from '../runtime/context.ts';
import type { CreditScore, CreditScoreLevel } from './__generated__/resolvers-types.ts';
import { toCreditScore } from './model.ts';
import { SCORE_ENDPOINTS } from './upstream.ts';

export interface ScoreKey {
  /** The validated identifier: 11 digits (VAT number or company tax code), 16 characters, or 24 hex. */
  code: string;
  level: CreditScoreLevel;
}

/** The credit-score loader of this request. */
export const creditScores = (ctx: SubgraphContext): DataLoader<ScoreKey, CreditScore, string> =>
  ctx.once(
    'risk:creditScores',
    () =>
      new DataLoader<ScoreKey, CreditScore, string>(
        (keys) =>
          Promise.all(
            keys.map((k) =>
              ctx.upstream.call<unknown>(ctx, SCORE_ENDPOINTS[k.level], { params: { id: k.code } }).then(
                (data) => toCreditScore(k.level, data),
                (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
              ),
            ),
          ),
        { cacheKeyFn: (k) => `${k.code}|${k.level}` },
      ),
  );
