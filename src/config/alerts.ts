import type { RawConfig } from './types.js';

/**
 * Settles `hooks.alerts` (docs/operations.md#alerts). Its channel: `hooks.alerts.channel`, else
 * the one channel with a recipient (`hooks.alerts.to` or its `defaultTo`), else the only channel.
 * Unset, `enabled` is on when that channel is named or has a recipient, off otherwise (the
 * embedded default has no channel). What cannot be settled is a problem, pushed to `problems`. Whether the
 * channel's kind needs a recipient is its module's to say (docs/channels.md).
 */
export function settleAlerts(config: RawConfig, problems: string[]): void {
  const { alerts } = config.hooks;
  const ids = Object.keys(config.channels);
  const recipientOf = (id: string) => alerts.to ?? config.channels[id]?.defaultTo;
  if (alerts.channel !== undefined && !ids.includes(alerts.channel)) {
    problems.push(`hooks.alerts.channel: ${unknownChannel(alerts.channel, ids)}`);
    alerts.enabled ??= false;
    return;
  }
  const named = alerts.channel !== undefined;
  const withRecipient = ids.filter((id) => recipientOf(id) !== undefined);
  const ambiguous = alerts.channel === undefined && withRecipient.length > 1;
  const chosen =
    alerts.channel ?? (withRecipient.length === 1 ? withRecipient[0] : ids.length === 1 ? ids[0] : undefined);
  if (chosen !== undefined && !ambiguous) alerts.channel = chosen;
  if (alerts.enabled === undefined && !ambiguous) {
    alerts.enabled = chosen !== undefined && (named || recipientOf(chosen) !== undefined);
    return;
  }
  if (alerts.enabled === false) return;
  if (ids.length === 0)
    problems.push('hooks.alerts.enabled: alerts are sent through a chat channel, and channels has none');
  else if (ambiguous)
    problems.push(
      `hooks.alerts.channel: required when more than one channel has a recipient (${withRecipient.join(', ')}); or set hooks.alerts.enabled: false`,
    );
  else if (chosen === undefined)
    problems.push(`hooks.alerts.channel: required when several channels are configured (${ids.join(', ')})`);
  alerts.enabled ??= false;
}

/** What a key naming a channel id that is not configured is told: the ids that are. */
export function unknownChannel(id: string, ids: readonly string[]): string {
  const known =
    ids.length === 0 ? 'no channel is configured (channels)' : `the configured channels are ${ids.join(', ')}`;
  return `expected a configured channel id, got ${JSON.stringify(id)}: ${known}`;
}
