import { ALERT_CONDITIONS, type AlertCondition } from '../../alert-views.js';
import { type Config, parseDurationMs } from '../../config/index.js';
import type { AlertSettings } from './types.js';

/** `hooks.alerts` parsed (docs/operations.md#alerts); undefined while alerts are off. */
export function alertSettingsOf(config: Pick<Config, 'hooks' | 'channels' | 'agents'>): AlertSettings | undefined {
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
  const named = namedModels(config);
  const modelSource = (ref: string) => (named.has(ref) ? ref : `${ref.slice(0, ref.indexOf('/'))}/*`);
  return { channel, to, everyMs: parseDurationMs(alerts.every), conditions, modelSource };
}

/**
 * The models the config names: the default, the allowed ones (with an allowlist a request can
 * name no other), the mappings' and the mail preset's.
 */
function namedModels(config: Pick<Config, 'hooks' | 'agents'>): ReadonlySet<string> {
  const { defaults } = config.agents;
  const allowed = Array.isArray(defaults.models) ? defaults.models : Object.keys(defaults.models ?? {});
  return new Set([
    defaults.model,
    ...allowed,
    ...config.hooks.mappings.flatMap((m) => (m.model === undefined ? [] : [m.model])),
    ...(config.hooks.mail?.model === undefined ? [] : [config.hooks.mail.model]),
  ]);
}
