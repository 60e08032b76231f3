/** HTTP helpers of the layer's servers: JSON answers, path segments, early answers that close the connection, and the request listener. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ServerLife } from './health.ts';
import { log } from './log.ts';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers }).end(JSON.stringify(body));
}

/** A decoded path segment, or null for a malformed percent-escape (refused like a bad signature). */
export function decodeSegment(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

/** How long a connection closed after an early answer keeps reading what the client still sends. */
export const LINGER_MS = 2_000;

/** Sockets closing after an early answer (see `closeAfterAnswer`). */
const closing = new WeakSet<Socket>();

/**
 * Whether a request arrived on a connection that is closing after an early answer: the server's
 * request listener must not run it (RFC 9112 §9.6), only discard it.
 */
function onClosingConnection(req: IncomingMessage): boolean {
  return closing.has(req.socket);
}

/**
 * Ends the connection after this answer, for an answer sent while the client may still be sending
 * its body (a 413, an answer before the whole body was read): what the client still sends is read
 * and discarded, the answer says `connection: close`, no request that follows on the connection is
 * run (`onClosingConnection`), and the connection closes in stages (RFC 9112 §9.6): the write side
 * once the answer is out, the read side when the client closes its own or after `lingerMs`.
 *
 * Node's HTTP server ends the write side after a `connection: close` answer and destroys the socket
 * as soon as that is flushed (`socket.destroySoon`). Body bytes still unread or still arriving then
 * meet a closed socket, the kernel answers them with a reset, and the reset can erase the answer from
 * the client's buffers before it is read: the sender sees ECONNRESET or EPIPE instead of the 413.
 * This socket's `destroySoon` is therefore replaced by the staged close.
 */
export function closeAfterAnswer(req: IncomingMessage, res: ServerResponse, lingerMs = LINGER_MS): void {
  req.unpipe();
  req.resume();
  if (!res.headersSent) res.setHeader('connection', 'close');
  const socket = req.socket;
  closing.add(socket);
  socket.destroySoon = () => {
    socket.end();
    const timer = setTimeout(() => socket.destroy(), lingerMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
}

/** 413 `body too large`, the connection closed after it (see `closeAfterAnswer`). */
export function refuseTooLarge(req: IncomingMessage, res: ServerResponse): void {
  closeAfterAnswer(req, res);
  sendJson(res, 413, { error: 'body too large' });
}

/**
 * The request listener of the layer's HTTP servers (the gateway's, the subgraphs'): `handle` answers.
 * - A request on a connection closing after an early answer is not run (RFC 9112 §9.6).
 * - Every answer is tracked by `life`, for the drain.
 * - A client that goes away (mid request body or mid answer) is normal, not a failure: one short
 *   line, no trace, only the route's prefix (the rest may be a signed token).
 * - A handler's failure answers 500, or cuts short an answer already begun rather than let it look
 *   complete; a write to a finished answer is a bug to log, never a reason to end the process.
 */
export function requestListener(
  name: string,
  life: Pick<ServerLife, 'track'>,
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<unknown>,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (onClosingConnection(req)) {
      req.resume();
      return;
    }
    life.track(res);
    let clientLeft = false;
    res.once('close', () => {
      if (!res.writableFinished) clientLeft = true;
    });
    res.on('error', (err) => {
      if (!clientLeft) log.error({ err }, `[${name}] response error`);
    });
    void handle(req, res).catch((err: unknown) => {
      if (clientLeft) {
        log.warn(`[${name}] client went away: ${req.method ?? ''} ${(req.url ?? '/').split('?')[0].split('/').slice(0, 3).join('/')}`);
        return;
      }
      log.error({ err }, `[${name}] request failed`);
      if (res.headersSent || res.destroyed) {
        res.destroy();
        return;
      }
      res.writeHead(500, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end('{"error":"internal"}');
    });
  };
}
