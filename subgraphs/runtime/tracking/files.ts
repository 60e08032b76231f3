/**
 * Signed downloads: a document field returns a short-lived URL under the gateway's
 * `/files/<area>/`, never the document itself. The URL carries an opaque grant id, its expiry and an
 * HMAC; the grant (kept server side, in a `FileGrantStore`, with the upstream token sealed) says
 * which upstream document to fetch and with which token. The gateway forwards `/files/<area>/<token>`
 * here and the document is streamed from upstream as it arrives. Without a valid, unexpired
 * signature nothing is fetched.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { LRUCache } from 'lru-cache';
import { entriesAtMost } from '../../../platform/lru.ts';
import type { UpstreamAuth } from '../context.ts';
import { randomId, type Signer } from '../../../platform/signing.ts';
import type { Upstream } from '../../upstream/upstream.ts';
import { CostMeter } from '../../upstream/cost.ts';
import { PASS_THROUGH_TOKENS, type WorkTokens } from '../../upstream/work-tokens.ts';
import type { Endpoint } from '../../upstream/endpoint.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import { TokenCipher } from './cipher.ts';
import { decodeSegment, sendJson } from '../../../platform/http.ts';
import { log } from '../../../platform/log.ts';

/** The signature purpose of an area's file URLs. */
export const filePurpose = (area: string): string => `${area}-file`;

/** What a signed URL lets its holder download. */
export interface FileGrant {
  id: string;
  auth: UpstreamAuth;
  endpoint: Endpoint;
  params: Record<string, string>;
  fileName: string;
  contentType: string;
  /** Unix seconds. */
  expiresAt: number;
}

/** What the schema's `SignedFile` holds. */
export interface SignedFileValue {
  url: string;
  expiresAt: string;
  fileName: string;
  contentType: string;
}

/** Where grants live (their tokens already sealed): `MemoryFileGrantStore`, `RedisFileGrantStore`. */
export interface FileGrantStore {
  /** Keeps `grant` until `grant.expiresAt`, and notes it as the grant of `docKey`. */
  put(grant: FileGrant, docKey: string): Promise<void>;
  get(id: string): Promise<FileGrant | undefined>;
  /** The grant last issued for a document, while it lives. */
  forDocument(docKey: string): Promise<FileGrant | undefined>;
}

export interface MemoryFileGrantStoreOptions {
  /** Grants kept at most (least recently used go first). @default 20000 */
  maxGrants?: number;
  now?: () => number;
}

/** One process's grants: a bounded LRU, each grant expiring with its URL. */
export class MemoryFileGrantStore implements FileGrantStore {
  private readonly grants: LRUCache<string, FileGrant>;
  private readonly byDocument: LRUCache<string, string>;
  private readonly now: () => number;

  constructor(opts: MemoryFileGrantStoreOptions = {}) {
    this.now = opts.now ?? Date.now;
    const max = opts.maxGrants ?? 20_000;
    const perf = { now: () => this.now() };
    this.grants = new LRUCache({ ...entriesAtMost(max), ttlResolution: 0, perf });
    this.byDocument = new LRUCache({ ...entriesAtMost(max), ttlResolution: 0, perf });
  }

  async put(grant: FileGrant, docKey: string): Promise<void> {
    const ttl = Math.max(1, grant.expiresAt * 1000 - this.now());
    this.grants.set(grant.id, grant, { ttl });
    this.byDocument.set(docKey, grant.id, { ttl });
  }

  async get(id: string): Promise<FileGrant | undefined> {
    return this.grants.get(id);
  }

  async forDocument(docKey: string): Promise<FileGrant | undefined> {
    const id = this.byDocument.get(docKey);
    return id === undefined ? undefined : this.grants.get(id);
  }
}

export interface FileGrantsOptions {
  signer: Signer;
  /** The area's name in URLs (`/files/<area>/…`) and the signature purpose. */
  area: string;
  /** Lifetime of a URL in seconds. @default 300 */
  ttlSeconds?: number;
  /** Where grants live. @default a `MemoryFileGrantStore` */
  store?: FileGrantStore;
  /** Seals the upstream token of each grant. @default a cipher under a random key */
  cipher?: TokenCipher;
  /**
   * Which token a grant keeps: the layer's own as a marker resolved at download time (a URL may
   * outlive a rotation of the managed token). @default pass-through (kept as is)
   */
  tokens?: () => WorkTokens;
  now?: () => number;
}

export class FileGrants {
  private readonly signer: Signer;
  private readonly area: string;
  private readonly store: FileGrantStore;
  private readonly cipher: TokenCipher;
  readonly ttlSeconds: number;
  private readonly now: () => number;
  private readonly tokens: () => WorkTokens;

  constructor(opts: FileGrantsOptions) {
    this.signer = opts.signer;
    this.area = opts.area;
    this.ttlSeconds = opts.ttlSeconds ?? 300;
    this.now = opts.now ?? Date.now;
    this.store = opts.store ?? new MemoryFileGrantStore({ now: this.now });
    this.cipher = opts.cipher ?? new TokenCipher(randomBytes(32));
    this.tokens = opts.tokens ?? (() => PASS_THROUGH_TOKENS);
  }

