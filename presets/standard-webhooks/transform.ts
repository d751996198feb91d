// The standard-webhooks preset's transform: the recommended payload shape is
// `{ type, timestamp, data }`; the message names the type and shows the data.

import type { FromSchema } from 'hookd/transform';
import type schema from './schema.js';

/** The payload, typed from the schema hookd validates it against. */
type Payload = FromSchema<typeof schema>;

interface Request {
  payload: Payload;
  headers: Record<string, string>;
  options?: { source?: string };
}

/** The data as indented JSON, cut at `max` characters. */
function shown(data: unknown, max: number): string {
  const text = JSON.stringify(data ?? {}, null, 2);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export default function standardWebhooks({ payload, headers, options }: Request) {
  const type = typeof payload?.type === 'string' ? payload.type : 'an event';
  const data = payload?.data;
  const objectId = data && typeof data.id === 'string' ? data.id : undefined;
  const messageId = headers['webhook-id'] ?? headers['svix-id'] ?? 'unknown';
  const about = objectId ? ` about ${objectId}` : '';
  const source = options?.source ?? 'a webhook sender';
  return {
    message: `${source.charAt(0).toUpperCase()}${source.slice(1)} sent ${type}${about} (message ${messageId}):\n${shown(data, 4000)}`,
    sessionKey: `hook:webhooks:${objectId ?? messageId}`,
  };
}
