import { describe, expect, it } from 'vitest';
import { MemoryEventBus } from '../../../platform/bus.ts';

interface Ev {
  id: string;
  v: number;
  done?: boolean;
}

async function take<T>(it: AsyncIterator<T>, n: number): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i++) {
    const r = await it.next();
    if (r.done) break;
    out.push(r.value);
  }
  return out;
}

describe('MemoryEventBus', () => {
  it('delivers published events to subscribers of the topic only', async () => {
    const bus = new MemoryEventBus<Ev>();
    const a = bus.subscribe('a', { replayLatest: false });
    const b = bus.subscribe('b', { replayLatest: false });
    const first = a.next();
    await bus.publish('b', { id: 'x', v: 1 });
    await bus.publish('a', { id: 'x', v: 2 });
    expect((await first).value).toEqual({ id: 'x', v: 2 });
    expect((await b.next()).value).toEqual({ id: 'x', v: 1 });
    await a.return?.();
    await b.return?.();
  });

  it('yields the latest known event first (late subscriber misses nothing)', async () => {
    const bus = new MemoryEventBus<Ev>();
    await bus.publish('t', { id: 'r', v: 1 });
    await bus.publish('t', { id: 'r', v: 2 });
    const it = bus.subscribe('t');
    expect((await it.next()).value).toEqual({ id: 'r', v: 2 });
    await bus.publish('t', { id: 'r', v: 3 });
    expect((await it.next()).value).toEqual({ id: 'r', v: 3 });
    await it.return?.();
  });

  it('yields initial states, then live ones, skipping duplicates and stale versions', async () => {
    const bus = new MemoryEventBus<Ev>();
    const it = bus.subscribe('t', {
      replayLatest: false,
      initial: () => [{ id: 'r', v: 2 }],
      identity: (e) => e.id,
      version: (e) => e.v,
    });
    // Published after subscribing, before the first next(): kept, then ordered after the initial state.
    await bus.publish('t', { id: 'r', v: 1 });
    await bus.publish('t', { id: 'r', v: 2 });
    await bus.publish('t', { id: 'r', v: 3 });
    expect(await take(it, 2)).toEqual([
      { id: 'r', v: 2 },
      { id: 'r', v: 3 },
    ]);
    await it.return?.();
  });

  it('keeps versions per identity', async () => {
    const bus = new MemoryEventBus<Ev>();
    const it = bus.subscribe('t', { replayLatest: false, identity: (e) => e.id, version: (e) => e.v });
    await bus.publish('t', { id: 'a', v: 5 });
    await bus.publish('t', { id: 'b', v: 1 });
    await bus.publish('t', { id: 'a', v: 4 });
    await bus.publish('t', { id: 'b', v: 2 });
    expect(await take(it, 3)).toEqual([
      { id: 'a', v: 5 },
      { id: 'b', v: 1 },
      { id: 'b', v: 2 },
    ]);
    await it.return?.();
  });

  it('filters events', async () => {
    const bus = new MemoryEventBus<Ev>();
    const it = bus.subscribe('t', { replayLatest: false, filter: (e) => e.id === 'keep' });
    await bus.publish('t', { id: 'drop', v: 1 });
    await bus.publish('t', { id: 'keep', v: 2 });
    expect((await it.next()).value).toEqual({ id: 'keep', v: 2 });
    await it.return?.();
  });

  it('ends after a final event and detaches', async () => {
    const bus = new MemoryEventBus<Ev>();
    const it = bus.subscribe('t', { replayLatest: false, until: (e) => e.done === true });
    await bus.publish('t', { id: 'r', v: 1 });
    await bus.publish('t', { id: 'r', v: 2, done: true });
    await bus.publish('t', { id: 'r', v: 3 });
    expect(await take(it, 5)).toEqual([
      { id: 'r', v: 1 },
      { id: 'r', v: 2, done: true },
    ]);
    expect((await it.next()).done).toBe(true);
    expect(bus.subscriberCount('t')).toBe(0);
  });

  it('ends at once when the initial state is final', async () => {
    const bus = new MemoryEventBus<Ev>();
    const it = bus.subscribe('t', { replayLatest: false, initial: () => [{ id: 'r', v: 9, done: true }], until: (e) => e.done === true });
    expect((await it.next()).value).toEqual({ id: 'r', v: 9, done: true });
    expect((await it.next()).done).toBe(true);
  });

  it('detaches on return() and resolves a pending next()', async () => {
    const bus = new MemoryEventBus<Ev>();
    const it = bus.subscribe('t', { replayLatest: false });
    const pending = it.next();
    await Promise.resolve();
    expect(bus.subscriberCount('t')).toBe(1);
    await it.return?.();
    expect((await pending).done).toBe(true);
    expect(bus.subscriberCount('t')).toBe(0);
  });

  it('drops the oldest events beyond the buffer', async () => {
    const bus = new MemoryEventBus<Ev>();
    const it = bus.subscribe('t', { replayLatest: false, bufferSize: 2 });
    for (let v = 1; v <= 4; v++) await bus.publish('t', { id: 'r', v });
    expect(await take(it, 2)).toEqual([
      { id: 'r', v: 3 },
      { id: 'r', v: 4 },
    ]);
    await it.return?.();
  });

  it('close() ends every subscription', async () => {
    const bus = new MemoryEventBus<Ev>();
    const it = bus.subscribe('t', { replayLatest: false });
    const pending = it.next();
    bus.close();
    expect((await pending).done).toBe(true);
  });

  it('forgets the least recently published topics beyond its bound', async () => {
    const bus = new MemoryEventBus<Ev>({ maxLatest: 2 });
    await bus.publish('a', { id: 'a', v: 1 });
    await bus.publish('b', { id: 'b', v: 1 });
    await bus.publish('a', { id: 'a', v: 2 });
    await bus.publish('c', { id: 'c', v: 1 });
    expect(await bus.latest('b')).toBeUndefined();
    expect(await bus.latest('a')).toEqual({ id: 'a', v: 2 });
    expect(await bus.latest('c')).toEqual({ id: 'c', v: 1 });
  });
});
