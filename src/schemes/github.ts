import { fail, headerOf, held, hmac, MISMATCH, safeEqual } from './checks.js';
import type { SchemeConfig, SignatureScheme } from './scheme.js';

const SIGNATURE = 'x-hub-signature-256';
const DELIVERY = 'x-github-delivery';

const signatureOf = (secret: string, raw: Buffer) => `sha256=${hmac('sha256', secret, raw).digest('hex')}`;

/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`, deduped on
 * `X-GitHub-Delivery`. No timestamp: a captured delivery replays (docs/security.md#provider-signatures).
 */
export const github = {
  name: 'github',
  configSchema: {},
  headers: [SIGNATURE, DELIVERY, 'x-hub-signature'],
  // Every x-hub-signature* (the SHA-1 one GitHub still sends, any later one) is a proof of the secret.
  masks: { headers: ['x-hub-signature', SIGNATURE], prefixes: ['x-hub-signature'] },
  verify(config, headers, raw) {
    const given = headerOf(headers, SIGNATURE);
    if (!given) return fail('missing X-Hub-Signature-256');
    if (!safeEqual(given, signatureOf(config.secret, raw))) return fail(MISMATCH);
    return held(headerOf(headers, DELIVERY));
  },
  sign(config, raw, { id, recorded }) {
    return { [SIGNATURE]: signatureOf(config.secret, raw), [DELIVERY]: recorded?.[DELIVERY] ?? id };
  },
  signatureHeaders: () => [SIGNATURE],
} as const satisfies SignatureScheme<SchemeConfig>;
