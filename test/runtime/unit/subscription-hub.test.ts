/**
 * The shared-subscription hub (`gateway/subscription-sharing.ts`): who reports an event's cost, what
 * a late joiner gets first, a refusal reaching everyone who joined, the source closed when the last
 * subscriber leaves; and a graphql-ws subscriber's delivery (one frame per event, its id, nothing
 * on a closed socket, `complete`/`error` through graphql-ws when the topic ends).
 */
import { describe, expect, it } from 'vitest';
import { GraphQLError, type ExecutionResult } from 'graphql';
import { MAX_BUFFERED_BYTES, SharedEvent, SocketSink, TopicHub, type Sink } from '../../../gateway/subscription-sharing.ts';
import { summarize } from '../../../subgraphs/upstream/cost.ts';

type Got = { value: ExecutionResult; paid: boolean };

class Recorder implements Sink {
  readonly got: Got[] = [];
  ended: unknown = 'no';
  deliver(event: SharedEvent, paid: boolean): void {
    this.got.push({ value: paid ? event.value : event.dedup, paid });
  }
  end(error?: unknown): void {
    this.ended = error ?? 'ok';
  }
}

/** A source the test pushes events into; `returned` tells whether the hub closed it. */
function source(): { it: AsyncIterator<ExecutionResult>; push(r: ExecutionResult): void; finish(): void; returned: () => boolean } {
  const queue: Array<IteratorResult<ExecutionResult>> = [];
  let waiting: ((r: IteratorResult<ExecutionResult>) => void) | null = null;
  let returned = false;
  const give = (r: IteratorResult<ExecutionResult>): void => {
    if (waiting) {
      const w = waiting;
      waiting = null;
      w(r);
    } else queue.push(r);
  };
  return {
    it: {
      next: () => (queue.length ? Promise.resolve(queue.shift()!) : new Promise((resolve) => (waiting = resolve))),
      return: () => {
        returned = true;
        give({ value: undefined, done: true });
        return Promise.resolve({ value: undefined, done: true });
      },
    },
    push: (r) => give({ value: r, done: false }),
    finish: () => give({ value: undefined, done: true }),
    returned: () => returned,
  };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

const paidEvent = (): ExecutionResult => ({
  data: { riskRequestUpdated: { id: 'r1', state: 'COMPLETE' } },
  extensions: {
    cost: summarize([{ area: 'risk', method: 'GET', path: '/IT-crif/r1', status: 200, euro: 0.2, ms: 40, source: 'upstream' }]),
  },
});

/** A started topic with two subscribers, `a` first. */
function twoJoined(): { hub: TopicHub; topic: ReturnType<TopicHub['open']>; a: Recorder; b: Recorder; src: ReturnType<typeof source> } {
  const hub = new TopicHub();
  const topic = hub.open('k');
  const [a, b] = [new Recorder(), new Recorder()];
  hub.join(topic, a);
  hub.join(topic, b);
  const src = source();
  hub.start(topic, src.it);
  return { hub, topic, a, b, src };
}

describe('TopicHub', () => {
  it('one subscriber reports the paid event; the others get it de-duplicated (0 €), a late joiner the latest de-duplicated', async () => {
    const hub = new TopicHub();
    const topic = hub.open('k');
    const [a, b, c] = [new Recorder(), new Recorder(), new Recorder()];
    hub.join(topic, a);
    hub.join(topic, b);
    hub.join(topic, c);
    const src = source();
    hub.start(topic, src.it);
    src.push(paidEvent());
    await tick();
    expect(a.got.map((g) => g.paid)).toEqual([true]);
    expect((a.got[0].value.extensions?.cost as { euro: number }).euro).toBe(0.2);
    for (const r of [b, c]) {
      expect(r.got).toHaveLength(1);
      expect(r.got[0].value.data).toEqual(a.got[0].value.data);
      expect(r.got[0].value.extensions?.cost).toMatchObject({ euro: 0, upstreamCalls: 0, dedupHits: 1, answeredFrom: 'in-flight', saved: { upstreamCalls: 1, euro: 0.2 } });
    }
    const late = new Recorder();
    hub.join(topic, late);
    expect(late.got).toHaveLength(1);
    expect(late.got[0].paid).toBe(false);
    expect(late.got[0].value.extensions?.cost).toMatchObject({ euro: 0, answeredFrom: 'in-flight' });

    src.finish();
    await tick();
    for (const r of [a, b, c, late]) expect(r.ended).toBe('ok');
    // A finished topic is gone: the next subscriber opens a fresh one.
    expect(hub.get('k')).toBeUndefined();
  });

  it('the earliest subscriber still there reports the cost when the first has left', async () => {
    const { hub, topic, a, b, src } = twoJoined();
    hub.leave(topic, a);
    src.push(paidEvent());
    await tick();
    expect(a.got).toHaveLength(0);
    expect(b.got.map((g) => g.paid)).toEqual([true]);
  });

  it('a refusal reaches every subscriber but the opener (which has its own answer) and closes the topic', () => {
    const opens: boolean[] = [];
    const hub = new TopicHub((open) => opens.push(open));
    const topic = hub.open('k');
    const [opener, joiner] = [new Recorder(), new Recorder()];
    hub.join(topic, opener);
    hub.join(topic, joiner);
    const refusal: ExecutionResult = { errors: [], data: null, extensions: { code: 'FORBIDDEN' } };
    hub.refuse(topic, refusal, opener);
    expect(opener.got).toHaveLength(0);
    expect(joiner.got.map((g) => g.value)).toEqual([refusal]);
    expect(joiner.ended).toBe('ok');
    expect(hub.get('k')).toBeUndefined();
    expect(opens).toEqual([true, false]);
  });

  it('the last subscriber leaving closes the source; one leaving while others stay does not', async () => {
    const { hub, topic, a, b, src } = twoJoined();
    hub.leave(topic, a);
    await tick();
    expect(src.returned()).toBe(false);
    hub.leave(topic, b);
    await tick();
    expect(src.returned()).toBe(true);
    expect(hub.get('k')).toBeUndefined();
  });

  it('a source that fails ends every subscriber with its error', async () => {
    const hub = new TopicHub();
    const topic = hub.open('k');
    const a = new Recorder();
    hub.join(topic, a);
    const boom = new Error('subgraph went away');
    hub.start(topic, { next: () => Promise.reject(boom) });
    await tick();
    expect(a.ended).toBe(boom);
  });
});

describe('SocketSink (a graphql-ws subscriber served by a shared topic)', () => {
  const socket = (
    open = true,
    bufferedAmount = 0,
  ): { readyState: number; bufferedAmount: number; sent: string[]; closed: number[]; send(d: string, cb: (err?: Error) => void): void; close(code?: number): void } => ({
    readyState: open ? 1 : 3,
    bufferedAmount,
    sent: [],
    closed: [],
    send(d, cb) {
      this.sent.push(d);
      cb();
    },
    close(code) {
      this.closed.push(code ?? 1000);
    },
  });

  it('writes each event as one graphql-ws `next` frame with its id; the JSON is built once per event for every socket', () => {
    const [s1, s2] = [socket(), socket()];
    const [a, b] = [new SocketSink(s1, 'sub-"1"'), new SocketSink(s2, '9')];
    const event = new SharedEvent(paidEvent());
    a.deliver(event, true);
    b.deliver(event, false);
    expect(JSON.parse(s1.sent[0])).toEqual({ id: 'sub-"1"', type: 'next', payload: JSON.parse(JSON.stringify(paidEvent())) });
    const other = JSON.parse(s2.sent[0]) as { id: string; type: string; payload: ExecutionResult };
    expect(other).toMatchObject({ id: '9', type: 'next', payload: { data: paidEvent().data, extensions: { cost: { euro: 0, answeredFrom: 'in-flight' } } } });
    // Built once: a third socket gets the very same text.
    expect(event.json(false)).toBe(event.json(false));
  });

  it('writes nothing to a closed socket, nor after it ended', () => {
    const closed = socket(false);
    new SocketSink(closed, '1').deliver(new SharedEvent(paidEvent()), true);
    expect(closed.sent).toEqual([]);
    const open = socket();
    const sink = new SocketSink(open, '2');
    sink.end();
    sink.deliver(new SharedEvent(paidEvent()), true);
    expect(open.sent).toEqual([]);
  });

  it('disconnects a subscriber that stopped reading (its unsent data past the cap) instead of queueing more for it', () => {
    const stalled = socket(true, MAX_BUFFERED_BYTES + 1);
    new SocketSink(stalled, '1').deliver(new SharedEvent(paidEvent()), true);
    expect(stalled.sent).toEqual([]);
    expect(stalled.closed).toEqual([1013]);
  });

  it('yields nothing to graphql-ws and ends when the topic ends (complete), or rejects with its error', async () => {
    const sink = new SocketSink(socket(), '1');
    let ended = 0;
    sink.ended = () => ended++;
    const pending = sink.next();
    sink.end();
    expect(await pending).toEqual({ value: undefined, done: true });
    expect(ended).toBe(1);
    // A GraphQL error reaches the subscriber as it is (its code); anything else masked, as the runtime does.
    const failing = new SocketSink(socket(), '2');
    const next = failing.next();
    failing.end(new GraphQLError('Budget exhausted', { extensions: { code: 'COST_LIMIT_EXCEEDED' } }));
    await expect(next).rejects.toMatchObject({ message: 'Budget exhausted', extensions: { code: 'COST_LIMIT_EXCEEDED' } });
    const crashed = new SocketSink(socket(), '3');
    const next3 = crashed.next();
    crashed.end(new Error('ECONNRESET at 10.0.0.7 with token abc'));
    await expect(next3).rejects.toMatchObject({ message: 'Unexpected error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } });
  });

  it('return (the client completes or its socket closes) leaves the topic once and ends', async () => {
    const sink = new SocketSink(socket(), '1');
    let left = 0;
    let ended = 0;
    sink.leave = () => left++;
    sink.ended = () => ended++;
    const pending = sink.next();
    await sink.return();
    expect(await pending).toEqual({ value: undefined, done: true });
    expect([left, ended]).toEqual([1, 1]);
  });
});
