import { describe, expect, it } from 'vitest';
import { signDelivery } from '../../../src/ingress/sign.js';
import { type VerifyConfig, verifySignature } from '../../../src/ingress/signatures.js';

const body = Buffer.from('{"id":"evt_123","type":"ping"}');
const NOW = 1_790_000_000;

describe('signDelivery, the inverse of verifySignature (hookd send)', () => {
  const schemes: VerifyConfig[] = [
    { scheme: 'github', secret: 'gh' },
    { scheme: 'stripe', secret: 'whsec_stripe' },
    { scheme: 'slack', secret: 'slack-secret' },
    { scheme: 'standard-webhooks', secret: `whsec_${Buffer.from('sw-key').toString('base64')}` },
    { scheme: 'standard-webhooks', secret: 'plain-secret' },
    { scheme: 'hmac', secret: 'h', header: 'X-Sig', algorithm: 'sha512', encoding: 'base64', prefix: 'sha512=' },
  ];

  it.each(schemes)('signs what the verifier accepts: %o', (config) => {
    const headers = signDelivery(config, body, NOW, 'fixed-id');
    expect(verifySignature(config, headers, body, NOW)).toMatchObject({ ok: true });
    // A whsec_ secret is base64: a letter appended may decode to the same key, so another key it is.
    const other = config.secret.startsWith('whsec_')
      ? `whsec_${Buffer.from('other').toString('base64')}`
      : `${config.secret}x`;
    expect(verifySignature({ ...config, secret: other }, headers, body, NOW)).toMatchObject({ ok: false });
    expect(verifySignature(config, headers, Buffer.from(`${body} `), NOW)).toMatchObject({ ok: false });
  });
});
