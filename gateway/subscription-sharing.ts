/**
 * Shared subscriptions: clients asking the same subscription (same document, operation name and
 * variables) with the same credentials (`Authorization`, account key) share one execution at the
 * gateway, hence one subscription to the subgraph, and every event is multicast to all of them.
 * The last client leaving closes it. Only subscriptions following one item are shared
 * (`singleState`): a client joining a running one first gets its latest event, which is what the
 * subgraph would have sent it first.
 *
 * Why: an event reaching N clients used to run N gateway executions fed by N subgraph
 * subscriptions; now one execution per topic, and per client only the delivery.
 */
import dc from 'node:diagnostics_channel';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { getOperationAST, GraphQLError, Kind, OperationTypeNode, print, type DocumentNode, type ExecutionResult } from 'graphql';
import { LRUCache } from 'lru-cache';
import { keyHash, stableJson, type CallerSessionOf } from './caller-session.ts';
import { replayedCost } from './cost.ts';
import { connectionParamsError } from './authorization.ts';
import { parseBounded } from './limits.ts';
import { log } from '../platform/log.ts';
import type { GatewayArea } from '../subgraphs/runtime/area.ts';

type Result = ExecutionResult;

export interface SubscriptionSharingOptions {
  /** Called when a shared subscription opens (`true`) or closes (`false`), e.g. for metrics and tests. */
  onTopic?: (open: boolean) => void;
  /**
   * The subscriptions that may be shared, by root field, with the argument naming the item each
   * follows (`shareByOf` of the areas' `sharedSubscriptions`). @default none: nothing is shared
   */
  shareBy?: ReadonlyMap<string, string>;
  /** Whose subscription is whose: the caller's session (`callerSessions` of the areas' credential headers). */
  sessionOf: CallerSessionOf;
}

/**
 * One event of a topic, as every subscriber may get it: as it came (for the subscriber that reports
 * its cost) or de-duplicated (for the others), each built once and, for the graphql-ws path, each
 * serialised once however many sockets it goes to.
 */
export class SharedEvent {
  private shared: Result | undefined;
  private readonly text: { paid?: string; shared?: string } = {};
  private readonly bytes: { paid?: Buffer; shared?: Buffer } = {};
  constructor(readonly value: Result) {}

  /** The event as a subscriber that did not pay for it sees it (its cost reported as shared). */
  get dedup(): Result {
    return (this.shared ??= deduplicated(this.value));
  }

  /** The event as JSON: as it came when `paid`, else de-duplicated. */
  json(paid: boolean): string {
    return paid ? (this.text.paid ??= JSON.stringify(this.value)) : (this.text.shared ??= JSON.stringify(this.dedup));
  }

  /** `json(paid)` and the `}` closing a graphql-ws `next` message around it, as UTF-8 (encoded once). */
  tail(paid: boolean): Buffer {
    return paid ? (this.bytes.paid ??= Buffer.from(`${this.json(true)}}`)) : (this.bytes.shared ??= Buffer.from(`${this.json(false)}}`));
  }
}

/**
 * `openapi:shared-subscription:delivered` (node:diagnostics_channel): one event handed to every
 * subscriber of a topic (on graphql-ws, written to every socket), with when that began and ended
 * (`performance.now()`). For benches and profiling; nothing is measured without a subscriber.
 */
export const delivered = dc.channel('openapi:shared-subscription:delivered');
export interface TopicDelivery {
  subscribers: number;
  startedAt: number;
  endedAt: number;
  /** The event's bytes in a `next` message to a subscriber that did not pay for it (its payload and closing brace; the id before it is the subscriber's). */
  bytes: number;
}

/** Where a topic's events go: one subscriber. `paid`: this subscriber reports the event's cost. */
export interface Sink {
  deliver(event: SharedEvent, paid: boolean): void;
  /** The topic ended (or failed with `error`). */
  end(error?: unknown): void;
}

