/**
 * Which company data a GraphQL request needs: the `Company` field paths selected below the field
 * being resolved (fragments, inline fragments, aliases and @skip/@include honoured), turned into
 * facets by `facets.ts`. Nested companies (a manager, shareholder, subsidiary or affiliate that is
 * a company) are not walked into: their fields are bought for them, by their own resolver.
 */
import {
  getDirectiveValues,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  type FieldNode,
  type FragmentSpreadNode,
  type GraphQLResolveInfo,
  type InlineFragmentNode,
  type SelectionSetNode,
} from 'graphql';
import { facetsForPaths, isNestedCompanyPath, type Facet } from './facets.ts';

const COMPANY = 'Company';

/**
 * Selection-set walks are the same for every item of a list: remember them per field-node array
 * (graphql-js reuses it for every item) and per operation's variables.
 */
const walkCache = new WeakMap<readonly FieldNode[], WeakMap<object, Map<string, Set<string>>>>();
const NO_VARIABLES = {};

function memo(info: Pick<GraphQLResolveInfo, 'fieldNodes' | 'variableValues'>, key: string, compute: () => Set<string>): Set<string> {
  let perNodes = walkCache.get(info.fieldNodes);
  if (!perNodes) walkCache.set(info.fieldNodes, (perNodes = new WeakMap()));
  const vars: object = info.variableValues ?? NO_VARIABLES;
  let perVars = perNodes.get(vars);
  if (!perVars) perNodes.set(vars, (perVars = new Map<string, Set<string>>()));
  let hit = perVars.get(key);
  if (!hit) perVars.set(key, (hit = compute()));
  return hit;
}

function included(node: { directives?: readonly unknown[] | undefined }, variables: Record<string, unknown>): boolean {
  if (!node.directives || node.directives.length === 0) return true;
  const n = node as Parameters<typeof getDirectiveValues>[1];
  if (getDirectiveValues(GraphQLSkipDirective, n, variables)?.if === true) return false;
  if (getDirectiveValues(GraphQLIncludeDirective, n, variables)?.if === false) return false;
  return true;
}

/** A deferred fragment met by a walk: its selection and where it sits below the company. */
interface DeferredPart {
  set: SelectionSetNode;
  prefix: string;
  atCompany: boolean;
}

/**
 * Whether a fragment is marked `@defer`. Its `if:` does not matter here: the gateway splits the
 * fragment off the subgraph request on the directive alone (`@graphql-tools/delegate`), and with
 * `if: false` only delivers its fields in the first payload; they are still fetched by a request of
 * their own.
 */
const isDeferred = (node: FragmentSpreadNode | InlineFragmentNode): boolean => node.directives?.some((d) => d.name.value === 'defer') === true;

/**
 * Leaf paths (dot notation, relative to the `Company` selection) of a selection set. `atCompany`
 * restricts fragments at the top level to those on `Company` (entity requests carry fragments on
 * other types too).
 */
function collect(
  set: SelectionSetNode | undefined,
  prefix: string,
  atCompany: boolean,
  info: Pick<GraphQLResolveInfo, 'fragments' | 'variableValues'>,
  out: Set<string>,
  seenFragments: Set<string>,
  deferred?: DeferredPart[],
): void {
  if (!set) return;
  for (const sel of set.selections) {
    if (!included(sel, info.variableValues)) continue;
    if (deferred && sel.kind !== Kind.FIELD && isDeferred(sel)) {
      // A part of its own (see `companyPartsFromInfo`): not bought with this one.
      const fragment = sel.kind === Kind.INLINE_FRAGMENT ? sel : info.fragments[sel.name.value];
      const typeName = sel.kind === Kind.INLINE_FRAGMENT ? sel.typeCondition?.name.value : fragment?.typeCondition?.name.value;
      if (fragment && !(atCompany && typeName !== undefined && typeName !== COMPANY)) deferred.push({ set: fragment.selectionSet, prefix, atCompany });
      continue;
    }
    if (sel.kind === Kind.FIELD) {
      const name = sel.name.value;
      if (name === '__typename') {
        // The type's name needs no data (the gateway's response cache adds it to every selection):
        // beside other selections it is nothing; alone it still asks whether the field above has
        // a value, which that field's own data answers.
        if (prefix !== '' && set.selections.length === 1) out.add(prefix);
        continue;
      }
      const path = prefix === '' ? name : `${prefix}.${name}`;
      if (!sel.selectionSet || isNestedCompanyPath(path)) out.add(path);
      else collect(sel.selectionSet, path, false, info, out, seenFragments, deferred);
    } else if (sel.kind === Kind.INLINE_FRAGMENT) {
      if (atCompany && sel.typeCondition && sel.typeCondition.name.value !== COMPANY) continue;
      collect(sel.selectionSet, prefix, atCompany, info, out, seenFragments, deferred);
    } else {
      const fragment = info.fragments[sel.name.value];
      if (!fragment) continue;
      if (atCompany && fragment.typeCondition.name.value !== COMPANY) continue;
      // A fragment spread twice at the same prefix adds nothing new.
      const key = `${prefix}#${sel.name.value}`;
      if (seenFragments.has(key)) continue;
      seenFragments.add(key);
      collect(fragment.selectionSet, prefix, atCompany, info, out, seenFragments, deferred);
    }
  }
}

