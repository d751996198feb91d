// The grafana preset's transform: one notification (a group of alerts) becomes one wake for
// the main session, with each alert's summary, value and the links Grafana gives.

import type { FromSchema } from 'hookd/transform';
import type schema from './schema.js';

/** One notification, typed from the schema hookd validates it against. */
type Notification = FromSchema<typeof schema>;

interface Request {
  payload: Notification;
  options?: { notifyResolved?: boolean };
}

const MAX_LINES = 10;

export default function grafana({ payload, options }: Request) {
  const status = payload?.status === 'resolved' ? 'resolved' : 'firing';
  if (status === 'resolved' && !options?.notifyResolved) return null;
  const alerts = (payload.alerts ?? []).filter((a) => (a.status ?? status) === status);
  const shared = new Set(Object.keys(payload.commonLabels ?? {}));
  const title =
    payload.title ?? `[${status.toUpperCase()}:${alerts.length}] ${payload.commonLabels?.alertname ?? 'alerts'}`;
  const lines = [`Grafana: ${title}`];
  for (const alert of alerts.slice(0, MAX_LINES)) {
    const own = Object.entries(alert.labels ?? {})
      .filter(([key]) => !shared.has(key))
      .map(([key, value]) => `${key}=${value}`)
      .join(', ');
    const name = own || alert.labels?.alertname || alert.fingerprint || 'an alert';
    const summary = alert.annotations?.summary ?? alert.annotations?.description;
    const link = alert.panelURL || alert.dashboardURL || alert.generatorURL;
    lines.push(
      `- ${name}${summary ? `: ${summary}` : ''}${alert.valueString ? ` ${alert.valueString}` : ''}${link ? ` ${link}` : ''}`,
    );
  }
  if (alerts.length > MAX_LINES) lines.push(`- … and ${alerts.length - MAX_LINES} more`);
  return { kind: 'wake', text: lines.join('\n'), mode: status === 'firing' ? 'now' : 'next-heartbeat' };
}
