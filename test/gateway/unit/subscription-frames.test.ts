/**
 * A shared subscription's frames written straight to the connection's socket
 * (`gateway/subscription-sharing.ts`: `textFrame`, `SocketSink`): the RFC 6455 frame built byte for
 * byte (7-, 16- and 64-bit lengths), read back by the `ws` client as the same text, in order with
 * what `ws` itself writes; and `ws`'s own `send` whenever writing around it would not be safe
 * (permessage-deflate negotiated, a message still held by its sender).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer, type PerMessageDeflateOptions } from 'ws';
import type { ExecutionResult } from 'graphql';
import { SharedEvent, SocketSink, textFrame } from '../../../gateway/subscription-sharing.ts';

describe('textFrame', () => {
  /** The header RFC 6455 §5.2 gives a final, unmasked text frame of `length` payload bytes. */
  const header = (length: number): number[] => {
    if (length < 126) return [0x81, length];
    if (length < 65536) return [0x81, 126, length >> 8, length & 0xff];
    const bytes = [0x81, 127];
    for (let shift = 7; shift >= 0; shift--) bytes.push(Math.floor(length / 2 ** (8 * shift)) % 256);
    return bytes;
  };

  it.each([0, 1, 125, 126, 127, 65535, 65536, 70_000])('a payload of %i bytes: its length in 7, 16 or 64 bits, then the head and the body', (length) => {
    const head = Buffer.from('{"id":"é",'.slice(0, Math.min(10, length)));
    const body = Buffer.alloc(length - head.length, 0x62);
    const frame = textFrame(head, body);
    const h = header(length);
    expect([...frame.subarray(0, h.length)]).toEqual(h);
    expect(frame.length).toBe(h.length + length);
    expect(frame.subarray(h.length).equals(Buffer.concat([head, body]))).toBe(true);
  });
});

/** An event whose `next` message is about `size` bytes. */
const eventOf = (size: number): ExecutionResult => ({ data: { riskRequestUpdated: { id: 'r-1', state: 'COMPLETE', note: 'ü'.repeat(Math.max(0, size / 2)) } } });
const nextMessage = (id: string, event: ExecutionResult): unknown => ({ id, type: 'next', payload: event });

interface Connection {
  server: WebSocket;
  request: IncomingMessage;
  client: WebSocket;
  /** Every message the client got: its text, and whether it came as binary. */
  got: Array<{ text: string; binary: boolean }>;
  /** Resolves when the client got `n` messages in all. */
  received(n: number): Promise<void>;
  /** Calls of the server socket's `send`. */
  sends: () => number;
}

const servers: Server[] = [];
const clients: WebSocket[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.terminate();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

async function connect(perMessageDeflate: PerMessageDeflateOptions | false = false): Promise<Connection> {
  const http = createServer();
  servers.push(http);
  const wss = new WebSocketServer({ server: http, perMessageDeflate });
  const accepted = new Promise<{ server: WebSocket; request: IncomingMessage }>((resolve) => wss.on('connection', (server, request) => resolve({ server, request })));
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const client = new WebSocket(`ws://127.0.0.1:${(http.address() as AddressInfo).port}`, { perMessageDeflate });
  clients.push(client);
  const got: Array<{ text: string; binary: boolean }> = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  client.on('message', (data: Buffer, binary: boolean) => {
    got.push({ text: data.toString(), binary });
    for (const w of waiters) if (got.length >= w.n) w.resolve();
  });
  await new Promise((r) => client.once('open', r));
  const { server, request } = await accepted;
  let sends = 0;
  const send = server.send.bind(server);
  server.send = ((...args: Parameters<WebSocket['send']>) => {
    sends++;
    send(...args);
  }) as WebSocket['send'];
  return {
    server,
    request,
    client,
    got,
    sends: () => sends,
    received: async (n) => {
      if (got.length >= n) return;
      await new Promise<void>((resolve) => waiters.push({ n, resolve }));
    },
  };
}

describe('SocketSink over a real WebSocket', () => {
  it('writes each frame straight to the socket (no `send`), read back as the same text whatever its length, in order with what `ws` writes', async () => {
    const c = await connect();
    const ids = ['1', 'sub-"ü"-\u2028', 'x'.repeat(300)];
    const sinks = ids.map((id) => new SocketSink(c.server, id, c.request.socket));
    const events = [eventOf(10), eventOf(500), eventOf(70_000)].map((e) => new SharedEvent(e));
    const expected: unknown[] = [];
    c.server.send('{"type":"ping"}');
    expected.push({ type: 'ping' });
    for (const event of events)
      for (const [i, sink] of sinks.entries()) {
        sink.deliver(event, i === 0);
        expected.push(nextMessage(ids[i], i === 0 ? event.value : event.dedup));
      }
    c.server.send('{"type":"pong"}');
    expected.push({ type: 'pong' });
    await c.received(expected.length);
    expect(c.got.map((m) => JSON.parse(m.text) as unknown)).toEqual(expected);
    expect(c.got.every((m) => !m.binary)).toBe(true);
    // Only the two messages sent by the test went through `send`.
    expect(c.sends()).toBe(2);
    // The event's bytes are encoded once, whoever gets them.
    expect(events[0].tail(false)).toBe(events[0].tail(false));
  });

  it('permessage-deflate negotiated: every frame goes through `send` (compressed by `ws`), the same text', async () => {
    const c = await connect({ threshold: 0 });
    expect(c.server.extensions).toContain('permessage-deflate');
    const sink = new SocketSink(c.server, 'z', c.request.socket);
    const event = new SharedEvent(eventOf(200));
    sink.deliver(event, true);
    await c.received(1);
    expect(JSON.parse(c.got[0].text)).toEqual(nextMessage('z', event.value));
    expect(c.sends()).toBe(1);
  });

  it('a message still held by `ws` (a Blob being read): the frame goes through `send`, after it; once written, straight again', async () => {
    const c = await connect();
    const sink = new SocketSink(c.server, 'b', c.request.socket);
    const [first, second] = [new SharedEvent(eventOf(20)), new SharedEvent(eventOf(30))];
    c.server.send(new Blob(['held']));
    sink.deliver(first, true);
    expect(c.sends()).toBe(2);
    await c.received(2);
    expect(c.got[0]).toEqual({ text: 'held', binary: true });
    expect(JSON.parse(c.got[1].text)).toEqual(nextMessage('b', first.value));
    sink.deliver(second, true);
    await c.received(3);
    expect(JSON.parse(c.got[2].text)).toEqual(nextMessage('b', second.value));
    expect(c.sends()).toBe(2);
  });

  it('another socket than the WebSocket’s own, or none: through `send`', async () => {
    const c = await connect();
    const other = await connect();
    const event = new SharedEvent(eventOf(20));
    new SocketSink(c.server, 'o', other.request.socket).deliver(event, true);
    new SocketSink(c.server, 'n').deliver(event, true);
    await c.received(2);
    expect(c.got.map((m) => JSON.parse(m.text) as unknown)).toEqual([nextMessage('o', event.value), nextMessage('n', event.value)]);
    expect(c.sends()).toBe(2);
    expect(other.got).toEqual([]);
  });
});
