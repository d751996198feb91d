import { fail, headerOf, held, hmac, MISMATCH, safeEqual, staleTimestamp, toleranceSchema } from './checks.js';
import type { ConfigOf, SignatureScheme } from './scheme.js';

const SIGNATURE = 'x-slack-signature';
const TIMESTAMP = 'x-slack-request-timestamp';
const configSchema = { toleranceSeconds: toleranceSchema } as const;

const signatureOf = (secret: string, t: string, raw: Buffer) =>
  `v0=${hmac('sha256', secret, `v0:${t}:`).update(raw).digest('hex')}`;

/**
 * Slack: `X-Slack-Signature: v0=<hex HMAC-SHA256 of v0:timestamp:body>`, the
 * `X-Slack-Request-Timestamp` within tolerance; answers `url_verification` with its challenge.
 */
export const slack = {
  name: 'slack',
  configSchema,
  headers: [SIGNATURE, TIMESTAMP],
  masks: { headers: [SIGNATURE] },
  verify(config, headers, raw, nowSeconds) {
    const given = headerOf(headers, SIGNATURE);
    const timestamp = headerOf(headers, TIMESTAMP);
    if (!given) return fail('missing X-Slack-Signature');
    if (!timestamp) return fail('missing X-Slack-Request-Timestamp');
    const stale = staleTimestamp(timestamp, config.toleranceSeconds, nowSeconds);
    if (stale) return fail(stale);
    if (!safeEqual(given, signatureOf(config.secret, timestamp, raw))) return fail(MISMATCH);
    // Slack retries an event it thinks was lost (X-Slack-Retry-Num): its event_id dedupes them.
    return held(/"event_id"\s*:\s*"([^"]+)"/.exec(raw.toString('utf8'))?.[1]);
  },
  sign(config, raw, { nowSeconds }) {
    const t = String(nowSeconds);
    return { [TIMESTAMP]: t, [SIGNATURE]: signatureOf(config.secret, t, raw) };
  },
  signatureHeaders: () => [SIGNATURE],
  /** Slack's `url_verification`: answered with its challenge once the signature holds. */
  handshake(payload) {
    const p = payload as { type?: unknown; challenge?: unknown } | null;
    if (p?.type !== 'url_verification' || typeof p.challenge !== 'string') return undefined;
    return { eventType: 'url_verification', body: { challenge: p.challenge } };
  },
} as const satisfies SignatureScheme<ConfigOf<typeof configSchema>>;
