// The slack preset's transform: an app mention or a person's message becomes an agent action
// in the session of its thread; everything else (bots, edits, joins, the URL check) is null.

import type { FromSchema } from 'hookd/transform';
import type schema from './schema.js';

interface Request {
  /** The request, typed from the schema hookd validates it against. */
  payload: FromSchema<typeof schema>;
}

const TEXT_MAX = 4000;

export default function slack({ payload }: Request) {
  if (payload?.type !== 'event_callback') return null;
  const event = payload.event ?? {};
  if (event.type !== 'app_mention' && event.type !== 'message') return null;
  // Bots (this app included) and message changes, deletions and joins are not a person talking.
  if (event.bot_id || event.subtype) return null;
  const where = event.channel_type === 'im' ? 'a direct message' : `<#${event.channel}>`;
  const how = event.type === 'app_mention' ? 'mentioned the app in' : 'wrote in';
  const thread = event.thread_ts && event.thread_ts !== event.ts ? ' (in a thread)' : '';
  const text =
    (event.text ?? '').length > TEXT_MAX ? `${(event.text ?? '').slice(0, TEXT_MAX - 1)}…` : (event.text ?? '');
  return {
    message: `Slack: <@${event.user}> ${how} ${where}${thread}:\n${text}`,
    sessionKey: `hook:slack:${event.channel}:${event.thread_ts ?? event.ts}`,
  };
}
