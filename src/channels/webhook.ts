import type { FromSchema } from 'json-schema-to-ts';
import { HTTP_URL } from '../config/index.js';
import { standardWebhooks } from '../schemes/index.js';
import { isSuccess, postTry, refusal } from './http-try.js';
import { defineChannelKind, type KindEnv, type OutgoingMessage } from './kind.js';

const schema = {
  type: 'object',
  properties: {
    url: HTTP_URL,
    secret: {
      type: 'string',
      pattern: '^whsec_[A-Za-z0-9+/]{16,}={0,2}$',
      writeOnly: true,
      description: 'a Standard Webhooks secret: whsec_ and at least 12 bytes in base64',
    },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
  },
  required: ['url', 'secret'],
} as const;
type Entry = FromSchema<typeof schema>;

/** Headers hookd sets itself: a configured one of these names would change what is signed or sent. */
const OWN_HEADERS = new Set(['content-type', 'content-length', 'host', ...standardWebhooks.headers]);

/** The JSON a receiver gets (docs/channels.md#webhook). */
export function payloadOf(channel: string, message: OutgoingMessage): string {
  const { runId, sessionKey, alert } = message.context;
  return JSON.stringify({
    type: 'message',
    channel,
    to: message.to === '' ? null : message.to,
    text: message.text,
    ...(runId === undefined ? {} : { runId }),
    ...(sessionKey === undefined ? {} : { sessionKey }),
    ...(alert === undefined ? {} : { alert }),
  });
}

/** The Standard Webhooks headers of `body` (standardwebhooks.com), signed by that scheme's own module. */
export function signedHeaders(secret: string, id: string, body: string, env: Pick<KindEnv, 'now'>) {
  const nowSeconds = Math.floor(env.now() / 1000);
  return standardWebhooks.sign({ scheme: standardWebhooks.name, secret }, Buffer.from(body), { nowSeconds, id });
}

/**
 * What of a URL's query is masked as a secret: it may carry a receiver's token (`?token=…`),
 * which a receiver quoting its URL back, or only the pair or the value, would show. The whole
 * query, each `name=value` and each value, as written and decoded; none of fewer than 4
 * characters (`?v=1`), which is no token, and masking it would blot out every `1` of an error.
 */
function queryOf(url: string): string[] {
  if (!URL.canParse(url)) return [];
  const { search, searchParams } = new URL(url);
  const pairs = search.slice(1).split('&');
  const values = [...searchParams.values(), ...pairs.map((pair) => pair.slice(pair.indexOf('=') + 1))];
  return [search.slice(1), ...pairs, ...values].filter((part) => part.length >= 4);
}

/**
 * `webhook` (docs/channels.md#webhook): the reply, whole, as JSON `POST`ed to `url`, signed with
 * the Standard Webhooks headers from a `whsec_` secret; the message id stays the same across the
 * retries of one delivery, so a receiver can drop what it has already taken.
 */
export const webhook = defineChannelKind<Entry>({
  keys: schema,
  problems: (entry) =>
    Object.keys(entry.headers ?? {})
      .filter((name) => OWN_HEADERS.has(name.toLowerCase()))
      .map((name) => `headers.${name}: hookd sets this header itself`),
  needsRecipient: () => false,
  secrets: (entry) => [entry.secret, ...Object.values(entry.headers ?? {}), ...queryOf(entry.url)],
  create: (entry, env) => ({
    split: (text) => [text],
    async send(message, signal) {
      const body = payloadOf(env.id, message);
      const id = `msg_${message.id}`;
      const headers = {
        ...entry.headers,
        'content-type': 'application/json',
        ...signedHeaders(entry.secret, id, body, env),
      };
      const answer = await postTry(env, entry.url, { headers, body }, signal);
      if (!isSuccess(answer)) throw refusal(env, answer, answer.raw.trim());
    },
  }),
});
