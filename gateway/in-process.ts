/**
 * In-process subgraphs: when the gateway and the subgraphs run in one process (`stack.ts`,
 * `npm start`), a subgraph's queries and mutations are executed by the subgraph itself
 * (`RunningSubgraphs.execute`): the plan's document and the headers every plugin set on the execution
 * request (authorization, account key, operation id, estimate, scopes) go straight to its schema,
 * with the context and plugins its GraphQL server would use (cost extension, masked errors, log
 * context). No request body is written or read, no Fetch request or response built, no JSON either
 * way: per subgraph request, the transport's and the subgraph server's HTTP pipelines are gone.
 *
 * Where a subgraph request must stay an HTTP request, the subgraph's own fetch handler (its yoga
 * server) answers it instead of loopback HTTP: with traces on (the transport's fetch carries
 * `traceparent`), at log level `debug` or `trace` (the fetch's debug lines show each request), and
 * for a gateway given handlers only. Subscriptions keep graphql-ws. Separate services keep HTTP:
 * without an entry for a subgraph, the request is left to the runtime's transport.
 *
 * A query one in-process subgraph answers whole skips even the runtime's planning and delegation
 * (`useDirectQueries` below): it goes to that subgraph as the caller wrote it, through the
 * runtime's own executor for the subgraph (its hooks), and its answer is the operation's.
 */
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import {
  getOperationAST,
  getVariableValues,
  isInterfaceType,
  isObjectType,
  OperationTypeNode,
  TypeInfo,
  validate,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
  type FieldNode,
  GraphQLError,
  isNonNullType,
  Kind,
} from 'graphql';
import { LRUCache } from 'lru-cache';
import type { InProcessExecute } from '../subgraphs/runtime/server.ts';
import { tracingEnabled } from '../platform/tracing.ts';

/** Answers one GraphQL-over-HTTP request as the subgraph's HTTP server would. */
export type SubgraphFetch = (url: string, init: RequestInit) => Response | Promise<Response>;

export interface InProcessSubgraphsOptions {
  /** Each in-process subgraph's handler, by the GraphQL URL the gateway knows it under. */
  handlers: ReadonlyMap<string, SubgraphFetch>;
  /**
   * Each in-process subgraph's executor, by subgraph name: its queries and mutations skip the HTTP
   * transport and the subgraph's HTTP pipeline altogether (see `executors` below). @default none
   */
  executors?: ReadonlyMap<string, InProcessExecute>;
  /**
   * The runtime's logger: at `debug` or `trace` requests keep going through the transport's fetch,
   * whose debug lines show each subgraph request (headers redacted).
   */
  log?: { readonly level: string | false };
}

/** Routes fetches to the subgraphs' in-process handlers (see the module doc). */
export function useInProcessSubgraphs(opts: InProcessSubgraphsOptions): GatewayPlugin {
  const { handlers } = opts;
  // With traces on, the transport's fetch carries the trace to the subgraph (`traceparent`): the
  // request keeps going through it.
  const executors = tracingEnabled() ? new Map<string, InProcessExecute>() : (opts.executors ?? new Map<string, InProcessExecute>());
  return {
    // Queries and mutations of an in-process subgraph are executed by it directly, with the headers
    // every plugin set on the execution request (authorization, account key, operation id,
    // estimate, scopes): no request body, no Fetch request or response, no JSON either way.
    onSubgraphExecute({ subgraphName, executionRequest, setExecutor }) {
      const execute = executors.get(subgraphName);
      const level = opts.log?.level;
      if (
        !execute ||
        level === 'debug' ||
        level === 'trace' ||
        getOperationAST(executionRequest.document, executionRequest.operationName)?.operation === OperationTypeNode.SUBSCRIPTION
      )
        return;
      setExecutor(
        async (req) =>
          execute({
            document: req.document,
            variables: req.variables,
            operationName: req.operationName,
            headers: (req.extensions as { headers?: Record<string, string> } | undefined)?.headers ?? {},
          }) as Promise<ExecutionResult<never>>,
      );
    },
    onFetch({ url, setFetchFn }) {
      const handler = handlers.get(url);
      if (!handler) return;
      // The fetch function runs after every onFetch hook, with the options they set.
      setFetchFn((target, init) => handler(target, init ?? {}));
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Queries that one in-process subgraph answers whole

/** What the direct path needs of an in-process subgraph: its own executable schema. */
export interface DirectSubgraph {
  name: string;
  schema: GraphQLSchema;
}

/** A request as the runtime's subgraph executors take it (`@graphql-tools/utils`' ExecutionRequest, as far as used here). */
interface ExecutionRequest {
  document: DocumentNode;
  variables?: Record<string, unknown>;
  operationName?: string;
  operationType: OperationTypeNode;
  context?: Record<string, unknown>;
  rootValue?: unknown;
  extensions?: Record<string, unknown>;
}

/** The stitched schema's view of one subgraph: its name and the runtime's executor for it (hooks included). */
interface SubschemaOfRuntime {
  name?: string;
  executor?: (request: ExecutionRequest) => unknown;
}

/** Fields a subgraph declares but does not resolve alone (federation's `@external`, `@requires`, `@override`, `@fromContext`). */
function notResolvedAlone(schema: GraphQLSchema): Set<string> {
  const out = new Set<string>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) && !isInterfaceType(type)) continue;
    for (const field of Object.values(type.getFields())) {
      const directives = field.astNode?.directives ?? [];
      if (directives.some((d) => ['external', 'requires', 'override', 'fromContext'].includes(d.name.value))) out.add(`${type.name}.${field.name}`);
    }
  }
  return out;
}

