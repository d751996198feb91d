import { fail, headerOf, held, safeEqual } from './checks.js';
import type { SchemeConfig, SignatureScheme } from './scheme.js';

const TOKEN = 'x-gitlab-token';
const EVENT_UUID = 'x-gitlab-event-uuid';

/**
 * GitLab sends the secret token itself (`X-Gitlab-Token`), compared in constant time; it signs
 * nothing, so the body is not covered. Deduped on `X-Gitlab-Event-UUID`.
 */
export const gitlab = {
  name: 'gitlab',
  configSchema: {},
  headers: [TOKEN, EVENT_UUID],
  masks: { headers: [TOKEN], secrets: [TOKEN] },
  verify(config, headers) {
    const given = headerOf(headers, TOKEN);
    if (!given) return fail('missing X-Gitlab-Token');
    if (!safeEqual(given, config.secret))
      return fail('X-Gitlab-Token does not match (is the secret token the same on both sides?)');
    return held(headerOf(headers, EVENT_UUID));
  },
  sign: (config, _raw, { id }) => ({ [TOKEN]: config.secret, [EVENT_UUID]: id }),
  signatureHeaders: () => [TOKEN],
} as const satisfies SignatureScheme<SchemeConfig>;
