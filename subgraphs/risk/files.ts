/**
 * Signed downloads: a document field returns a short-lived URL under the gateway's `/files/risk/`,
 * never the document itself. The URL carries an opaque grant id, its expiry and an HMAC; the grant
 * (kept server side) says which upstream document to fetch and with which token. The gateway
 * forwards `/files/risk/<token>` here and the document is streamed from upstream as it arrives.
 * Without a valid, unexpired signature nothing is fetched.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { UpstreamAuth } from '../runtime/context.ts';
import { randomId, type Signer } from '../runtime/signing.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import { CostMeter } from '../upstream/cost.ts';
import type { Endpoint } from '../upstream/endpoint.ts';
import { UpstreamError } from '../upstream/errors.ts';

export const FILE_PURPOSE = 'risk-file';

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

export interface FileGrantsOptions {
  signer: Signer;
  /** Lifetime of a URL in seconds. @default 300 */
  ttlSeconds?: number;
  /** Grants kept at most (the soonest-expiring go first). @default 20000 */
  maxGrants?: number;
  now?: () => number;
}

export class FileGrants {
  private readonly grants = new Map<string, FileGrant>();
  /** Reuse of a grant for the same document and tenant while more than half its life is left. */
  private readonly byDocument = new Map<string, string>();
  private readonly signer: Signer;
  readonly ttlSeconds: number;
  private readonly maxGrants: number;
  private readonly now: () => number;

  constructor(opts: FileGrantsOptions) {
    this.signer = opts.signer;
    this.ttlSeconds = opts.ttlSeconds ?? 300;
    this.maxGrants = opts.maxGrants ?? 20_000;
    this.now = opts.now ?? Date.now;
  }

  /** A signed URL under `<publicUrl>/files/risk/` for one upstream document. */
  issue(publicUrl: string, auth: UpstreamAuth, endpoint: Endpoint, params: Record<string, string>, fileName: string, contentType = 'application/pdf'): SignedFileValue {
    const nowS = Math.floor(this.now() / 1000);
    const docKey = `${auth.tenant}|${endpoint.path}|${JSON.stringify(params)}`;
    let grant = this.grants.get(this.byDocument.get(docKey) ?? '');
    if (!grant || grant.auth.token !== auth.token || grant.expiresAt - nowS < this.ttlSeconds / 2) {
      this.sweep(nowS);
      grant = { id: randomId(18), auth, endpoint, params, fileName, contentType, expiresAt: nowS + this.ttlSeconds };
      this.grants.set(grant.id, grant);
      this.byDocument.set(docKey, grant.id);
    }
    const token = this.signer.sign(FILE_PURPOSE, grant.id, grant.expiresAt - nowS);
    const expiresAt = Number(token.split('.')[1]);
    return {
      url: `${publicUrl.replace(/\/+$/, '')}/files/risk/${token}/${encodeURIComponent(grant.fileName)}`,
      expiresAt: new Date(expiresAt * 1000).toISOString(),
      fileName: grant.fileName,
      contentType: grant.contentType,
    };
  }

  /** The grant a token names, when the token is genuine and unexpired. */
  resolve(token: string): FileGrant | null {
    const v = this.signer.verify(FILE_PURPOSE, token);
    if (!v.ok) return null;
    const grant = this.grants.get(v.payload);
    if (!grant || grant.expiresAt * 1000 <= this.now()) return null;
    return grant;
  }

  /** Serves `/files/<token>[/<name>]`; refuses anything not signed, expired or unknown with 403. */
  async serve(req: IncomingMessage, res: ServerResponse, rest: string, upstream: UpstreamClient | null): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendJson(res, 405, { error: 'method not allowed' }, { allow: 'GET, HEAD' });
      return;
    }
    const token = decodeSegment(rest.split('/')[0] ?? '');
    const grant = token === null ? null : this.resolve(token);
    if (!grant) {
      sendJson(res, 403, { error: 'forbidden: missing, invalid or expired signature' });
      return;
    }
    if (!upstream) {
      sendJson(res, 503, { error: 'not ready' });
      return;
    }
    let doc;
    try {
      doc = await upstream.download({ auth: grant.auth, meter: new CostMeter() }, grant.endpoint, { params: grant.params });
    } catch (err) {
      if (err instanceof UpstreamError) {
        const status = err.status === 404 || err.status === 400 ? 404 : err.status === 406 || err.status === 422 ? 409 : err.kind === 'timeout' ? 504 : 502;
        sendJson(res, status, { error: status === 409 ? 'the document is not ready yet' : status === 404 ? 'not found' : 'upstream unavailable', upstream: { status: err.status, error: err.upstreamCode, message: err.message } });
        return;
      }
      throw err;
    }
    const headers: Record<string, string> = {
      'content-type': doc.contentType || grant.contentType,
      'content-disposition': `attachment; filename="${grant.fileName.replace(/["\\\r\n]/g, '_')}"`,
      'cache-control': 'private, no-store',
      'x-content-type-options': 'nosniff',
    };
    if (doc.length !== null) headers['content-length'] = String(doc.length);
    res.writeHead(200, headers);
    if (req.method === 'HEAD') {
      doc.body.destroy();
      res.end();
      return;
    }
    await pipeline(doc.body, res);
  }

  private sweep(nowS: number): void {
    if (this.grants.size < this.maxGrants) {
      // Cheap: drop expired ones only now and then.
      if (this.grants.size % 256 !== 0) return;
    }
    for (const [id, g] of this.grants) if (g.expiresAt <= nowS) this.grants.delete(id);
    for (const [k, id] of this.byDocument) if (!this.grants.has(id)) this.byDocument.delete(k);
    while (this.grants.size >= this.maxGrants) {
      const oldest = this.grants.keys().next().value;
      if (oldest === undefined) break;
      this.grants.delete(oldest);
    }
  }
}

/** A decoded path segment, or null for a malformed percent-escape (refused like a bad signature). */
function decodeSegment(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers }).end(JSON.stringify(body));
}
