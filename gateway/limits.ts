/**
 * Gateway plugin: bounds on the documents clients send, so an absurd query gets a clear 400 error
 * instead of exhausting the stack or the planner. Before the parser runs (it recurses once per
 * nesting level), one linear pass of graphql's `Lexer` counts tokens, nesting of braces, brackets
 * and parentheses, aliases and directives (`checkDocument`); then the parser keeps its own token
 * bound, and validation bounds the depth of nested selections (fragments followed).
 */
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import {
  GraphQLError,
  Kind,
  Lexer,
  parse,
  Source,
  TokenKind,
  syntaxError,
  type ASTVisitor,
  type DocumentNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
} from 'graphql';

export interface DocumentLimits {
  /** Tokens a document may have. @default 5000 */
  maxTokens?: number;
  /** Depth of nested selection sets. @default 25 */
  maxDepth?: number;
  /**
   * Nesting of braces, brackets and parentheses (selection sets, inline fragments, list and object
   * values), checked before parsing. Above `maxDepth`'s selections with an inline fragment at each.
   * @default 128
   */
  maxNesting?: number;
  /**
   * Aliases in a document (each can repeat a field's work). Paid work is bounded by the budgets and
   * the estimate, and the document's size by `maxTokens`; this bounds the free work (planning,
   * merging) of a document that is all aliases. Batches of a few hundred lookups in one operation
   * are a legitimate use (e.g. 180 municipality searches). @default 500
   */
  maxAliases?: number;
  /** Directives in a document. @default 50 */
  maxDirectives?: number;
}

/** Tokens a document may have unless configured otherwise. */
export const DEFAULT_MAX_TOKENS = 5000;

const DEFAULT_DOCUMENT_LIMITS: Required<DocumentLimits> = { maxTokens: DEFAULT_MAX_TOKENS, maxDepth: 25, maxNesting: 128, maxAliases: 500, maxDirectives: 50 };

/**
 * Throws a syntax error when a document passes a limit, reading it token by token (no recursion,
 * stopping at the first limit passed): its tokens, its nesting, its aliases (a name and a colon
 * outside parentheses) and its directives. A document the lexer cannot read throws its own error.
 */
export function checkDocument(source: string | Source, limits: DocumentLimits = {}): void {
  const { maxTokens, maxNesting, maxAliases, maxDirectives } = { ...DEFAULT_DOCUMENT_LIMITS, ...limits };
  const src = typeof source === 'string' ? new Source(source) : source;
  const lexer = new Lexer(src);
  let tokens = 0;
  let nesting = 0;
  let parens = 0;
  let aliases = 0;
  let directives = 0;
  let previous: TokenKind = TokenKind.SOF;
  for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
    const kind = token.kind;
    if (++tokens > maxTokens) throw syntaxError(src, token.start, `Document contains more than ${maxTokens} tokens.`);
    if (kind === TokenKind.BRACE_L || kind === TokenKind.BRACKET_L || kind === TokenKind.PAREN_L) {
      if (++nesting > maxNesting) throw syntaxError(src, token.start, `Document nests braces, brackets or parentheses deeper than ${maxNesting} levels.`);
      if (kind === TokenKind.PAREN_L) parens++;
    } else if (kind === TokenKind.BRACE_R || kind === TokenKind.BRACKET_R || kind === TokenKind.PAREN_R) {
      nesting--;
      if (kind === TokenKind.PAREN_R) parens--;
    } else if (kind === TokenKind.AT) {
      if (++directives > maxDirectives) throw syntaxError(src, token.start, `Document has more than ${maxDirectives} directives.`);
    } else if (kind === TokenKind.COLON && previous === TokenKind.NAME && parens <= 0) {
      if (++aliases > maxAliases) throw syntaxError(src, token.start, `Document has more than ${maxAliases} aliases.`);
    }
    previous = kind;
  }
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

/**
 * `parse` within the gateway's document limits, for plugins that read a client's document before
 * (or instead of) the runtime's own parse: a huge or deep document costs them no more than it costs
 * the runtime.
 */
export function parseBounded(source: string, limits: DocumentLimits = {}): DocumentNode {
  checkDocument(source, limits);
  return parse(source, { maxTokens: limits.maxTokens ?? DEFAULT_MAX_TOKENS });
}

export function useDocumentLimits(limits: DocumentLimits = {}): GatewayPlugin {
  const all = { ...DEFAULT_DOCUMENT_LIMITS, ...limits };
  const { maxTokens, maxDepth } = all;
  return {
    onParse({ parseFn, setParseFn }) {
      setParseFn((source: string | Source, options) => {
        checkDocument(source, all);
        return parseFn(source, { ...options, maxTokens }) as DocumentNode;
      });
    },
    onValidate({ addValidationRule }) {
      addValidationRule(maxDepthRule(maxDepth));
    },
  };
}
