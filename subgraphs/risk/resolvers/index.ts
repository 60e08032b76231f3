/** Every resolver of the risk subgraph, typed by the generated `Resolvers`. */
import type { Resolvers } from '../__generated__/resolvers-types.ts';
import { DateTimeScalar } from '../../runtime/scalars.ts';
import type { RiskService } from '../service.ts';
import { requestResolvers } from './requests.ts';
import { rootResolvers } from './root.ts';

export function createResolvers(service: RiskService): Resolvers {
  return {
    // ISO 8601 with a time zone; bad input is BAD_USER_INPUT (never null, which would mean "no filter").
    DateTime: DateTimeScalar,
    ...rootResolvers(service),
    ...requestResolvers(service),
  };
}