/** One shared subscription: its source (the first subscriber's execution) and its subscribers. */
export interface Topic {
  readonly key: string;
  readonly sinks: Set<Sink>;
  /** The latest event, for subscribers joining later. */
  last: SharedEvent | undefined;
  source: AsyncIterator<Result> | null;
  closed: boolean;
}

/**
 * The topics of one gateway path (the envelop plugin below; the graphql-ws delivery of
 * `useWebSocketSharing`): opening, joining, leaving, and pumping one source to every sink. The
 * subscriber that reports an event's cost is the earliest still there; the others get it
 * de-duplicated, so the euro reported across subscribers is what was paid.
 */
export class TopicHub {
  private readonly topics = new Map<string, Topic>();
  constructor(private readonly onTopic?: (open: boolean) => void) {}

  /** The running (or opening) topic of `key`, if any. */
  get(key: string): Topic | undefined {
    return this.topics.get(key);
  }

  /** A new topic for `key`, opening (its source comes with `start`). */
  open(key: string): Topic {
    const topic: Topic = { key, sinks: new Set(), last: undefined, source: null, closed: false };
    this.topics.set(key, topic);
    this.onTopic?.(true);
    return topic;
  }

  /** Adds a subscriber; a late joiner first gets the latest event (which it did not pay for). */
  join(topic: Topic, sink: Sink): void {
    topic.sinks.add(sink);
    if (topic.last !== undefined) sink.deliver(topic.last, false);
  }

  /** Removes a subscriber; the last one leaving closes the topic (and its source). */
  leave(topic: Topic, sink: Sink): void {
    if (!topic.sinks.delete(sink)) return;
    if (topic.sinks.size === 0) this.close(topic);
  }

  /** Runs `source` for the topic: every event to every subscriber, then their end. */
  start(topic: Topic, source: AsyncIterator<Result>): void {
    topic.source = source;
    if (topic.closed) {
      // Everyone left while it was opening.
      void source.return?.()?.catch(() => undefined);
      return;
    }
    void this.pump(topic, source);
  }

  /**
   * The topic could not open (refused: validation, credentials, budget, …): every subscriber but
   * `except` (the opener, which gets `result` from its own execution) gets the same refusal, with
   * its `extensions.code`, and the topic closes.
   */
  refuse(topic: Topic, result: Result, except?: Sink): void {
    const event = new SharedEvent(result);
    for (const sink of topic.sinks) {
      if (sink === except) continue;
      sink.deliver(event, true);
      sink.end();
    }
    this.close(topic);
  }

  /** The topic failed to open: every subscriber gets `error`. */
  fail(topic: Topic, error: unknown): void {
    for (const sink of topic.sinks) sink.end(error);
    this.close(topic);
  }

  private close(topic: Topic): void {
    if (topic.closed) return;
    topic.closed = true;
    if (this.topics.get(topic.key) === topic) this.topics.delete(topic.key);
    this.onTopic?.(false);
    void topic.source?.return?.()?.catch(() => undefined);
  }

  private async pump(topic: Topic, source: AsyncIterator<Result>): Promise<void> {
    try {
      for (;;) {
        const r = await source.next();
        if (r.done || topic.closed) break;
        const event = new SharedEvent(r.value);
        topic.last = event;
        const t0 = delivered.hasSubscribers ? performance.now() : 0;
        let paid = true;
        for (const sink of topic.sinks) {
          sink.deliver(event, paid);
          paid = false;
        }
        if (delivered.hasSubscribers)
          delivered.publish({ subscribers: topic.sinks.size, startedAt: t0, endedAt: performance.now(), bytes: event.tail(false).length } satisfies TopicDelivery);
      }
      for (const sink of topic.sinks) sink.end();
    } catch (err) {
      log.warn({ err }, '[gateway] a shared subscription failed');
      for (const sink of topic.sinks) sink.end(err);
    } finally {
      // Subscribers still joined have been ended; the next subscriber opens a fresh subscription.
      if (this.topics.get(topic.key) === topic) this.topics.delete(topic.key);
      if (!topic.closed) {
        topic.closed = true;
        this.onTopic?.(false);
      }
    }
  }
}

