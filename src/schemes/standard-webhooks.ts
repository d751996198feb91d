import type { IncomingHttpHeaders } from 'node:http';
import { fail, headerOf, held, hmac, MISMATCH, safeEqual, staleTimestamp, toleranceSchema } from './checks.js';
import type { ConfigOf, SignatureScheme } from './scheme.js';

const configSchema = { toleranceSeconds: toleranceSchema } as const;
const PARTS = ['id', 'timestamp', 'signature'] as const;
/** Svix-hosted senders put the same three values in svix-* headers. */
const PREFIXES = ['webhook', 'svix'] as const;

/**
 * What is wrong with a `whsec_` secret: its key is base64, and node's decoder skips what is not
 * (a quote or a space copied with it made another key, and every delivery a mismatch).
 */
function whsecProblem(secret: string): string | undefined {
  if (!secret.startsWith('whsec_')) return undefined;
  const key = secret.slice(6);
  const wrong = /[^A-Za-z0-9+/=]/.exec(key);
  if (wrong) return `a whsec_ secret is base64 after whsec_; position ${wrong.index + 7} is not a base64 character`;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(key) || key.replace(/=+$/, '').length % 4 === 1)
    return 'a whsec_ secret is base64 after whsec_ (its characters do not make whole bytes, or = is not at the end)';
  return undefined;
}

/** A `whsec_` secret is a base64 key; any other is its own bytes. */
const keyOf = (secret: string) =>
  secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret);

const signatureOf = (secret: string, id: string, t: string, raw: Buffer) =>
  hmac('sha256', keyOf(secret), `${id}.${t}.`).update(raw).digest('base64');

const prefixOf = (headers: IncomingHttpHeaders | Readonly<Record<string, string>>) =>
  headers['webhook-id'] === undefined && headers['svix-id'] !== undefined ? 'svix' : 'webhook';

/**
 * Standard Webhooks (and Svix): `webhook-signature` (several `v1,<base64>` allowed) over
 * `id.timestamp.body`, the timestamp within tolerance; deduped on `webhook-id`.
 */
export const standardWebhooks = {
  name: 'standard-webhooks',
  configSchema,
  headers: PREFIXES.flatMap((prefix) => PARTS.map((part) => `${prefix}-${part}`)),
  masks: { headers: ['webhook-signature', 'svix-signature'] },
  verify(config, headers, raw, nowSeconds) {
    const prefix = prefixOf(headers);
    const [id, timestamp, given] = PARTS.map((part) => headerOf(headers, `${prefix}-${part}`));
    if (!id || !timestamp || !given) {
      const missing = PARTS.filter((_, i) => ![id, timestamp, given][i]).map((part) => `${prefix}-${part}`);
      return fail(`missing ${missing.join(', ')}`);
    }
    const stale = staleTimestamp(timestamp, config.toleranceSeconds, nowSeconds);
    if (stale) return fail(stale);
    const expected = signatureOf(config.secret, id, timestamp, raw);
    const candidates = given
      .split(' ')
      .filter((s) => s.startsWith('v1,'))
      .map((s) => s.slice(3));
    if (candidates.length === 0) return fail('webhook-signature has no v1, signature');
    return candidates.some((s) => safeEqual(s, expected)) ? held(id) : fail(MISMATCH);
  },
  /** A recorded Svix delivery is signed the Svix way, under its own message id. */
  sign(config, raw, { nowSeconds, id, recorded = {} }) {
    const prefix = prefixOf(recorded);
    const given = recorded[`${prefix}-id`] ?? id;
    const messageId = given.startsWith('msg_') ? given : `msg_${given.replace(/-/g, '')}`;
    const t = String(nowSeconds);
    return {
      [`${prefix}-id`]: messageId,
      [`${prefix}-timestamp`]: t,
      [`${prefix}-signature`]: `v1,${signatureOf(config.secret, messageId, t, raw)}`,
    };
  },
  signatureHeaders: () => ['webhook-signature', 'svix-signature'],
  secretProblem: whsecProblem,
} as const satisfies SignatureScheme<ConfigOf<typeof configSchema>>;
