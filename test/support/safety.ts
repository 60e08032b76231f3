/**
 * A safety limit on a wait that an event ends (a subscription message, a callback): the test fails
 * with a clear message instead of hanging. Not a way to synchronise: the wait itself is the event.
 * (The kit's `within`, under the name most tests use.)
 */
import { within } from './wait.ts';

export const withSafety = <T>(p: Promise<T>, what: string, ms = 10_000): Promise<T> => within(p, `${what} (safety limit)`, ms);