/** One client's view of a topic on the envelop path: events pushed by the topic, pulled by the client's iteration. */
class Feed implements AsyncIterableIterator<Result>, Sink {
  private readonly queue: Result[] = [];
  private waiting: ((r: IteratorResult<Result>) => void) | null = null;
  private failed: ((err: unknown) => void) | null = null;
  private error: unknown = null;
  private done = false;

  constructor(private readonly leave: (feed: Feed) => void) {}

  deliver(event: SharedEvent, paid: boolean): void {
    this.push(paid ? event.value : event.dedup);
  }

  push(value: Result): void {
    if (this.done) return;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = this.failed = null;
      resolve({ value, done: false });
    } else this.queue.push(value);
  }

  end(error?: unknown): void {
    if (this.done) return;
    this.done = true;
    if (error !== undefined) this.error = error;
    if (this.waiting) {
      const [resolve, reject] = [this.waiting, this.failed!];
      this.waiting = this.failed = null;
      if (error !== undefined) reject(error);
      else resolve({ value: undefined, done: true });
    }
  }

  next(): Promise<IteratorResult<Result>> {
    const value = this.queue.shift();
    if (value !== undefined) return Promise.resolve({ value, done: false });
    if (this.done) {
      if (this.error !== null) {
        const err = this.error;
        this.error = null;
        return Promise.reject(err instanceof Error ? err : new Error('shared subscription failed', { cause: err }));
      }
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => {
      this.waiting = resolve;
      this.failed = reject;
    });
  }

  return(): Promise<IteratorResult<Result>> {
    this.queue.length = 0;
    this.end();
    this.leave(this);
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Result> {
    return this;
  }
}

const printed = new WeakMap<DocumentNode, string>();
const printedOf = (doc: DocumentNode): string => {
  let s = printed.get(doc);
  if (s === undefined) printed.set(doc, (s = print(doc)));
  return s;
};

/**
 * What makes two subscriptions the same topic (see the module doc): the caller's session (every
 * credential that changes the answer, hashed: `caller-session.ts`) and a hash of the document's
 * text, operation name and variables (keys sorted), so no token or password sits in a key.
 */
function topicKey(sessionOf: CallerSessionOf, context: unknown, documentText: string, operationName: string | null | undefined, variables: unknown): string {
  return `${sessionOf(context)}|${keyHash(documentText, operationName ?? '', stableJson(variables ?? {}))}`;
}

/**
 * The subscriptions that follow ONE item (a request, an invoice, a mailbox, a monitor), each with
 * the argument naming it, as the areas declare them (`sharedSubscriptions`): what a new subscriber gets first is that item's latest state, which is exactly the topic's latest
 * event, so a late joiner misses nothing. Subscriptions over many items (every active invoice, all
 * monitors, a stream of arrivals) send one event per item on subscribe; a joiner given only the last
 * one would miss the others, so those are never shared.
 */
export function shareByOf(areas: readonly GatewayArea[]): ReadonlyMap<string, string> {
  return new Map(areas.flatMap((a) => Object.entries(a.sharedSubscriptions ?? {})));
}

/** Whether the operation is one root subscription field given its item argument (see `shareByOf`). */
function singleState(args: { document: DocumentNode; operationName?: string | null; variableValues?: unknown }, shareBy: ReadonlyMap<string, string>): boolean {
  const op = getOperationAST(args.document, args.operationName ?? undefined);
  if (op?.operation !== OperationTypeNode.SUBSCRIPTION || op.selectionSet.selections.length !== 1) return false;
  const field = op.selectionSet.selections[0];
  if (field?.kind !== Kind.FIELD) return false;
  const item = shareBy.get(field.name.value);
  if (item === undefined) return false;
  const variables = (args.variableValues ?? {}) as Record<string, unknown>;
  return (field.arguments ?? []).some((a) => {
    if (a.name.value !== item) return false;
    const v = a.value;
    if (v.kind === Kind.VARIABLE) return variables[v.name.value] !== undefined && variables[v.name.value] !== null;
    return v.kind !== Kind.NULL;
  });
}

