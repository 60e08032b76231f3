/**
 * Where `@defer` works, checked before anything runs. The runtime (`deferStream`) does not forward
 * `@defer` to the subgraphs: it sends a subgraph the selection without the deferred fragment and
 * fetches the fragment's fields later by a request of their own, an entity fetch by the object's
 * key. A fragment deferred on an object that has no key (an address, a balance sheet) cannot be
 * fetched that way: the runtime answers its fields `null`, silently. Such a document is refused
 * with a validation error naming where `@defer` does work: on an entity (a type with a resolvable
 * `@key`, e.g. `Company`) and on the root operation type (its deferred root fields are requests
 * of their own). See `docs/incremental-delivery.md`.
 */
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { GraphQLError, Kind, parse, type ASTVisitor, type FragmentSpreadNode, type InlineFragmentNode, type ValidationContext, type ValidationRule } from 'graphql';

/** The types of a supergraph with a resolvable `@key` in some subgraph (`@join__type(key:)`, not `resolvable: false`). */
export function entityTypes(supergraph: string): Set<string> {
  const out = new Set<string>();
  for (const def of parse(supergraph).definitions) {
    if (def.kind !== Kind.OBJECT_TYPE_DEFINITION && def.kind !== Kind.INTERFACE_TYPE_DEFINITION) continue;
    for (const d of def.directives ?? []) {
      if (d.name.value !== 'join__type') continue;
      const key = d.arguments?.some((a) => a.name.value === 'key');
      const resolvable = d.arguments?.find((a) => a.name.value === 'resolvable')?.value;
      if (key && !(resolvable?.kind === Kind.BOOLEAN && !resolvable.value)) out.add(def.name.value);
    }
  }
  return out;
}

/** The validation rule: `@defer` only on an entity or on the root operation type. */
export function deferOnEntitiesRule(entities: ReadonlySet<string>): ValidationRule {
  return function DeferOnEntities(context: ValidationContext): ASTVisitor {
    const check = (node: InlineFragmentNode | FragmentSpreadNode): void => {
      const defer = node.directives?.find((d) => d.name.value === 'defer');
      if (!defer) return;
      const parent = context.getParentType();
      if (!parent) return;
      const schema = context.getSchema();
      const roots = [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()];
      if (entities.has(parent.name) || roots.some((root) => root?.name === parent.name)) return;
      context.reportError(
        new GraphQLError(
          `@defer is not supported on a fragment inside ${parent.name}: defer a fragment on ${[...entities].sort().join(' or ')} (its whole selection of ${parent.name}), or on the operation's root fields`,
          { nodes: [defer], extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } },
        ),
      );
    };
    return { InlineFragment: check, FragmentSpread: check };
  };
}

/** Refuses `@defer` where the runtime would answer its fields `null` (see the module doc). */
export function useDeferOnEntities(supergraph: string): GatewayPlugin {
  const rule = deferOnEntitiesRule(entityTypes(supergraph));
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(rule);
    },
  };
}
