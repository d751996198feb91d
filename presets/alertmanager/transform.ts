// The alertmanager preset's transform: a group of alerts becomes one wake for the main
// session: what fires, where, and why, in a few lines.

import type { FromSchema } from 'hookd/transform';
import type schema from './schema.js';

/** One notification, typed from the schema hookd validates it against. */
type Group = FromSchema<typeof schema>;

interface Request {
  payload: Group;
  options?: { notifyResolved?: boolean };
}

const MAX_LINES = 10;

function labelList(labels: Record<string, string> | undefined, skip: readonly string[]): string {
  return Object.entries(labels ?? {})
    .filter(([key]) => !skip.includes(key))
    .map(([key, value]) => `${key}=${value}`)
    .join(', ');
}

export default function alertmanager({ payload, options }: Request) {
  const status = payload?.status === 'resolved' ? 'resolved' : 'firing';
  if (status === 'resolved' && !options?.notifyResolved) return null;
  const alerts = payload.alerts ?? [];
  const mine = alerts.filter((a) => (a.status ?? status) === status);
  const name = payload.commonLabels?.alertname ?? payload.groupLabels?.alertname ?? 'alerts';
  const where = labelList(payload.groupLabels, ['alertname']);
  const count = mine.length + (status === 'firing' ? (payload.truncatedAlerts ?? 0) : 0);
  const lines = [`Alertmanager: [${status.toUpperCase()}:${count}] ${name}${where ? ` (${where})` : ''}`];
  const common = payload.commonAnnotations?.summary ?? payload.commonAnnotations?.description;
  if (common) lines.push(common);
  const shared = Object.keys(payload.commonLabels ?? {});
  for (const alert of mine.slice(0, MAX_LINES)) {
    const own = labelList(alert.labels, shared) || alert.fingerprint || 'an alert';
    const why = common ? '' : (alert.annotations?.summary ?? alert.annotations?.description ?? '');
    lines.push(
      `- ${own}${why ? `: ${why}` : ''}${status === 'firing' && alert.startsAt ? ` (since ${alert.startsAt})` : ''}`,
    );
  }
  if (mine.length > MAX_LINES) lines.push(`- … and ${mine.length - MAX_LINES} more`);
  const other = alerts.length - mine.length;
  if (status === 'firing' && other > 0) lines.push(`(${other} of the group resolved)`);
  if (payload.externalURL) lines.push(payload.externalURL);
  return { kind: 'wake', text: lines.join('\n'), mode: status === 'firing' ? 'now' : 'next-heartbeat' };
}
