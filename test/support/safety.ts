/**
 * A safety limit on a wait that an event ends (a subscription message, a callback): the test fails
 * with a clear message instead of hanging. Not a way to synchronise: the wait itself is the event.
 */
export async function withSafety<T>(p: Promise<T>, what: string, ms = 10_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`safety limit: no ${what} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, limit]);
  } finally {
    clearTimeout(timer);
  }
}
