/**
 * The event bus on Redis, for replicas: an event is kept as its topic's latest (`bus:latest:<topic>`,
 * expiring after `latestTtlMs`) and published on the channel `<prefix>bus:<topic>`; each process
 * SUBSCRIBEs (on its own connection) to the topics its subscribers watch and fans events out
 * locally (`LocalTopics`, the memory bus's logic). A subscriber on any process thus gets the latest
 * event first, then live ones; the SUBSCRIBE is confirmed before the latest is read, so nothing
 * published in between is lost (duplicates are dropped by the subscription's `version`). After the
 * subscriber connection reconnects, the latest event of every watched topic is delivered again
 * (an event published while it was down reached no one); a subscription made while Redis is
 * unreachable fails after `readyTimeoutMs` instead of hanging.
 *
 * `@graphql-hive/pubsub`'s `RedisPubSub` was considered: it is only a transitive dependency of the
 * gateway runtime (not declared by this package), and it carries events but keeps no latest event
 * per topic, which is the part the bus needs; the SUBSCRIBE bookkeeping it would save is the few
 * lines below.
 */
import type { Redis } from 'ioredis';
import { LocalTopics, type EventBus, type SubscribeOptions } from '../../../platform/bus.ts';
import { channelOf, closeRedis, duplicateRedis } from '../../../platform/redis.ts';

export interface RedisEventBusOptions {
  /** How long a topic's latest event is kept. @default 7 days */
  latestTtlMs?: number;
  /** Close the connections on `close()`. @default true */
  ownConnections?: boolean;
  /** How long a subscription waits for the subscriber connection before failing. @default 3 × the connection's connect timeout */
  readyTimeoutMs?: number;
}

export class RedisEventBus<T> implements EventBus<T> {
  private readonly sub: Redis;
  private readonly local: LocalTopics<T>;
  private readonly subscribed = new Map<string, Promise<unknown>>();
  private readonly latestTtlMs: number;
  private readonly own: boolean;
  private readonly channelPrefix: string;
  private readonly readyTimeoutMs: number;

  constructor(
    private readonly redis: Redis,
    opts: RedisEventBusOptions = {},
  ) {
    this.latestTtlMs = opts.latestTtlMs ?? 7 * 24 * 3600 * 1000;
    this.own = opts.ownConnections ?? true;
    this.channelPrefix = channelOf(redis, 'bus:');
    this.sub = duplicateRedis(redis, 'bus-sub');
    this.readyTimeoutMs = opts.readyTimeoutMs ?? 3 * (this.sub.options.connectTimeout ?? 10_000);
    this.local = new LocalTopics<T>(
      (topic) => this.latest(topic),
      async (topic) => {
        await this.attach(topic);
      },
    );
    this.local.onTopic = (topic, active) => {
      if (active) void this.attach(topic).catch(() => undefined);
      else {
        this.subscribed.delete(topic);
        void this.sub.unsubscribe(this.channelPrefix + topic).catch(() => undefined);
      }
    };
    // After a reconnection, events published while the connection was down reached no one here:
    // SUBSCRIBE again (confirmed), then hand every active topic's latest to its subscribers (their
    // version check drops what they already had).
    let connectedOnce = false;
    this.sub.on('ready', () => {
      if (!connectedOnce) {
        connectedOnce = true;
        return;
      }
      void this.catchUp().catch(() => undefined);
    });
    this.sub.on('message', (channel: string, message: string) => {
      if (!channel.startsWith(this.channelPrefix)) return;
      let event: T;
      try {
        event = JSON.parse(message) as T;
      } catch {
        return;
      }
      this.local.deliver(channel.slice(this.channelPrefix.length), event);
    });
  }

  private attach(topic: string): Promise<unknown> {
    let p = this.subscribed.get(topic);
    if (!p) {
      // SUBSCRIBE only once the subscriber connection is ready: one queued while it connects may
      // be confirmed yet not take effect on the connection that ends up serving it.
      p = this.ready().then(() => this.sub.subscribe(this.channelPrefix + topic));
      this.subscribed.set(topic, p);
      // A failed attach is tried again by the next subscriber, not remembered as done.
      p.catch(() => {
        if (this.subscribed.get(topic) === p) this.subscribed.delete(topic);
      });
    }
    return p;
  }

  /** Delivers the latest event of every topic watched here (after a reconnection). */
  private async catchUp(): Promise<void> {
    const topics = this.local.topics();
    if (topics.length === 0) return;
    await this.sub.subscribe(...topics.map((t) => this.channelPrefix + t));
    await Promise.all(
      topics.map(async (topic) => {
        const latest = await this.latest(topic);
        if (latest !== undefined) this.local.deliver(topic, latest);
      }),
    );
  }

  /**
   * Resolves once the subscriber connection is ready; rejects when it ends, or after a few connect
   * timeouts while Redis stays unreachable (a subscription then fails instead of hanging).
   */
  private ready(): Promise<void> {
    if (this.sub.status === 'ready') return Promise.resolve();
    const waitMs = this.readyTimeoutMs;
    return new Promise<void>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        this.sub.off('ready', onReady);
        this.sub.off('end', onEnd);
      };
      const onReady = (): void => {
        done();
        resolve();
      };
      const onEnd = (): void => {
        done();
        reject(new Error('the event bus connection to Redis ended'));
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`the event bus could not reach Redis within ${waitMs} ms`));
      }, waitMs);
      timer.unref();
      this.sub.once('ready', onReady);
      this.sub.once('end', onEnd);
    });
  }

  async publish(topic: string, event: T): Promise<void> {
    const json = JSON.stringify(event);
    await this.redis
      .multi()
      .set(`bus:latest:${topic}`, json, 'PX', this.latestTtlMs)
      .publish(this.channelPrefix + topic, json)
      .exec();
  }

  async latest(topic: string): Promise<T | undefined> {
    const raw = await this.redis.get(`bus:latest:${topic}`);
    return raw === null ? undefined : (JSON.parse(raw) as T);
  }

  subscribe(topic: string, opts: SubscribeOptions<T> = {}): AsyncIterableIterator<T> {
    return this.local.subscribe(topic, opts);
  }

  /** Open subscriptions on `topic` in this process. */
  subscriberCount(topic: string): number {
    return this.local.count(topic);
  }

  async close(): Promise<void> {
    this.local.close();
    await closeRedis(this.sub);
    if (this.own) await closeRedis(this.redis);
  }
}
