// An uptime monitor's webhook → a wake: at once when a monitor goes down, at the next
// heartbeat when it is back. Map it with:
//   { match: { path: 'uptime' }, schema: 'transforms/uptime.schema.ts', transform: { module: 'uptime.ts' } }
import { defineTransform, type FromSchema } from 'hookd/transform';
import type schema from './uptime.schema.js';

/** `{ monitor: string; status: 'up' | 'down'; url?: string; responseMs?: number }`, from the schema. */
type Payload = FromSchema<typeof schema>;

export default defineTransform<Payload>(({ payload }) => {
  const where = payload.url ? ` (${payload.url})` : '';
  if (payload.status === 'down') return { kind: 'wake', text: `${payload.monitor} is down${where}`, mode: 'now' };
  const speed = payload.responseMs === undefined ? '' : `, answering in ${payload.responseMs} ms`;
  return { kind: 'wake', text: `${payload.monitor} is back up${where}${speed}`, mode: 'next-heartbeat' };
});
