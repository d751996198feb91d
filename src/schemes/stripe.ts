import { fail, headerOf, held, hmac, MISMATCH, safeEqual, staleTimestamp, toleranceSchema } from './checks.js';
import type { ConfigOf, SignatureScheme } from './scheme.js';

const SIGNATURE = 'stripe-signature';
const configSchema = { toleranceSeconds: toleranceSchema } as const;

const signatureOf = (secret: string, t: string, raw: Buffer) =>
  hmac('sha256', secret, `${t}.`).update(raw).digest('hex');

/**
 * Stripe: `Stripe-Signature: t=…,v1=…` (any `v1`), HMAC-SHA256 of `t.body`, the timestamp within
 * tolerance; deduped on the event's `evt_…` id.
 */
export const stripe = {
  name: 'stripe',
  configSchema,
  headers: [SIGNATURE],
  masks: { headers: [SIGNATURE] },
  verify(config, headers, raw, nowSeconds) {
    const given = headerOf(headers, SIGNATURE);
    if (!given) return fail('missing Stripe-Signature');
    const parts = given.split(',').map((p) => p.trim().split('=') as [string, string?]);
    const timestamp = parts.find(([k]) => k === 't')?.[1];
    const signatures = parts.filter(([k]) => k === 'v1').map(([, v]) => v ?? '');
    if (!timestamp || signatures.length === 0) return fail('Stripe-Signature has no t= or no v1= part');
    const stale = staleTimestamp(timestamp, config.toleranceSeconds, nowSeconds);
    if (stale) return fail(stale);
    const expected = signatureOf(config.secret, timestamp, raw);
    if (!signatures.some((s) => safeEqual(s, expected))) return fail(MISMATCH);
    return held(/"id"\s*:\s*"(evt_[^"]+)"/.exec(raw.toString('utf8'))?.[1]);
  },
  sign(config, raw, { nowSeconds }) {
    const t = String(nowSeconds);
    return { [SIGNATURE]: `t=${t},v1=${signatureOf(config.secret, t, raw)}` };
  },
  signatureHeaders: () => [SIGNATURE],
} as const satisfies SignatureScheme<ConfigOf<typeof configSchema>>;
