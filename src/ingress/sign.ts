import { createHmac, randomUUID } from 'node:crypto';
import type { VerifyConfig } from './signatures.js';

/**
 * The headers a sender would put on `raw` for a mapping's `verify` scheme, computed the way the
 * provider's own library does (`hookd send`; the inverse of `verifySignature`). `nowSeconds`
 * and `id` are the delivery's timestamp and id where the scheme carries them.
 */
export function signDelivery(
  config: VerifyConfig,
  raw: Buffer,
  nowSeconds = Math.floor(Date.now() / 1000),
  id: string = randomUUID(),
): Record<string, string> {
  const mac = (key: string | Buffer, prefix = '') => createHmac('sha256', key).update(prefix).update(raw);
  const t = String(nowSeconds);
  switch (config.scheme) {
    case 'github':
      return { 'x-hub-signature-256': `sha256=${mac(config.secret).digest('hex')}`, 'x-github-delivery': id };
    case 'gitlab':
      return { 'x-gitlab-token': config.secret, 'x-gitlab-event-uuid': id };
    case 'stripe':
      return { 'stripe-signature': `t=${t},v1=${mac(config.secret, `${t}.`).digest('hex')}` };
    case 'slack':
      return {
        'x-slack-request-timestamp': t,
        'x-slack-signature': `v0=${mac(config.secret, `v0:${t}:`).digest('hex')}`,
      };
    case 'standard-webhooks': {
      const key = config.secret.startsWith('whsec_')
        ? Buffer.from(config.secret.slice(6), 'base64')
        : Buffer.from(config.secret);
      const messageId = id.startsWith('msg_') ? id : `msg_${id.replace(/-/g, '')}`;
      return {
        'webhook-id': messageId,
        'webhook-timestamp': t,
        'webhook-signature': `v1,${mac(key, `${messageId}.${t}.`).digest('base64')}`,
      };
    }
    case 'hmac': {
      const digest = createHmac(config.algorithm ?? 'sha256', config.secret)
        .update(raw)
        .digest(config.encoding ?? 'hex');
      return { [(config.header ?? 'x-signature').toLowerCase()]: `${config.prefix ?? ''}${digest}` };
    }
  }
}
