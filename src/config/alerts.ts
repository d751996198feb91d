import type { RawConfig } from './types.js';

/**
 * Settles `hooks.alerts.enabled` (docs/operations.md#alerts): unset, alerts are on when
 * `channels.chatnet` is configured with a recipient (`hooks.alerts.to` or its `defaultTo`), off
 * otherwise (the embedded default has no channel). Turned on without a channel or a recipient is a
 * problem, pushed to `problems`.
 */
export function settleAlerts(config: RawConfig, problems: string[]): void {
  const { alerts } = config.hooks;
  const { chatnet } = config.channels;
  const recipient = alerts.to ?? chatnet?.defaultTo;
  if (alerts.enabled === undefined) {
    alerts.enabled = chatnet !== undefined && recipient !== undefined;
    return;
  }
  if (!alerts.enabled) return;
  if (!chatnet)
    problems.push('hooks.alerts.enabled: alerts are sent through channels.chatnet, which is not configured');
  else if (recipient === undefined)
    problems.push('hooks.alerts.to: required when alerts are on and channels.chatnet has no defaultTo');
}