/** An event as a client that did not pay for it sees it: its cost reported as shared (`replayedCost`). */
function deduplicated(event: Result): Result {
  const cost = event.extensions?.cost;
  if (cost === undefined) return event;
  return { ...event, extensions: { ...event.extensions, cost: replayedCost(cost, 'dedup') } };
}

export const isAsyncIterable = (x: unknown): x is AsyncIterable<Result> => typeof x === 'object' && x !== null && Symbol.asyncIterator in x;

/**
 * The envelop plugin sharing subscriptions by topic (see the module doc). graphql-ws clients are
 * shared before they reach it (`useWebSocketSharing`); this one shares what runs the envelop
 * pipeline (SSE, and the first graphql-ws subscriber of a topic).
 */
export function useSubscriptionSharing(opts: SubscriptionSharingOptions): GatewayPlugin {
  const hub = new TopicHub(opts.onTopic);
  const shareBy = opts.shareBy ?? new Map<string, string>();
  const join = (topic: Topic): Feed => {
    const feed = new Feed((f) => hub.leave(topic, f));
    hub.join(topic, feed);
    return feed;
  };

  return {
    onSubscribe({ args, subscribeFn, setSubscribeFn }) {
      if (!singleState(args, shareBy)) return;
      const { contextValue, document, operationName, variableValues } = args as {
        contextValue: unknown;
        document: DocumentNode;
        operationName?: string | null;
        variableValues?: unknown;
      };
      const key = topicKey(opts.sessionOf, contextValue, printedOf(document), operationName, variableValues);
      setSubscribeFn(async (subscribeArgs) => {
        const running = hub.get(key);
        if (running) return join(running);
        // The first client opens the topic; others arriving meanwhile join it.
        const topic = hub.open(key);
        const first = join(topic);
        let result: unknown;
        try {
          result = await subscribeFn(subscribeArgs);
        } catch (err) {
          hub.fail(topic, err);
          throw err;
        }
        if (!isAsyncIterable(result)) {
          hub.refuse(topic, result as Result, first);
          return result as Result;
        }
        hub.start(topic, result[Symbol.asyncIterator]());
        return first;
      });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// graphql-ws: subscribers joining a running topic skip the runtime's pipeline entirely

/** The socket of a graphql-ws connection (the `ws` library's), as far as delivery needs it. */
interface DeliverySocket {
  readonly readyState: number;
  /** Bytes queued and not yet sent (a reader that stopped reading makes it grow). */
  readonly bufferedAmount?: number;
  /** The extensions negotiated at the handshake (`ws`: their names, `''` when none). */
  readonly extensions?: unknown;
  send(data: string, cb: (err?: Error) => void): void;
  close(code?: number, reason?: string): void;
}

/** The connection's own socket under the WebSocket (the upgrade request's `socket`), as a direct write needs it. */
export interface ConnectionSocket {
  readonly writable: boolean;
  /** Bytes written and not yet handed to the kernel. */
  readonly writableLength: number;
  write(data: Uint8Array): boolean;
}

/**
 * What of `ws` 8's per-connection sender (`lib/sender.js`, not public) tells that it holds nothing:
 * not compressing nor reading a Blob (`_state` 0), no message queued behind that, not inside a
 * fragmented message. Only then is a frame written around it where it would have written it.
 */
interface SenderState {
  readonly _state: number;
  readonly _queue: { readonly length: number };
  readonly _firstFragment: boolean;
}

const isSenderState = (x: unknown): x is SenderState =>
  typeof x === 'object' &&
  x !== null &&
  '_state' in x &&
  typeof x._state === 'number' &&
  '_queue' in x &&
  Array.isArray(x._queue) &&
  '_firstFragment' in x &&
  typeof x._firstFragment === 'boolean';

/** Where a subscriber's frames may be written directly, when its WebSocket's writing allows it (see `SocketSink`). */
interface Direct {
  tcp: ConnectionSocket;
  sender: SenderState;
}

/**
 * The direct write applies to a WebSocket without extension (no `permessage-deflate`: frames as they
 * are) whose socket is `tcp` and whose sender is `ws` 8's as known; anything else (another library,
 * another `ws`) is written through its `send`.
 */
function directOf(socket: DeliverySocket, tcp: ConnectionSocket | undefined): Direct | null {
  if (tcp === undefined || socket.extensions !== '') return null;
  const internals = socket as DeliverySocket & { _socket?: unknown; _sender?: unknown };
  if (internals._socket !== tcp || !isSenderState(internals._sender)) return null;
  return { tcp, sender: internals._sender };
}

/**
 * One RFC 6455 frame as a server sends it (final, text, unmasked), its payload `head` then `body`,
 * in one buffer: the payload's length in 7 bits, or 126 and 16 bits, or 127 and 64 bits.
 */
export function textFrame(head: Uint8Array, body: Uint8Array): Buffer {
  const length = head.length + body.length;
  const offset = length < 126 ? 2 : length < 65536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(offset + length);
  frame[0] = 0x81;
  if (offset === 2) frame[1] = length;
  else if (offset === 4) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeUInt32BE(Math.floor(length / 2 ** 32), 2);
    frame.writeUInt32BE(length >>> 0, 6);
  }
  frame.set(head, offset);
  frame.set(body, offset + head.length);
  return frame;
}

/**
 * A subscriber whose socket holds this much unsent data is not reading: it is disconnected (1013,
 * try again later) rather than kept growing the gateway's memory with events for it.
 */
export const MAX_BUFFERED_BYTES = 4 * 2 ** 20;
const OPEN = 1;
const ignore = (): void => undefined;

/**
 * One graphql-ws subscriber of a topic. Events are written to its socket as they come, serialised
 * once per topic (`SharedEvent.json`) and framed with its id, without graphql-ws's per-subscriber
 * iteration and serialisation. To graphql-ws it is the subscription's result: an iterator that
 * yields nothing and ends when the topic does (graphql-ws then sends `complete`, or `error` when
 * the topic failed), and whose `return` (the client's `complete`, the socket closing) leaves the topic.
 *
 * The frame: when the connection's socket `tcp` is the WebSocket's own, no extension was negotiated
 * and its sender holds nothing (`directOf`, checked before every event), the whole WebSocket frame
 * is built here (its id's bytes and the event's, encoded once per topic) and written to `tcp` in one
 * write, in order with everything `ws` wrote before (it writes synchronously when it holds nothing);
 * else through the WebSocket's `send`. `ws` frames a message as a header and the data, and writes
 * both (corked: a two-buffer `writev`, and its options and queue bookkeeping per message); here it
 * is one buffer, one `write`. Either way the bytes are counted in the WebSocket's `bufferedAmount`
 * (the socket's unsent bytes are part of it), so a subscriber that stopped reading is still cut off.
 */
export class SocketSink implements Sink, AsyncIterableIterator<Result> {
  private readonly prefix: string;
  private prefixBytes: Buffer | undefined;
  private readonly direct: Direct | null;
  private settle: ((r: IteratorResult<Result>) => void) | null = null;
  private fail: ((err: unknown) => void) | null = null;
  private outcome: { error?: unknown } | null = null;
  /** Leaves the topic (the client's `complete`, its socket closing). */
  leave: () => void = ignore;
  /** Called once when this subscriber's subscription ends, however it ends. */
  ended: () => void = ignore;
  /** What it asked (for its metrics). */
  shape: Shape | null = null;

  constructor(
    private readonly socket: DeliverySocket,
    id: string,
    tcp?: ConnectionSocket,
  ) {
    this.prefix = `{"id":${JSON.stringify(id)},"type":"next","payload":`;
    this.direct = directOf(socket, tcp);
  }

  deliver(event: SharedEvent, paid: boolean): void {
    if (this.outcome !== null || this.socket.readyState !== OPEN) return;
    const buffered = this.socket.bufferedAmount ?? 0;
    if (buffered > MAX_BUFFERED_BYTES) {
      this.socket.close(1013, 'Subscriber too slow');
      return;
    }
    const direct = this.direct;
    // Nothing held by the sender: all it buffered is the socket's.
    if (
      direct !== null &&
      buffered === direct.tcp.writableLength &&
      direct.sender._state === 0 &&
      direct.sender._queue.length === 0 &&
      direct.sender._firstFragment &&
      direct.tcp.writable
    ) {
      direct.tcp.write(textFrame((this.prefixBytes ??= Buffer.from(this.prefix)), event.tail(paid)));
      return;
    }
    this.socket.send(`${this.prefix}${event.json(paid)}}`, ignore);
  }

  end(error?: unknown): void {
    if (this.outcome !== null) return;
    this.outcome = error === undefined ? {} : { error };
    this.ended();
    if (this.settle) this.finish();
  }

  private finish(): void {
    const [settle, fail, outcome] = [this.settle!, this.fail!, this.outcome!];
    this.settle = this.fail = null;
    if ('error' in outcome) fail(publicError(outcome.error));
    else settle({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<Result>> {
    return new Promise((resolve, reject) => {
      this.settle = resolve;
      this.fail = reject;
      if (this.outcome !== null) this.finish();
    });
  }

  return(): Promise<IteratorResult<Result>> {
    this.leave();
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Result> {
    return this;
  }
}

/**
 * The error a subscriber is sent when its shared subscription failed: a GraphQL error as it is (its
 * `extensions.code` included), anything else as the runtime masks it (the cause is logged once).
 */
function publicError(error: unknown): Error {
  if (error instanceof GraphQLError) return error;
  return new GraphQLError('Unexpected error.', { extensions: { code: 'INTERNAL_SERVER_ERROR' } });
}

/** What a shareable subscription document is, by its text (parsed once). */
interface Shape {
  document: DocumentNode;
  /** The operation's name for the metrics (`null`: anonymous). */
  name: string | null;
}

/** The graphql-ws `Subscribe` payload. */
interface SubscribePayload {
  query?: string | null;
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
  extensions?: Record<string, unknown> | null;
}

/** The graphql-ws connection context, as far as sharing reads it. */
interface WsContext {
  connectionParams?: Readonly<Record<string, unknown>>;
  extra: { socket: DeliverySocket; request: { headers: Record<string, unknown>; socket?: ConnectionSocket } };
}

/** The execution args graphql-ws receives from `onSubscribe` and passes to `subscribe`/`execute`. */
interface WsExecutionArgs {
  document: DocumentNode;
  contextValue?: unknown;
}

const OPENS = Symbol('opens a shared topic');
const JOINS = Symbol('joins a shared topic');
/** graphql-ws runs `subscribe` for a document whose operation is a subscription: a joiner's stand-in. */
const JOINED_DOCUMENT = parseBounded('subscription Joined { __typename }');

/** How the subscribers served from a topic are counted (the runtime counts only what it runs). */
export interface SharingMetrics {
  /**
   * A subscriber is served by a topic that started (its document accepted): a subscription open
   * until the returned function is called, and (`operation`, joiners) an operation `ok`. The
   * opener's operation is counted by the runtime.
   */
  served(shape: Shape, operation: boolean): () => void;
  /** A subscriber that joined a topic while it opened, and the topic was refused (`result`) or failed. */
  refused(shape: Shape, result: Result): void;
}

export interface WebSocketSharingOptions extends SubscriptionSharingOptions {
  metrics?: SharingMetrics;
  /** Distinct subscription documents whose shape is remembered. @default 500 */
  maxDocuments?: number;
  /** Longer documents are not shared (nor remembered): they take the runtime's path. @default 16 KiB */
  maxDocumentLength?: number;
}

/** Whether an operation's context is that of a graphql-ws subscription opening a shared topic (its subscribers are counted by the sharing). */
export const opensSharedTopic = (contextValue: unknown): boolean => typeof contextValue === 'object' && contextValue !== null && OPENS in contextValue;

export interface WebSocketSharing {
  /**
   * graphql-ws `onSubscribe`: the execution args of a subscriber joining a shared topic, or
   * `open()`'s (the runtime's args) marked as the opener of a new topic, or `open()`'s as they are
   * when the subscription is not shared.
   */
  onSubscribe<T>(ctx: WsContext, id: string, payload: SubscribePayload, open: () => Promise<T>): Promise<T>;
  /** Wraps graphql-ws's `subscribe`/`execute`: a joiner's result is its sink; an opener's is run and shared. */
  wrap<A extends WsExecutionArgs, R>(run: (args: A) => R | Promise<R>): (args: A) => Promise<R>;
}

/**
 * Shared subscriptions for graphql-ws clients (see the module doc): the first subscriber of a topic
 * runs the runtime's pipeline as any operation does (parse, validation, credentials, budget,
 * execution, result hooks) and its result stream becomes the topic's source; a subscriber of the
 * same topic arriving later is handed the topic's events directly on its socket. What it skips
 * would give it the same answer: the same document, variables and credentials (the topic key),
 * already validated and accepted. A connection whose params carry a malformed credential, a
 * document without text (a persisted-query hash) and subscriptions that are not `singleState` take
 * the normal path.
 *
 * Why: one event to 10,000 subscribers was 10,000 runs of the runtime's result pipeline and of
 * graphql-ws's serialisation; it is now one serialisation and 10,000 socket writes. Subscribing
 * was the runtime's whole pipeline per subscriber; a joiner is now a parse-cache lookup and a hash.
 */
export function useWebSocketSharing(opts: WebSocketSharingOptions): WebSocketSharing {
  const hub = new TopicHub(opts.onTopic);
  const shareBy = opts.shareBy ?? new Map<string, string>();
  const shapes = new LRUCache<string, Shape | false>({ max: opts.maxDocuments ?? 500 });
  const maxLength = opts.maxDocumentLength ?? 16 * 1024;
  /** Subscribers of topics still opening, counted once the topic starts (or is refused). */
  const waiting = new WeakMap<Topic, SocketSink[]>();
  const serve = (sink: SocketSink, operation: boolean): void => {
    if (sink.shape && opts.metrics) sink.ended = opts.metrics.served(sink.shape, operation);
  };
  /** The topic started: its subscribers still there are counted (the opener's operation by the runtime). */
  const started = (topic: Topic, opener: SocketSink): void => {
    for (const sink of waiting.get(topic) ?? []) if (topic.sinks.has(sink)) serve(sink, sink !== opener);
    waiting.delete(topic);
  };
  const refused = (topic: Topic, result: Result, opener: SocketSink): void => {
    for (const sink of waiting.get(topic) ?? []) if (sink !== opener && sink.shape) opts.metrics?.refused(sink.shape, result);
    waiting.delete(topic);
  };
  const failedResult = (err: unknown): Result => ({ errors: [publicError(err) as GraphQLError] });

  const shapeOf = (query: string, operationName: string | null | undefined, variables: unknown): Shape | null => {
    const cacheKey = `${operationName ?? ''}\u0000${query}`;
    let shape = shapes.get(cacheKey);
    if (shape === undefined) {
      shape = false;
      try {
        const document = parseBounded(query);
        const op = getOperationAST(document, operationName ?? undefined);
        if (op?.operation === OperationTypeNode.SUBSCRIPTION) shape = { document, name: op.name?.value ?? null };
      } catch {
        // Not parsable: the runtime answers it.
      }
      shapes.set(cacheKey, shape);
    }
    if (shape === false) return null;
    return singleState({ document: shape.document, operationName, variableValues: variables ?? {} }, shareBy) ? shape : null;
  };

  const sinkFor = (topic: Topic, ctx: WsContext, id: string, shape: Shape): SocketSink => {
    // The upgrade request's socket is the one the WebSocket writes to (`directOf` checks it).
    const sink = new SocketSink(ctx.extra.socket, id, ctx.extra.request.socket);
    sink.leave = () => hub.leave(topic, sink);
    sink.shape = shape;
    return sink;
  };

  return {
    async onSubscribe(ctx, id, payload, open) {
      const query = payload.query;
      // Not shared: a document without text or too long to remember, one with extensions (a
      // persisted-query hash the runtime checks), a connection whose credential is malformed.
      if (typeof query !== 'string' || query.length > maxLength || Object.keys(payload.extensions ?? {}).length > 0 || connectionParamsError(ctx.connectionParams) !== null) {
        return open();
      }
      const shape = shapeOf(query, payload.operationName, payload.variables);
      if (shape === null) return open();
      // The credentials as the runtime merges them into the operation's context (request headers, then connection params).
      const key = topicKey(opts.sessionOf, { headers: { ...ctx.extra.request.headers, ...(ctx.connectionParams ?? {}) } }, query, payload.operationName, payload.variables);
      const running = hub.get(key);
      if (running) {
        const sink = sinkFor(running, ctx, id, shape);
        // Counted now if its document was accepted already, else once it is (or with its refusal).
        if (running.source) serve(sink, true);
        else waiting.get(running)?.push(sink);
        hub.join(running, sink);
        // graphql-ws's execution args (its `schema` is not read: `subscribe` is ours).
        const joined: WsExecutionArgs = { document: JOINED_DOCUMENT, contextValue: { [JOINS]: sink } };
        return joined as never;
      }
      const topic = hub.open(key);
      const sink = sinkFor(topic, ctx, id, shape);
      waiting.set(topic, [sink]);
      hub.join(topic, sink);
      let args: unknown;
      try {
        args = await open();
      } catch (err) {
        refused(topic, failedResult(err), sink);
        hub.fail(topic, err);
        throw err;
      }
      if (!args || Array.isArray(args) || typeof (args as WsExecutionArgs).contextValue !== 'object' || (args as WsExecutionArgs).contextValue === null) {
        // Refused before execution (an `error` message): the others joined meanwhile get its first error.
        const errors = Array.isArray(args) ? (args as unknown[]).filter((e): e is GraphQLError => e instanceof GraphQLError) : [];
        const refusal = errors[0] ?? new GraphQLError('The subscription was refused.', { extensions: { code: 'BAD_REQUEST' } });
        refused(topic, { errors: [refusal] }, sink);
        hub.fail(topic, refusal);
        return args as never;
      }
      ((args as WsExecutionArgs).contextValue as Record<symbol, unknown>)[OPENS] = { topic, sink };
      return args as never;
    },

    wrap<A extends WsExecutionArgs, R>(run: (args: A) => R | Promise<R>) {
      return async (args: A): Promise<R> => {
        const context = (args.contextValue ?? {}) as Record<symbol, unknown>;
        const joined = context[JOINS];
        // A sink is what graphql-ws iterates (an async iterable result).
        if (joined instanceof SocketSink) return joined as R;
        const opening = context[OPENS] as { topic: Topic; sink: SocketSink } | undefined;
        if (!opening) return run(args);
        let result: R;
        try {
          result = await run(args);
        } catch (err) {
          refused(opening.topic, failedResult(err), opening.sink);
          hub.fail(opening.topic, err);
          throw err;
        }
        if (!isAsyncIterable(result)) {
          refused(opening.topic, result as Result, opening.sink);
          hub.refuse(opening.topic, result as Result, opening.sink);
          return result;
        }
        hub.start(opening.topic, result[Symbol.asyncIterator]());
        started(opening.topic, opening.sink);
        return opening.sink as R;
      };
    },
  };
}