/**
 * `Company` field paths selected below the field being resolved, which returns a `Company` (or a
 * list of them). `under` narrows to a sub-field when the resolved field returns a wrapper whose
 * `under` field holds the companies (e.g. `items` of a search result).
 */
export function companyPathsFromInfo(info: Pick<GraphQLResolveInfo, 'fieldNodes' | 'fragments' | 'variableValues'>, under?: string): Set<string> {
  return memo(info, `company:${under ?? ''}`, () => walkCompany(info, under));
}

function walkCompany(info: Pick<GraphQLResolveInfo, 'fieldNodes' | 'fragments' | 'variableValues'>, under: string | undefined): Set<string> {
  const out = new Set<string>();
  const seen = new Set<string>();
  for (const node of info.fieldNodes) {
    if (under === undefined) {
      collect(node.selectionSet, '', true, info, out, seen);
      continue;
    }
    // Find `under` among the wrapper's fields (through fragments) and walk each occurrence.
    const wrappers: SelectionSetNode[] = [];
    const findUnder = (set: SelectionSetNode | undefined): void => {
      if (!set) return;
      for (const sel of set.selections) {
        if (!included(sel, info.variableValues)) continue;
        if (sel.kind === Kind.FIELD) {
          if (sel.name.value === under && sel.selectionSet) wrappers.push(sel.selectionSet);
        } else if (sel.kind === Kind.INLINE_FRAGMENT) findUnder(sel.selectionSet);
        else findUnder(info.fragments[sel.name.value]?.selectionSet);
      }
    };
    findUnder(node.selectionSet);
    for (const w of wrappers) collect(w, '', true, info, out, seen);
  }
  return out;
}

/**
 * The `Company` field paths of each part the selection below the field is delivered in, when the
 * client defers fragments (`@defer`): first the part delivered at once, then each deferred fragment
 * apart (one nested in another is a part of its own too). The gateway sends a subgraph the
 * selection without its deferred fragments and fetches each one's fields by a request of their own
 * (an entity fetch by the company's key) when it resolves them, so each part is bought apart, by
 * the cheapest plan for its own facets (`docs/incremental-delivery.md`). Without `@defer`: one part,
 * `companyPathsFromInfo`.
 */
export function companyPartsFromInfo(info: Pick<GraphQLResolveInfo, 'fieldNodes' | 'fragments' | 'variableValues'>): Set<string>[] {
  const first = new Set<string>();
  const deferred: DeferredPart[] = [];
  const seen = new Set<string>();
  for (const node of info.fieldNodes) collect(node.selectionSet, '', true, info, first, seen, deferred);
  const parts = [first];
  // A fragment deferred inside a deferred fragment is pushed as that one is walked.
  for (let i = 0; i < deferred.length; i++) {
    const part = new Set<string>();
    collect(deferred[i].set, deferred[i].prefix, deferred[i].atCompany, info, part, new Set<string>(), deferred);
    parts.push(part);
  }
  return parts;
}

/** The facets the `Company` selection below the resolved field needs. */
export function companyFacetsFromInfo(info: Pick<GraphQLResolveInfo, 'fieldNodes' | 'fragments' | 'variableValues'>, under?: string): Set<Facet> {
  return facetsForPaths(companyPathsFromInfo(info, under));
}

/**
 * The facets one `Company` field needs (the field being resolved, with its own sub-selection).
 * Used by field resolvers to check that what was bought covers them.
 */
export function fieldFacetsFromInfo(info: Pick<GraphQLResolveInfo, 'fieldNodes' | 'fragments' | 'variableValues' | 'fieldName'>): Set<Facet> {
  const paths = memo(info, `field:${info.fieldName}`, () => {
    const out = new Set<string>();
    const seen = new Set<string>();
    for (const node of info.fieldNodes) {
      const path = info.fieldName;
      if (!node.selectionSet || isNestedCompanyPath(path)) out.add(path);
      else collect(node.selectionSet, path, false, info, out, seen);
    }
    return out;
  });
  return facetsForPaths(paths);
}
