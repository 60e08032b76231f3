/** Small HTTP helpers of the kit's routes (and the gateway's). */
import type { IncomingMessage, ServerResponse } from 'node:http';

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

/**
 * Ends the connection after this answer, for an answer sent while the client may still be sending
 * its body (a 413, an answer before the whole body was read): what the client still sends is read
 * and discarded, the answer says `connection: close`, and the connection closes in stages (RFC 9112
 * §9.6): the write side once the answer is out, the read side when the client closes its own or
 * after `lingerMs`.
 *
 * Node's HTTP server closes both sides at once after a `connection: close` answer
 * (`socket.destroySoon`). Data the client is still sending then meets a closed socket, the kernel
 * answers it with a reset, and the reset can erase the answer from the client's buffers before it
 * is read: the sender sees ECONNRESET or EPIPE instead of the 413.
 */
export function closeAfterAnswer(req: IncomingMessage, res: ServerResponse, lingerMs = LINGER_MS): void {
  req.unpipe();
  req.resume();
  if (!res.headersSent) res.setHeader('connection', 'close');
  const socket = req.socket;
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
