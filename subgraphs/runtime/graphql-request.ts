/**
 * GraphQL requests bounded before the server spends memory or stack on them, for the gateway's and
 * the subgraphs' servers alike (`platform/json-limits.ts` counts; this applies it to GraphQL):
 *
 * - over HTTP, `guardGraphQLRequest` reads a POST body itself, scanning it as it arrives, and
 *   answers 413 (too large) or 400 (too deep, too many values, not JSON, not a GraphQL request)
 *   before the GraphQL server sees it; a body it accepts is handed on already parsed (`req.body`,
 *   which the Fetch adapter under graphql-yoga takes instead of the stream). A GET's `variables` and
 *   `extensions` are checked the same way (its size is bounded by Node's header limit).
 * - over graphql-ws, `guardGraphQLWebSocket` scans every message before graphql-ws parses it: a
 *   refused `subscribe` gets an `error` message for its id, anything else the close 4400.
 *
 * A refusal is the client's mistake: a clear message and a stable `extensions.code`
 * (`BAD_REQUEST`, `PAYLOAD_TOO_LARGE`), never a log line.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebSocket, WebSocketServer } from 'ws';
import { JsonLimitError, JsonScanner, parseJson, readBoundedBody, type JsonLimits } from '../../platform/json-limits.ts';
import { closeAfterAnswer, sendJson } from '../../platform/http.ts';

/** Nesting of a request body's `variables` and `extensions` inside the body's object. */
const BODY_DEPTH = 1;
/** Nesting of a graphql-ws message's `variables` inside the message and its payload. */
const MESSAGE_DEPTH = 2;

type Code = 'BAD_REQUEST' | 'PAYLOAD_TOO_LARGE';

function refuse(res: ServerResponse, status: number, code: Code, message: string): true {
  sendJson(res, status, { errors: [{ message, extensions: { code } }] });
  return true;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What is wrong with the parameters of a GraphQL request (a POST body's parsed JSON), or null:
 * `query` and `operationName` strings, `variables` and `extensions` objects, each optional.
 */
export function graphqlParamsProblem(body: unknown): string | null {
  if (!isPlainObject(body)) return 'The request body must be a JSON object (batched requests are not accepted).';
  if (body.query != null && typeof body.query !== 'string') return '"query" must be a string.';
  if (body.operationName != null && typeof body.operationName !== 'string') return '"operationName" must be a string.';
  if (body.variables != null && !isPlainObject(body.variables)) return '"variables" must be an object.';
  if (body.extensions != null && !isPlainObject(body.extensions)) return '"extensions" must be an object.';
  return null;
}

/** The same for parameters in a URL query string or a form: `variables` and `extensions` hold JSON. */
function searchParamsProblem(params: URLSearchParams, limits: JsonLimits): string | null {
  for (const name of ['query', 'operationName', 'variables', 'extensions']) {
    if (params.getAll(name).length > 1) return `"${name}" is given more than once.`;
  }
  for (const name of ['variables', 'extensions']) {
    const raw = params.get(name);
    if (raw === null || raw === '') continue;
    let value: unknown;
    try {
      value = parseJson(raw, limits);
    } catch (err) {
      if (err instanceof JsonLimitError) return `"${name}" is refused: ${err.message}.`;
      throw err;
    }
    if (value !== null && !isPlainObject(value)) return `"${name}" must be a JSON object.`;
  }
  return null;
}

/**
 * Checks a GraphQL request to the server's GraphQL endpoint before the GraphQL server sees it, and
 * answers it when refused (true). A POST body is read here, within `limits`; when accepted it is
 * left on `req.body` (parsed JSON, or the bytes of another content type) for the server to use.
 */
export async function guardGraphQLRequest(req: IncomingMessage & { body?: unknown }, res: ServerResponse, limits: JsonLimits): Promise<boolean> {
  const method = req.method ?? 'GET';
  const url = req.url ?? '/';
  if (method === 'GET' || method === 'HEAD') {
    const q = url.indexOf('?');
    const problem = q < 0 ? null : searchParamsProblem(new URLSearchParams(url.slice(q + 1)), limits);
    return problem !== null && refuse(res, 400, 'BAD_REQUEST', problem);
  }
  if (method !== 'POST') return false;

  const type = (req.headers['content-type'] ?? '').toLowerCase();
  const json = type.includes('json');
  let body: Buffer;
  try {
    body = await readBoundedBody(req, limits, { json, depthOffset: BODY_DEPTH });
  } catch (err) {
    if (!(err instanceof JsonLimitError)) throw err;
    // Refused before the whole body was read: the rest is discarded and the connection closes.
    closeAfterAnswer(req, res);
    return refuse(res, err.status, err.code, `The request body is refused: ${err.message}.`);
  }
  if (body.length === 0) return refuse(res, 400, 'BAD_REQUEST', 'The request body is empty.');
  if (json) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8')) as unknown;
    } catch {
      return refuse(res, 400, 'BAD_REQUEST', 'The request body is not valid JSON.');
    }
    const problem = graphqlParamsProblem(parsed);
    if (problem !== null) return refuse(res, 400, 'BAD_REQUEST', problem);
    // An empty object handed on parsed would reach the server as no body at all (the Fetch adapter
    // skips an empty one): its bytes go on instead, so the server says what is missing in its own
    // terms (e.g. PERSISTED_QUERY_ID_REQUIRED where only persisted operations run).
    req.body = Object.keys(parsed as object).length === 0 ? body : parsed;
    return false;
  }
  if (type.includes('application/x-www-form-urlencoded')) {
    const problem = searchParamsProblem(new URLSearchParams(body.toString('utf8')), limits);
    if (problem !== null) return refuse(res, 400, 'BAD_REQUEST', problem);
  }
  req.body = body;
  return false;
}

