/**
 * What the layer learns has changed, told to whoever in this process caches answers built on it
 * (the gateway's whole-response cache, `gateway/response-cache.ts`): a tracked piece of work of a
 * tenant changed state (the kit publishes it on the bus; across replicas the gateway hears the bus's
 * Redis channels), or the layer's caches were cleared. Listeners are called synchronously; a
 * listener's failure never stops the one announcing.
 */
import { log } from './log.ts';

export type LayerChange =
  /** A bus topic of the kit (`<area>:<tenant>` or `<area>:<tenant>:<id>`) received a new state. */
  | { kind: 'topic'; topic: string }
  /** Every cached upstream answer was dropped (`UpstreamClient.clearCache`). */
  | { kind: 'cleared' };

type Listener = (change: LayerChange) => void;

const listeners = new Set<Listener>();

/** Tells this process's listeners about a change. */
export function announceChange(change: LayerChange): void {
  for (const l of listeners) {
    try {
      l(change);
    } catch (err) {
      log.error({ area: 'changes', err }, 'listener failed');
    }
  }
}

/** Listens to this process's changes until the returned function is called. */
export function onLayerChange(listener: Listener): () => void {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

/** The tenant a kit topic (`<area>:<tenant>[:<id>]`) is about, if it has that shape. */
export function tenantOfTopic(topic: string): string | null {
  const parts = topic.split(':');
  return parts.length >= 2 && parts[1] ? parts[1] : null;
}
