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
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { getOperationAST, Kind, OperationTypeNode, print, type DocumentNode, type ExecutionResult } from 'graphql';
import { callerSessionOf, keyHash, stableJson } from './caller-session.ts';
import { replayedCost } from './cost.ts';

type Result = ExecutionResult;

export interface SubscriptionSharingOptions {
  /** Called when a shared subscription opens (`true`) or closes (`false`), e.g. for metrics and tests. */
  onTopic?: (open: boolean) => void;
}

/** One client's view of a topic: events pushed by the topic, pulled by the client's iteration. */
class Feed implements AsyncIterableIterator<Result> {
  private readonly queue: Result[] = [];
  private waiting: ((r: IteratorResult<Result>) => void) | null = null;
  private failed: ((err: unknown) => void) | null = null;
  private error: unknown = null;
  private done = false;

  constructor(private readonly leave: (feed: Feed) => void) {}

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

/** One shared subscription: its source (the first client's execution) and the clients' feeds. */
interface Topic {
  feeds: Set<Feed>;
  /** The latest event, for clients joining later. */
  last: Result | undefined;
  source: AsyncIterator<Result> | null;
  closed: boolean;
}

const printed = new WeakMap<DocumentNode, string>();
const printedOf = (doc: DocumentNode): string => {
  let s = printed.get(doc);
  if (s === undefined) printed.set(doc, (s = print(doc)));
  return s;
};

/**
 * What makes two subscriptions the same topic (see the module doc): the caller's session (every
 * credential that changes the answer, hashed: `caller-session.ts`) and a hash of the document,
 * operation name and variables (keys sorted), so no token or password sits in a key.
 */
export function topicKey(args: { document: DocumentNode; operationName?: string | null; variableValues?: unknown; contextValue?: unknown }): string {
  return `${callerSessionOf(args.contextValue)}|${keyHash(printedOf(args.document), args.operationName ?? '', stableJson(args.variableValues ?? {}))}`;
}

/**
 * Arguments that make a subscription follow ONE item (a request, an invoice, a mailbox, a monitor):
 * what a new subscriber gets first is that item's latest state, which is exactly the topic's latest
 * event, so a late joiner misses nothing. Subscriptions over many items (every active invoice, all
 * monitors, a stream of arrivals) send one event per item on subscribe; a joiner given only the last
 * one would miss the others, so those are never shared.
 */
const ITEM_ARGUMENTS = new Set(['id', 'monitorId']);

/** Whether the operation is one root subscription field given an item argument (see `ITEM_ARGUMENTS`). */
function singleState(args: { document: DocumentNode; operationName?: string | null; variableValues?: unknown }): boolean {
  const op = getOperationAST(args.document, args.operationName ?? undefined);
  if (op?.operation !== OperationTypeNode.SUBSCRIPTION || op.selectionSet.selections.length !== 1) return false;
  const field = op.selectionSet.selections[0];
  if (field?.kind !== Kind.FIELD) return false;
  const variables = (args.variableValues ?? {}) as Record<string, unknown>;
  return (field.arguments ?? []).some((a) => {
    if (!ITEM_ARGUMENTS.has(a.name.value)) return false;
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

const isAsyncIterable = (x: unknown): x is AsyncIterable<Result> => typeof x === 'object' && x !== null && Symbol.asyncIterator in x;

/** The envelop plugin sharing subscriptions by topic (see the module doc). */
export function useSubscriptionSharing(opts: SubscriptionSharingOptions = {}): GatewayPlugin {
  const topics = new Map<string, Topic>();

  const close = (key: string, topic: Topic): void => {
    if (topic.closed) return;
    topic.closed = true;
    if (topics.get(key) === topic) topics.delete(key);
    opts.onTopic?.(false);
    void topic.source?.return?.()?.catch(() => undefined);
  };

  const join = (key: string, topic: Topic): Feed => {
    const feed = new Feed((f) => {
      topic.feeds.delete(f);
      if (topic.feeds.size === 0) close(key, topic);
    });
    topic.feeds.add(feed);
    if (topic.last !== undefined) feed.push(deduplicated(topic.last));
    return feed;
  };

  const pump = async (key: string, topic: Topic, source: AsyncIterator<Result>): Promise<void> => {
    try {
      for (;;) {
        const r = await source.next();
        if (r.done || topic.closed) break;
        topic.last = r.value;
        // One client (the earliest still there) reports the event's upstream cost; the others
        // report it de-duplicated, so the euro reported across clients is what was paid.
        let first = true;
        for (const feed of topic.feeds) {
          feed.push(first ? r.value : deduplicated(r.value));
          first = false;
        }
      }
      for (const feed of topic.feeds) feed.end();
    } catch (err) {
      for (const feed of topic.feeds) feed.end(err);
    } finally {
      // Clients still joined have been ended; the next subscriber opens a fresh subscription.
      if (topics.get(key) === topic) topics.delete(key);
      if (!topic.closed) {
        topic.closed = true;
        opts.onTopic?.(false);
      }
    }
  };

  return {
    onSubscribe({ args, subscribeFn, setSubscribeFn }) {
      if (!singleState(args)) return;
      const key = topicKey(args);
      setSubscribeFn(async (subscribeArgs) => {
        const running = topics.get(key);
        if (running) return join(key, running);
        // The first client opens the topic; others arriving meanwhile join it.
        const topic: Topic = { feeds: new Set(), last: undefined, source: null, closed: false };
        topics.set(key, topic);
        opts.onTopic?.(true);
        const first = join(key, topic);
        let result: unknown;
        try {
          result = await subscribeFn(subscribeArgs);
        } catch (err) {
          for (const feed of topic.feeds) feed.end(err);
          close(key, topic);
          throw err;
        }
        if (!isAsyncIterable(result)) {
          // Refused (validation, credentials, budget, …): anyone who joined meanwhile (same
          // credentials, same document) gets the same refusal, with its `extensions.code`.
          for (const feed of topic.feeds) {
            if (feed === first) continue;
            feed.push(result as Result);
            feed.end();
          }
          close(key, topic);
          return result as Result;
        }
        topic.source = result[Symbol.asyncIterator]();
        if (topic.closed) {
          // Everyone left while it was opening.
          void topic.source.return?.()?.catch(() => undefined);
          return first;
        }
        void pump(key, topic, topic.source);
        return first;
      });
    },
  };
}