/** The id of a `subscribe` message, read from its start only (the rest was refused unparsed). */
const SUBSCRIBE_ID = /^\s*\{\s*"id"\s*:\s*"([^"\\]{1,128})"\s*,\s*"type"\s*:\s*"subscribe"/;

type MessageData = Buffer | ArrayBuffer | Buffer[];

/** The refusal of a message past the limits, or null when it may go on to graphql-ws. */
function messageRefusal(data: MessageData, limits: JsonLimits): JsonLimitError | null {
  const scanner = new JsonScanner(limits, MESSAGE_DEPTH);
  try {
    for (const piece of Array.isArray(data) ? data : [data]) scanner.write(piece instanceof ArrayBuffer ? new Uint8Array(piece) : piece);
    return null;
  } catch (err) {
    if (err instanceof JsonLimitError) return err;
    throw err;
  }
}

/**
 * Every message of every graphql-ws connection of `wss` is scanned within `limits` before graphql-ws
 * (or anything else) receives it. A refused `subscribe` whose id can be read gets an `error` message
 * for that id (the connection and its other operations go on); any other refused message closes
 * the connection with 4400 (a bad request in the graphql-ws protocol). Call before `useServer`.
 */
export function guardGraphQLWebSocket(wss: WebSocketServer, limits: JsonLimits): void {
  wss.on('connection', (socket: WebSocket) => {
    const emit = socket.emit.bind(socket) as (event: string | symbol, ...args: unknown[]) => boolean;
    const guarded = (event: string | symbol, ...args: unknown[]): boolean => {
      if (event !== 'message') return emit(event, ...args);
      const data = args[0] as MessageData;
      const refusal = messageRefusal(data, limits);
      if (refusal === null) return emit(event, ...args);
      const head = (Array.isArray(data) ? data[0] : Buffer.from(data instanceof ArrayBuffer ? new Uint8Array(data) : data)).subarray(0, 256).toString('utf8');
      const id = SUBSCRIBE_ID.exec(head)?.[1];
      const message = `The operation is refused: ${refusal.message}.`;
      if (id !== undefined) socket.send(JSON.stringify({ id, type: 'error', payload: [{ message, extensions: { code: refusal.code } }] }));
      // A close reason is at most 123 bytes.
      else socket.close(4400, message.slice(0, 120));
      return true;
    };
    socket.emit = guarded;
  });
}