/** Whether `document` selects a field of `fields` (by the schema's types) or carries `@defer`/`@stream`. */
function selectsAny(schema: GraphQLSchema, document: DocumentNode, fields: ReadonlySet<string>): boolean {
  const typeInfo = new TypeInfo(schema);
  let found = false;
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Directive(node) {
        if (node.name.value === 'defer' || node.name.value === 'stream') found = true;
      },
      Field(node) {
        const parent = typeInfo.getParentType();
        if (parent && fields.has(`${parent.name}.${node.name.value}`)) found = true;
      },
    }),
  );
  return found;
}

/** The execution arguments envelop hands a plugin, as far as the direct path reads them. */
interface ExecuteArgs {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName?: string | null;
  variableValues?: Readonly<Record<string, unknown>> | null;
  contextValue?: unknown;
  rootValue?: unknown;
}

/** A subgraph's error as the runtime passes it on: message, path, extensions and cause, no locations. */
function withoutLocations(error: GraphQLError): GraphQLError {
  if (!error.locations?.length) return error;
  return new GraphQLError(error.message, { path: error.path, extensions: error.extensions, originalError: error.originalError ?? undefined });
}

export interface DirectQueriesOptions {
  /** The in-process subgraphs, in the order they are tried. */
  subgraphs: readonly DirectSubgraph[];
  /** The runtime's logger (as `useInProcessSubgraphs`): at `debug` or `trace` nothing goes direct. */
  log?: { readonly level: string | false };
  /** Distinct documents whose answer is remembered. @default 1,000 */
  maxDocuments?: number;
}

/**
 * Queries one in-process subgraph answers whole go to it as they are: the runtime's query planning,
 * its delegation (the request rewritten per subgraph, the subgraph's answer merged back field by
 * field) and the second execution over the supergraph are skipped. The request still goes through
 * the runtime's own executor for that subgraph (`onSubgraphExecute`): every plugin's subgraph hook
 * runs as for a planned request (credentials, operation id, estimate, the cost collected, the
 * subgraph metrics, `extensions.serviceName` and `code` on errors, then the in-process executor).
 *
 * Whole means: a query (not a mutation, not a subscription) of one root field (not introspection),
 * without `@defer`/`@stream`, valid
 * against that subgraph's own schema, and selecting no field the subgraph does not resolve alone
 * (`@external`, `@requires`, `@override`, `@fromContext`). The answer is then the one the planned
 * path gives: the same document on the same resolvers. Checked once per document. Variables are
 * coerced against the supergraph first, as the runtime does, so bad input is refused with the same
 * error before anything runs. With traces on, or the runtime logging at debug, nothing goes direct.
 */
