/**
 * The risk area's per-request DataLoaders. A credit score is keyed by (VAT number, level): however
 * many times a company appears in one query (as the root, a shareholder, a subsidiary…), each
 * distinct company and level costs one call; the upstream client's per-tenant cache and in-flight
 * de-duplication save the calls across requests.
 */
import DataLoader from 'dataloader';
import type { SubgraphContext } from '../runtime/context.ts';
import type { CreditScore, CreditScoreLevel } from './__generated__/resolvers-types.ts';
import { toCreditScore } from './model.ts';
import { SCORE_ENDPOINTS } from './upstream.ts';

export interface ScoreKey {
  vat: string;
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
              ctx.upstream.call<unknown>(ctx, SCORE_ENDPOINTS[k.level], { params: { id: k.vat } }).then(
                (data) => toCreditScore(k.level, data),
                (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
              ),
            ),
          ),
        { cacheKeyFn: (k) => `${k.vat}|${k.level}` },
      ),
  );
