import { describe, expect, it } from 'vitest';
import {
  CREDENTIAL_HEADERS,
  credentialTest,
  flattenHeaders,
  isCredentialHeader,
  maskHeaders,
} from '../../src/headers.js';

describe('flattenHeaders', () => {
  it('joins repeated headers, lower-cases names and drops undefined values', () => {
    expect(flattenHeaders({ 'X-A': 'one', 'x-b': ['two', 'three'], 'x-c': undefined })).toEqual({
      'x-a': 'one',
      'x-b': 'two, three',
    });
  });

  it('leaves out the credential headers whatever their case', () => {
    const flat = flattenHeaders(
      { Authorization: 'Bearer secret', 'x-service-token': 't', cookie: 'c', 'content-type': 'application/json' },
      CREDENTIAL_HEADERS,
    );
    expect(flat).toEqual({ 'content-type': 'application/json' });
  });
});

describe('credential headers (docs/security.md#what-is-masked)', () => {
  it('are the tokens, the cookie, every signature header and a mapping’s own HMAC header', () => {
    for (const name of [
      'authorization',
      'proxy-authorization',
      'x-gitlab-token',
      'svix-signature',
      'x-hub-signature-512',
    ])
      expect(isCredentialHeader(name)).toBe(true);
    expect(isCredentialHeader('x-github-event')).toBe(false);
    expect(isCredentialHeader('x-own-signature')).toBe(false);
    expect(credentialTest(['X-Own-Signature'])('x-own-signature')).toBe(true);
  });

  it('are kept by name, [masked], each marked verified when its check passed', () => {
    const masked = maskHeaders(
      { Authorization: 'Bearer t', 'X-Gitlab-Token': 'g', 'x-event': ['a', 'b'] },
      isCredentialHeader,
      (name) => name === 'x-gitlab-token',
    );
    expect(masked).toEqual({
      headers: { authorization: '[masked]', 'x-gitlab-token': '[masked]', 'x-event': 'a, b' },
      credentials: { authorization: { verified: false }, 'x-gitlab-token': { verified: true } },
    });
    expect(maskHeaders({ 'x-event': 'a' }, isCredentialHeader).credentials).toEqual({});
  });
});
