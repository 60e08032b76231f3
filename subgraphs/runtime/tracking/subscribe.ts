/**
 * Subscription plumbing every tracked area shares: a live stream of snapshots from the bus, mapped
 * to the subscription's payload `{ <field>: snapshot }`, keeping `return()` so that a client that
 * leaves releases the bus subscription.
 */
export function payloads<K extends string, V>(key: K, source: AsyncIterableIterator<V>): AsyncIterableIterator<{ [k in K]: V }> {
  const wrap = (r: IteratorResult<V>): IteratorResult<{ [k in K]: V }> =>
    r.done ? { value: undefined, done: true } : { value: { [key]: r.value } as { [k in K]: V }, done: false };
  const it: AsyncIterableIterator<{ [k in K]: V }> = {
    [Symbol.asyncIterator]: () => it,
    next: async () => wrap(await source.next()),
    return: async () => wrap(source.return ? await source.return() : { value: undefined, done: true }),
    throw: async (e?: unknown) => wrap(source.throw ? await source.throw(e) : { value: undefined, done: true }),
  };
  return it;
}
