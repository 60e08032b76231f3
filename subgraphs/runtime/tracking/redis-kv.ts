/**
 * The replay guard and the file-grant store on Redis (keys under the connection's prefix):
 * - `replay:<scope>:<nonce>`: SET NX with an expiry at the scope's token expiry: accepted once,
 *   across every replica;
 * - `grant:<id>` (PX to the URL's expiry, the upstream token sealed by `FileGrants`) and
 *   `grantdoc:<document>` (the grant last issued for a document).
 */
import type { Redis } from 'ioredis';
import type { ReplayGuard } from '../../../platform/signing.ts';
import type { FileGrant, FileGrantStore } from './files.ts';

export class RedisReplayGuard implements ReplayGuard {
  constructor(
    private readonly redis: Redis,
    private readonly now: () => number = Date.now,
  ) {}

  async accept(scope: string, nonce: string, expiresAt: number): Promise<boolean> {
    const ttl = Math.max(1000, expiresAt * 1000 - this.now());
    return (await this.redis.set(`replay:${scope}:${nonce}`, '1', 'PX', ttl, 'NX')) === 'OK';
  }

  async seen(scope: string, nonce: string): Promise<boolean> {
    return (await this.redis.exists(`replay:${scope}:${nonce}`)) === 1;
  }
}

export class RedisFileGrantStore implements FileGrantStore {
  constructor(
    private readonly redis: Redis,
    private readonly now: () => number = Date.now,
  ) {}

  async put(grant: FileGrant, docKey: string): Promise<void> {
    const ttl = Math.max(1, grant.expiresAt * 1000 - this.now());
    await this.redis.multi().set(`grant:${grant.id}`, JSON.stringify(grant), 'PX', ttl).set(`grantdoc:${docKey}`, grant.id, 'PX', ttl).exec();
  }

  async get(id: string): Promise<FileGrant | undefined> {
    const raw = await this.redis.get(`grant:${id}`);
    return raw === null ? undefined : (JSON.parse(raw) as FileGrant);
  }

  async forDocument(docKey: string): Promise<FileGrant | undefined> {
    const id = await this.redis.get(`grantdoc:${docKey}`);
    return id === null ? undefined : this.get(id);
  }
}