  /** A signed URL under `<publicUrl>/files/<area>/` for one upstream document (a grant is reused while more than half its life is left). */
  async issue(
    publicUrl: string,
    auth: UpstreamAuth,
    endpoint: Endpoint,
    params: Record<string, string>,
    fileName: string,
    contentType = 'application/pdf',
  ): Promise<SignedFileValue> {
    const nowS = Math.floor(this.now() / 1000);
    const docKey = `${auth.tenant}|${endpoint.path}|${JSON.stringify(params)}`;
    let grant = await this.store.forDocument(docKey);
    const kept = this.tokens().keep(auth.token);
    if (!grant || this.cipher.open(grant.auth.token) !== kept || grant.expiresAt - nowS < this.ttlSeconds / 2) {
      grant = { id: randomId(18), auth: { ...auth, token: this.cipher.seal(kept) }, endpoint, params, fileName, contentType, expiresAt: nowS + this.ttlSeconds };
      await this.store.put(grant, docKey);
    }
    const token = this.signer.sign(filePurpose(this.area), grant.id, grant.expiresAt - nowS);
    const expiresAt = Number(token.split('.')[1]);
    return {
      url: `${publicUrl.replace(/\/+$/, '')}/files/${this.area}/${token}/${encodeURIComponent(grant.fileName)}`,
      expiresAt: new Date(expiresAt * 1000).toISOString(),
      fileName: grant.fileName,
      contentType: grant.contentType,
    };
  }

  /** The grant a token names, when the token is genuine and unexpired. */
  /** The grant a token names (its upstream token opened), when the token is genuine and unexpired. */
  async resolve(token: string): Promise<FileGrant | null> {
    const v = this.signer.verify(filePurpose(this.area), token);
    if (!v.ok) return null;
    const grant = await this.store.get(v.payload);
    if (!grant || grant.expiresAt * 1000 <= this.now()) return null;
    const plain = this.cipher.open(grant.auth.token);
    if (plain === undefined) return null;
    return { ...grant, auth: { ...grant.auth, token: plain } };
  }

  /** Serves `/files/<token>[/<name>]`; refuses anything not signed, expired or unknown with 403. */
  async serve(req: IncomingMessage, res: ServerResponse, rest: string, upstream: Upstream | null): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendJson(res, 405, { error: 'method not allowed' }, { allow: 'GET, HEAD' });
      return;
    }
    const token = decodeSegment(rest.split('/')[0] ?? '');
    const grant = token === null ? null : await this.resolve(token);
    if (!grant) {
      sendJson(res, 403, { error: 'forbidden: missing, invalid or expired signature' });
      return;
    }
    const headers: Record<string, string> = {
      'content-type': grant.contentType,
      'content-disposition': `attachment; filename="${grant.fileName.replace(/["\\\r\n]/g, '_')}"`,
      'cache-control': 'private, no-store',
      'x-content-type-options': 'nosniff',
    };
    if (req.method === 'HEAD') {
      // HEAD answers from the grant alone, with no upstream call: a download is paid per call, and
      // a HEAD (link checkers, `curl -I`, previews) must neither cost money nor open an upstream
      // body that then has to be thrown away. So it carries no content-length, and says nothing
      // about whether the document is ready yet (a GET does).
      res.writeHead(200, headers).end();
      return;
    }
    if (!upstream) {
      sendJson(res, 503, { error: 'not ready' });
      return;
    }
    let doc;
    try {
      doc = await upstream.download({ auth: { ...grant.auth, token: this.tokens().use(grant.auth.token) }, meter: new CostMeter() }, grant.endpoint, { params: grant.params });
    } catch (err) {
      if (err instanceof UpstreamError) {
        const status = err.status === 404 || err.status === 400 ? 404 : err.status === 406 || err.status === 422 ? 409 : err.kind === 'timeout' ? 504 : 502;
        sendJson(res, status, {
          error: status === 409 ? 'the document is not ready yet' : status === 404 ? 'not found' : 'upstream unavailable',
          upstream: { status: err.status, error: err.upstreamCode, message: err.message },
        });
        return;
      }
      throw err;
    }
    if (res.destroyed) {
      // The client went away while the document was being fetched: drop the upstream body (with a
      // listener for the 'error' its destruction emits, so nothing goes unhandled).
      doc.body.on('error', () => undefined).destroy();
      return;
    }
    if (doc.contentType) headers['content-type'] = doc.contentType;
    if (doc.length !== null) headers['content-length'] = String(doc.length);
    // Which side failed first: the client going away is normal, the upstream failing midway is not.
    let clientLeft = false;
    let upstreamFailed = false;
    res.once('close', () => {
      if (!res.writableFinished && !upstreamFailed) clientLeft = true;
    });
    doc.body.once('error', () => {
      if (!clientLeft) upstreamFailed = true;
    });
    res.writeHead(200, headers);
    try {
      // Either side failing destroys the other: a client that goes away stops the upstream read,
      // an upstream that fails midway cuts the response short (never a complete-looking body).
      await pipeline(doc.body, res);
    } catch (err) {
      if (clientLeft) return;
      log.warn({ area: this.area, err }, 'download cut short upstream');
    }
  }
}

export { sendJson };
