/**
 * Tokens the kit keeps to act on a caller's behalf (the upstream token a request was created with,
 * used by the poller and the callback re-read) are never stored in clear: they are sealed with
 * AES-256-GCM under a key derived (HKDF-SHA256) from the layer secret. A sealed value is
 * `v1.<iv>.<tag>.<ciphertext>` (base64url); a value sealed under another secret does not open.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

export class TokenCipher {
  private readonly key: Buffer;

  constructor(secret: string | Buffer, info = 'openapi-supergraph tracked-token v1') {
    const ikm = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
    if (ikm.length < 16) throw new Error('the token cipher secret must be at least 16 bytes');
    this.key = Buffer.from(hkdfSync('sha256', ikm, Buffer.alloc(0), info, 32));
  }

  seal(plain: string): string {
    if (plain === '') return '';
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return `v1.${iv.toString('base64url')}.${c.getAuthTag().toString('base64url')}.${body.toString('base64url')}`;
  }

  /** The plain token, or undefined when the value is empty, malformed or sealed under another key. */
  open(sealed: string): string | undefined {
    if (sealed === '') return undefined;
    const [v, iv, tag, body] = sealed.split('.');
    if (v !== 'v1' || !iv || !tag || body === undefined) return undefined;
    try {
      const d = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      d.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([d.update(Buffer.from(body, 'base64url')), d.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}
