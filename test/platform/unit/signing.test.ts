import { describe, expect, it } from 'vitest';
import { layerSecret, MemoryReplayGuard, randomId, Signer } from '../../../platform/signing.ts';

const SECRET = 'a-test-secret-of-enough-length';

describe('Signer', () => {
  it('signs and verifies a payload with its expiry', () => {
    let now = 1_700_000_000_000;
    const s = new Signer(SECRET, { now: () => now });
    const token = s.sign('files', 'grant123', 60);
    expect(token).toMatch(/^grant123\.1700000060\.[A-Za-z0-9_-]{43}$/);
    expect(s.verify('files', token)).toEqual({ ok: true, payload: 'grant123', expiresAt: 1_700_000_060 });
    now += 59_000;
    expect(s.verify('files', token).ok).toBe(true);
  });

  it('refuses an expired token', () => {
    let now = 1_700_000_000_000;
    const s = new Signer(SECRET, { now: () => now });
    const token = s.sign('files', 'g', 10);
    now += 10_000;
    expect(s.verify('files', token)).toEqual({ ok: false, reason: 'expired' });
  });

  it('refuses a token whose payload, expiry or MAC was changed', () => {
    const s = new Signer(SECRET);
    const token = s.sign('cb', 'key1', 3600);
    const [payload, expiry, mac] = token.split('.') as [string, string, string];
    expect(s.verify('cb', `key2.${expiry}.${mac}`)).toEqual({ ok: false, reason: 'bad-signature' });
    expect(s.verify('cb', `${payload}.${Number(expiry) + 1000}.${mac}`)).toEqual({ ok: false, reason: 'bad-signature' });
    const flipped = (mac[0] === 'A' ? 'B' : 'A') + mac.slice(1);
    expect(s.verify('cb', `${payload}.${expiry}.${flipped}`)).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('keeps purposes apart and rejects other secrets', () => {
    const s = new Signer(SECRET);
    const token = s.sign('risk-file', 'abc', 60);
    expect(s.verify('risk-callback', token).ok).toBe(false);
    expect(new Signer('another-secret-of-length').verify('risk-file', token).ok).toBe(false);
  });

  it('refuses malformed tokens without throwing', () => {
    const s = new Signer(SECRET);
    for (const t of ['', 'abc', 'a.b.c', 'a.123', 'a.123.short', 'a b.123.' + 'x'.repeat(43), `a.123.${'x'.repeat(44)}`]) {
      expect(s.verify('p', t)).toEqual({ ok: false, reason: 'malformed' });
    }
  });

  it('refuses bad inputs to sign and short secrets', () => {
    const s = new Signer(SECRET);
    expect(() => s.sign('p', 'has.dot', 10)).toThrow();
    expect(() => s.sign('p', '', 10)).toThrow();
    expect(() => s.sign('p', 'ok', 0)).toThrow();
    expect(() => new Signer('short')).toThrow();
  });

  it('makes random base64url ids', () => {
    const a = randomId();
    expect(a).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(randomId()).not.toBe(a);
  });
});

describe('layerSecret', () => {
  it('uses LAYER_SECRET when set and refuses a short one', () => {
    expect(layerSecret({ LAYER_SECRET: SECRET }).toString('utf8')).toBe(SECRET);
    expect(() => layerSecret({ LAYER_SECRET: 'short' })).toThrow(/at least 16/);
  });

  it('is random but stable within the process otherwise', () => {
    const a = layerSecret({});
    expect(a.length).toBe(32);
    expect(layerSecret({}).equals(a)).toBe(true);
  });

  it('lets two signers over the same secret verify each other', () => {
    const a = new Signer(layerSecret({ LAYER_SECRET: SECRET }));
    const b = new Signer(layerSecret({ LAYER_SECRET: SECRET }));
    expect(b.verify('p', a.sign('p', 'x', 5)).ok).toBe(true);
  });
});

describe('MemoryReplayGuard', () => {
  it('accepts a nonce once per scope', async () => {
    const g = new MemoryReplayGuard();
    const exp = Math.floor(Date.now() / 1000) + 60;
    expect(await g.accept('key1', 'id|processing|1', exp)).toBe(true);
    expect(await g.accept('key1', 'id|processing|1', exp)).toBe(false);
    expect(await g.accept('key1', 'id|complete|2', exp)).toBe(true);
    expect(await g.accept('key2', 'id|processing|1', exp)).toBe(true);
  });

  it('stays bounded: expired scopes go first, then the least recently used', async () => {
    let now = 1_000_000_000;
    const g = new MemoryReplayGuard({ maxScopes: 2, now: () => now });
    await g.accept('old', 'n', 1_000_000 + 10);
    await g.accept('live', 'n', 1_000_000 + 1000);
    now += 20_000;
    await g.accept('new', 'n', 1_000_000 + 2000);
    expect(g.size).toBe(2);
    // `old` was forgotten (its token no longer verifies anyway); `live` still refuses a replay.
    expect(await g.accept('live', 'n', 1_000_000 + 1000)).toBe(false);
  });

  it('keeps a bounded number of nonces per scope', async () => {
    const g = new MemoryReplayGuard({ maxNoncesPerScope: 2 });
    const exp = Math.floor(Date.now() / 1000) + 60;
    expect(await g.accept('k', 'a', exp)).toBe(true);
    expect(await g.accept('k', 'b', exp)).toBe(true);
    expect(await g.accept('k', 'c', exp)).toBe(true);
    expect(await g.accept('k', 'c', exp)).toBe(false);
    expect(await g.accept('k', 'b', exp)).toBe(false);
  });
});
