/**
 * A callback receiver standing in for the user's own endpoint: an HTTP server on loopback that
 * answers 200 and keeps every request. Read them in order with `next()` (wrap it in `withSafety`),
 * wait for a number of them with `arrived(n)`, or for one that matches with `find(pred)`; each wait
 * ends on a delivery, not on a poll, and fails with a clear message after its limit.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Delivery {
  /** The request's path (and query), as the sender addressed it. */
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface Receiver {
  /** `origin` + `/hook`. */
  url: string;
  /** `http://127.0.0.1:<port>`: a test may give each sender a path of its own under it. */
  origin: string;
  /** Every delivery so far, in order. */
  deliveries: readonly Delivery[];
  /** The next delivery not taken yet, when it arrives. */
  next(): Promise<Delivery>;
  /** Resolves once `n` deliveries have arrived. */
  arrived(n: number, ms?: number): Promise<void>;
  /** The first delivery, arrived or to come, that `pred` accepts. */
  find(pred: (d: Delivery) => boolean, ms?: number): Promise<Delivery>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  const waiting: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      deliveries.push({ path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end('ok');
      for (const w of waiting.splice(0)) w();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  /** The next delivery's arrival, or (with `ms`) that many milliseconds, whichever comes first. */
  const arrival = (ms?: number): Promise<void> =>
    new Promise<void>((r) => {
      const timer = ms === undefined ? undefined : setTimeout(r, ms);
      waiting.push(() => {
        clearTimeout(timer);
        r();
      });
    });
  /** `probe`'s first value that is not undefined, probed on each delivery, for at most `ms`. */
  const until = async <T>(probe: () => T | undefined, what: string, ms: number): Promise<T> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = probe();
      if (v !== undefined) return v;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`callback receiver: ${what} after ${ms} ms (${deliveries.length} deliveries)`);
      await arrival(left);
    }
  };
  let taken = 0;
  return {
    url: `${origin}/hook`,
    origin,
    deliveries,
    async next() {
      while (deliveries.length <= taken) await arrival();
      return deliveries[taken++];
    },
    async arrived(n, ms = 20_000) {
      await until(() => (deliveries.length >= n ? true : undefined), `not ${n} deliveries`, ms);
    },
    find: (pred, ms = 20_000) => until(() => deliveries.find(pred), 'no matching delivery', ms),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
