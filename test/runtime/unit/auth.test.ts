import { describe, expect, it } from 'vitest';
import { resolveAuth } from '../../../subgraphs/runtime/server.ts';
import { tenantOf } from '../../../subgraphs/upstream/tenant.ts';

describe('which token pays upstream', () => {
  it("passes the caller's bearer token through when no service token is configured", () => {
    expect(resolveAuth('Bearer caller-1', { serviceToken: null })).toEqual({ token: 'caller-1', tenant: tenantOf('caller-1'), shared: false });
    expect(resolveAuth('bearer   caller-2 ', { serviceToken: null, fallbackToken: 'emu' }).token).toBe('caller-2');
  });

  it('always uses the service token when one is configured', () => {
    expect(resolveAuth('Bearer caller-1', { serviceToken: 'service' }).token).toBe('service');
    expect(resolveAuth(null, { serviceToken: 'service' }).token).toBe('service');
    // The layer's own token is shared by every caller (its tenant's spending is the operator's).
    expect(resolveAuth('Bearer caller-1', { serviceToken: 'service' }).shared).toBe(true);
  });

  it('falls back to the emulator account, or to no token at all, only when no credential is sent', () => {
    expect(resolveAuth(undefined, { serviceToken: null, fallbackToken: 'emu' }).token).toBe('emu');
    expect(resolveAuth(undefined, { serviceToken: null, fallbackToken: 'emu' }).shared).toBe(true);
    expect(resolveAuth(null, { serviceToken: null })).toEqual({ token: '', tenant: 'anonymous', shared: true });
  });

  it('refuses a malformed credential instead of falling back', () => {
    for (const authorization of ['Basic abc', 'Token abc', 'abc', 'Bearer', 'Bearer ', '']) {
      expect(() => resolveAuth(authorization, { serviceToken: null, fallbackToken: 'emu' })).toThrow(
        expect.objectContaining({ extensions: expect.objectContaining({ code: 'UNAUTHENTICATED' }) }),
      );
    }
    expect(resolveAuth('Basic abc', { serviceToken: 'service' }).token).toBe('service');
  });

  it('gives different tokens different, non-reversible tenants', () => {
    expect(tenantOf('a')).not.toBe(tenantOf('b'));
    expect(tenantOf('secret-token')).not.toContain('secret');
  });
});
