/**
 * A callback receiver standing in for the user's own endpoint: an HTTP server on loopback that
 * answers 200 and keeps every request, read in order with `next()` (wrap it in `withSafety`).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Delivery {
  headers: IncomingMessage['headers'];
  body: string;
}

export interface Receiver {
  url: string;
  /** The next delivery not taken yet, when it arrives. */
  next(): Promise<Delivery>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  const waiting: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      deliveries.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end('ok');
      for (const w of waiting.splice(0)) w();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  let taken = 0;
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    async next() {
      while (deliveries.length <= taken) await new Promise<void>((r) => waiting.push(r));
      return deliveries[taken++];
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
