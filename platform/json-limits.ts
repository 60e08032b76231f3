/**
 * Bounds on the JSON a client sends, enforced while it is read: a linear, non-recursive scan of the
 * bytes (or characters) counts them, the values and the nesting depth, and refuses the text as soon
 * as one passes its limit, before `JSON.parse` (or anything else) spends memory or stack on it.
 *
 * Two byte budgets: structure is cheap to send and dear to hold (two bytes `{}` make an object of
 * some 50 bytes of heap), while a file is the reverse (a base64 PDF is one string). So the content
 * of long strings past their first `LONG_STRING_BYTES` (files: base64 PDFs, XML invoices, a bulk
 * message's HTML) counts against `maxUploadBytes`, and everything else against `maxBytes`.
 *
 * Used by the gateway's and the subgraphs' GraphQL servers and by the emulator's REST server; knows
 * nothing of GraphQL or of any area.
 */
import type { IncomingMessage } from 'node:http';
import { SETTINGS_SCHEMA, settingsOf, type SettingsSource } from './settings.ts';

export interface JsonLimits {
  /** Bytes of a text apart from the content of long strings. @default 1 MiB */
  maxBytes: number;
  /** Bytes of long strings' content past each one's first `LONG_STRING_BYTES` (files). @default 14 MiB */
  maxUploadBytes: number;
  /** Nesting of arrays and objects. @default 32 */
  maxDepth: number;
  /** Values, object keys included. @default 10,000 */
  maxValues: number;
}

/** A string longer than this (in bytes) is a file: its content past this counts as an upload. */
export const LONG_STRING_BYTES = 64 * 1024;

/**
 * Defaults for a GraphQL request. 14 MiB of uploads: the most one mutation takes is two PDFs of at
 * most 5 MiB each (`RISK_MAX_PDF_BYTES`, `PEC_MAX_PDF_BYTES`: a person bureau request's identity
 * document and health card, a mailbox's activation form and identity document), 13.4 MiB in
 * base64. 10,000 values: a bulk sending's 5,000 recipients, the largest list the validators allow.
 */
export const DEFAULT_JSON_LIMITS: Readonly<JsonLimits> = Object.freeze({
  maxBytes: SETTINGS_SCHEMA.MAX_BODY_BYTES.default,
  maxUploadBytes: SETTINGS_SCHEMA.MAX_UPLOAD_BYTES.default,
  maxDepth: SETTINGS_SCHEMA.MAX_JSON_DEPTH.default,
  maxValues: SETTINGS_SCHEMA.MAX_JSON_VALUES.default,
});

/** Largest whole text the limits allow. */
export const maxTotalBytes = (limits: JsonLimits): number => limits.maxBytes + limits.maxUploadBytes;

/** A text refused: 413 when too large, 400 otherwise; `code` is stable, `message` says which limit. */
export class JsonLimitError extends Error {
  override name = 'JsonLimitError';
  constructor(
    readonly status: 400 | 413,
    readonly code: 'BAD_REQUEST' | 'PAYLOAD_TOO_LARGE',
    message: string,
  ) {
    super(message);
  }
}

const tooLarge = (what: string): JsonLimitError => new JsonLimitError(413, 'PAYLOAD_TOO_LARGE', what);
const badRequest = (what: string): JsonLimitError => new JsonLimitError(400, 'BAD_REQUEST', what);

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/**
 * Counts a JSON text fed in pieces (bytes or a string's UTF-16 units: every character that matters
 * is ASCII, and no byte or unit of a multi-byte character is). It does not validate the syntax
 * (`JSON.parse` does, once the text passed); a malformed text is never counted as less than it is.
 * `depthOffset` is the nesting of what is bounded inside the text (e.g. 1 for the variables of a
 * GraphQL request body, which sit in the request's object).
 */
export class JsonScanner {
  private depth = 0;
  private values = 0;
  private bytes = 0;
  private uploadBytes = 0;
  private inString = false;
  private escaped = false;
  private stringBytes = 0;
  private inLiteral = false;
  private readonly maxDepth: number;

  constructor(
    private readonly limits: JsonLimits,
    depthOffset = 0,
  ) {
    this.maxDepth = limits.maxDepth + depthOffset;
  }

