import { describe, expect, it } from 'vitest';
import { createCredentialFingerprints } from '../../../src/ingress/receipt.js';
import type { CompiledMapping } from '../../../src/mapping/index.js';

const GATEWAY = 'gateway-token-0123456789';
const HOOK = 'hook-token-0123456789';
const mapping = (id: string, verify?: object) => ({ id, ...(verify ? { verify } : {}) }) as unknown as CompiledMapping;

describe("a receipt's credential fingerprints (docs/runtime.md#request-log-and-replay)", () => {
  it('tells a changed hook token, verify secret or gateway token apart, and never holds the credential', () => {
    const now = createCredentialFingerprints(GATEWAY, HOOK);
    const gh = mapping('gh', { scheme: 'github', secret: 'gh-secret-value' });
    expect(now.token).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(now.token).not.toBe(createCredentialFingerprints(GATEWAY, 'another-hook-token-0123').token);
    expect(now.token).not.toBe(createCredentialFingerprints('another-gateway-token-0123', HOOK).token);
    expect(now.of(gh)).not.toBe(now.of(mapping('gh', { scheme: 'github', secret: 'a-new-secret' })));
    expect(now.of(gh)).not.toBe(now.of(mapping('other', { scheme: 'github', secret: 'gh-secret-value' })));
    expect(now.of(gh)).not.toBe(now.of(mapping('gh', { scheme: 'gitlab', secret: 'gh-secret-value' })));
    expect(`${now.token}${now.of(gh)}`).not.toMatch(/secret|token/);
  });

  it('is the same for the same settings written in another order, on every node with the same gateway token', () => {
    const a = createCredentialFingerprints(GATEWAY, HOOK);
    const b = createCredentialFingerprints(GATEWAY, HOOK);
    const verify = { scheme: 'hmac', secret: 's', header: 'x-sig', algorithm: 'sha256' };
    const reordered = { algorithm: 'sha256', header: 'x-sig', secret: 's', scheme: 'hmac' };
    expect(a.token).toBe(b.token);
    expect(a.of(mapping('m', verify))).toBe(b.of(mapping('m', reordered)));
  });

  it('is empty without a gateway token (no admin API: nothing can be replayed) and for a mapping without verify', () => {
    expect(createCredentialFingerprints(undefined, HOOK).token).toBe('');
    expect(createCredentialFingerprints(GATEWAY, HOOK).of(mapping('plain'))).toBe('');
  });
});