export function useDirectQueries(opts: DirectQueriesOptions): GatewayPlugin {
  const unsafe = new Map(opts.subgraphs.map((s) => [s.name, notResolvedAlone(s.schema)]));
  const owners = new LRUCache<DocumentNode, { name: string } | false>({ max: opts.maxDocuments ?? 1_000 });
  let executors = new Map<string, (request: ExecutionRequest) => unknown>();
  const enabled = !tracingEnabled();
  const ownerOf = (document: DocumentNode, operationName: string | null | undefined): string | null => {
    let owner = owners.get(document);
    if (owner === undefined) {
      owner = false;
      // One operation in the document: what is decided here holds whichever operation is named.
      const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
      const op = operations.length === 1 ? getOperationAST(document, operationName ?? undefined) : null;
      // One root field: a subgraph refusing the whole request (e.g. a malformed credential) is then
      // answered as the planned path answers it, that field null with the error on its path.
      const fields = op?.selectionSet.selections ?? [];
      const field = fields.length === 1 && fields[0]?.kind === Kind.FIELD ? fields[0] : null;
      // Not introspection (`__schema` and `__type` describe the supergraph, not the subgraph), and
      // no directive on it (`@skip`/`@include`: the planned path calls nothing for a skipped field).
      const root = field !== null && (field.directives ?? []).length === 0 ? field.name.value : null;
      if (op?.operation === OperationTypeNode.QUERY && root !== null && !root.startsWith('__')) {
        for (const s of opts.subgraphs) {
          if (!executors.has(s.name)) continue;
          // Only a subgraph with that root field may answer it (one validation, not one per subgraph).
          if (s.schema.getQueryType()?.getFields()[root] === undefined) continue;
          if (validate(s.schema, document).length > 0) continue;
          if (selectsAny(s.schema, document, unsafe.get(s.name)!)) continue;
          owner = { name: s.name };
          break;
        }
      }
      owners.set(document, owner);
    }
    return owner === false ? null : owner.name;
  };
  /** The schema the executors are of: an operation on another (a reload in flight) is planned. */
  let current: GraphQLSchema | null = null;
  return {
    onSchemaChange({ schema }: { schema: GraphQLSchema }) {
      current = schema;
      // The runtime's executor of each subgraph (its hooks and transport), from the stitched schema.
      const info = schema.extensions.stitchingInfo as { subschemaMap?: Map<unknown, SubschemaOfRuntime> } | undefined;
      const next = new Map<string, (request: ExecutionRequest) => unknown>();
      for (const config of info?.subschemaMap?.values() ?? []) if (config.name && config.executor) next.set(config.name, config.executor);
      executors = next;
      owners.clear();
    },
    onExecute({ args: untyped, setExecuteFn }) {
      const level = opts.log?.level;
      if (!enabled || level === 'debug' || level === 'trace') return;
      const args = untyped as ExecuteArgs;
      if (args.schema !== current) return;
      const name = ownerOf(args.document, args.operationName);
      if (name === null) return;
      const executor = executors.get(name);
      if (!executor) return;
      setExecuteFn(async (untypedArgs: unknown) => {
        const a = untypedArgs as ExecuteArgs;
        const op = getOperationAST(a.document, a.operationName ?? undefined);
        if (op?.operation !== OperationTypeNode.QUERY)
          return { errors: [new GraphQLError('The operation to run could not be determined.', { extensions: { code: 'BAD_REQUEST' } })] };
        // The supergraph's coercion, as the runtime's execution would do it first.
        const coerced = getVariableValues(a.schema, op.variableDefinitions ?? [], a.variableValues ?? {});
        if (coerced.errors) return { errors: coerced.errors };
        let result: ExecutionResult;
        try {
          result = (await executor({
            document: a.document,
            variables: coerced.coerced,
            operationName: a.operationName ?? undefined,
            operationType: OperationTypeNode.QUERY,
            context: a.contextValue as Record<string, unknown>,
            rootValue: a.rootValue,
            extensions: {},
          })) as ExecutionResult;
        } catch (err) {
          // As a failed subgraph request on the planned path: the root field's error (masked by
          // the gateway when it is not a GraphQL error).
          result = {
            errors: [
              err instanceof GraphQLError ? err : new GraphQLError(err instanceof Error ? err.message : String(err), { originalError: err instanceof Error ? err : undefined }),
            ],
          };
        }
        // As the runtime answers: data and errors (what the subgraph put in its extensions, its
        // cost, is collected by the cost plugin's hook and reported by it).
        if (!result.errors) return { data: result.data };
        // Errors as the planned path gives them: without locations (they point into the document
        // the subgraph was handed, which the runtime does not pass on either); a request the
        // subgraph refused whole (no data) is the root field's error, the field null.
        const root = op.selectionSet.selections[0] as FieldNode;
        const key = root.alias?.value ?? root.name.value;
        const refusedWhole = result.data === undefined || result.data === null;
        const errors = result.errors.map((e) =>
          withoutLocations(
            refusedWhole && e.path === undefined ? new GraphQLError(e.message, { path: [key], extensions: e.extensions, originalError: e.originalError ?? undefined }) : e,
          ),
        );
        if (!refusedWhole) return { data: result.data, errors };
        const nullable = !isNonNullType(a.schema.getQueryType()?.getFields()[root.name.value]?.type);
        return { data: nullable ? { [key]: null } : null, errors };
      });
    },
  };
}