  /** Scans one more piece; throws `JsonLimitError` at the first limit passed. */
  write(piece: Uint8Array | string): void {
    const text = typeof piece === 'string';
    const n = piece.length;
    for (let i = 0; i < n; i++) {
      const c = text ? piece.charCodeAt(i) : piece[i];
      if (this.inString) {
        // A string's content: bytes up to LONG_STRING_BYTES are ordinary, the rest are a file's.
        if (++this.stringBytes > LONG_STRING_BYTES) this.uploadBytes++;
        else this.bytes++;
        if (this.escaped) this.escaped = false;
        else if (c === BACKSLASH) this.escaped = true;
        else if (c === QUOTE) this.inString = false;
        continue;
      }
      this.bytes++;
      if (c === QUOTE) {
        this.inString = true;
        this.stringBytes = 0;
        this.inLiteral = false;
        this.values++;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        this.inLiteral = false;
        this.values++;
        if (++this.depth > this.maxDepth) throw badRequest(`JSON nested deeper than ${this.limits.maxDepth} levels`);
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        this.inLiteral = false;
        this.depth--;
      } else if (c === COMMA || c === COLON || isSpace(c)) {
        this.inLiteral = false;
      } else if (!this.inLiteral) {
        // A number, true, false or null (or anything JSON.parse will refuse) starts here.
        this.inLiteral = true;
        this.values++;
      }
      if (this.values > this.limits.maxValues) throw badRequest(`JSON holds more than ${this.limits.maxValues} values`);
    }
    if (this.bytes > this.limits.maxBytes) throw tooLarge(`larger than ${this.limits.maxBytes} bytes apart from file contents`);
    if (this.uploadBytes > this.limits.maxUploadBytes) throw tooLarge(`file contents larger than ${this.limits.maxUploadBytes} bytes`);
  }
}

/** Throws `JsonLimitError` when `text` passes a limit (see `JsonScanner`). */
export function checkJson(text: string, limits: JsonLimits, depthOffset = 0): void {
  new JsonScanner(limits, depthOffset).write(text);
}

/** `JSON.parse` of a text within the limits; a text past them, or not JSON, is a `JsonLimitError`. */
export function parseJson(text: string, limits: JsonLimits, depthOffset = 0): unknown {
  checkJson(text, limits, depthOffset);
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw badRequest(`not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
}

/**
 * The whole body of a request, refused (`JsonLimitError`) as soon as it passes the limits: by its
 * `content-length` before a byte is read, else while it is read. With `json`, the body is scanned as
 * JSON as it arrives (values, depth, the two byte budgets); otherwise only its size counts, against
 * `maxBytes + maxUploadBytes`. The request is not destroyed when refused, so an answer can still be
 * sent (see `closeAfterAnswer` in the layer, which must then follow: the rest is still unread).
 */
export async function readBoundedBody(req: IncomingMessage, limits: JsonLimits, opts: { json: boolean; depthOffset?: number }): Promise<Buffer> {
  const total = maxTotalBytes(limits);
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > total) throw tooLarge(`larger than ${total} bytes`);
  const scanner = opts.json ? new JsonScanner(limits, opts.depthOffset ?? 0) : null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req.iterator({ destroyOnReturn: false })) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += b.length;
    if (size > total) throw tooLarge(`larger than ${total} bytes`);
    scanner?.write(b);
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}

/**
 * Limits from the settings (`platform/settings.ts`: each an integer of at least 1, 0 allowed for
 * `MAX_UPLOAD_BYTES`): `MAX_BODY_BYTES`, `MAX_UPLOAD_BYTES`, `MAX_JSON_DEPTH`, `MAX_JSON_VALUES`.
 */
export function jsonLimitsFromEnv(env: SettingsSource): JsonLimits {
  const s = settingsOf(env);
  // 0 for MAX_UPLOAD_BYTES: no file contents at all.
  return { maxBytes: s.MAX_BODY_BYTES, maxUploadBytes: s.MAX_UPLOAD_BYTES, maxDepth: s.MAX_JSON_DEPTH, maxValues: s.MAX_JSON_VALUES };
}
