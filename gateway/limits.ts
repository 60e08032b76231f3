/**
 * Gateway plugin: bounds on the documents clients send, so an absurd query gets a clear 400 error
 * instead of exhausting the stack or the planner: at most `maxTokens` tokens (parser) and at most
 * `maxDepth` nested selections (validation, fragments followed).
 */
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { GraphQLError, Kind, parse, type ASTVisitor, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode, type ValidationContext } from 'graphql';

export interface DocumentLimits {
  /** Tokens a document may have. @default 5000 */
  maxTokens?: number;
  /** Depth of nested selection sets. @default 25 */
  maxDepth?: number;
}

function depthOf(set: SelectionSetNode | undefined, fragments: Map<string, FragmentDefinitionNode>, seen: Set<string>, limit: number, level = 0): number {
  if (!set || level > limit) return level;
  let max = level;
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) max = Math.max(max, sel.selectionSet ? depthOf(sel.selectionSet, fragments, seen, limit, level + 1) : level);
    else if (sel.kind === Kind.INLINE_FRAGMENT) max = Math.max(max, depthOf(sel.selectionSet, fragments, seen, limit, level));
    else if (!seen.has(sel.name.value)) {
      const frag = fragments.get(sel.name.value);
      if (frag) max = Math.max(max, depthOf(frag.selectionSet, fragments, new Set([...seen, sel.name.value]), limit, level));
    }
    if (max > limit) return max;
  }
  return max;
}

const maxDepthRule =
  (maxDepth: number) =>
  (context: ValidationContext): ASTVisitor => {
    const fragments = new Map(context.getDocument().definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
    return {
      OperationDefinition(node) {
        if (depthOf(node.selectionSet, fragments, new Set(), maxDepth) > maxDepth) {
          context.reportError(new GraphQLError(`The operation nests selections deeper than ${maxDepth} levels`, { nodes: [node] }));
        }
      },
    };
  };

/** Tokens a document may have unless configured otherwise. */
export const DEFAULT_MAX_TOKENS = 5000;

/**
 * `parse` with the gateway's token bound, for plugins that read a client's document before (or
 * instead of) the runtime's own parse: a huge document costs them no more than it costs the runtime.
 */
export function parseBounded(source: string, maxTokens = DEFAULT_MAX_TOKENS): DocumentNode {
  return parse(source, { maxTokens });
}

export function useDocumentLimits(limits: DocumentLimits = {}): GatewayPlugin {
  const maxTokens = limits.maxTokens ?? DEFAULT_MAX_TOKENS;
  const maxDepth = limits.maxDepth ?? 25;
  return {
    onParse({ parseFn, setParseFn }) {
      setParseFn((source, options) => parseFn(source, { ...options, maxTokens }) as DocumentNode);
    },
    onValidate({ addValidationRule }) {
      addValidationRule(maxDepthRule(maxDepth));
    },
  };
}
