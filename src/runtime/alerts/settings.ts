import { ALERT_CONDITIONS, type AlertCondition } from '../../alert-views.js';
import { type Config, parseDurationMs } from '../../config/index.js';
import type { AlertSettings } from './types.js';

/** `hooks.alerts` parsed (docs/operations.md#alerts); undefined while alerts are off. */
export function alertSettingsOf(config: Pick<Config, 'hooks' | 'channels'>): AlertSettings | undefined {
  const alerts = config.hooks.alerts;
  const channel = alerts.channel;
  if (alerts.enabled !== true || channel === undefined) return undefined;
  const to = alerts.to ?? config.channels[channel]?.defaultTo ?? '';
  const conditions = new Map<AlertCondition, { count: number; windowMs: number }>();
  for (const condition of ALERT_CONDITIONS) {
    const set = alerts[condition];
    if (set.enabled)
      conditions.set(condition, { count: 'count' in set ? set.count : 1, windowMs: parseDurationMs(set.window) });
  }
  return { channel, to, everyMs: parseDurationMs(alerts.every), conditions };
}
