import { hookdError } from '../errors.js';
import { newId } from '../ids.js';
import { inNamespace } from './plugin-rules.js';
import type { Draft } from './types.js';

/**
 * What a plugin's mapping may make of a request (docs/presets.md#what-a-plugin-can-and-cannot-do),
 * checked on every draft it yields, its transform's included: replies go where its templated
 * draft (the operator's entry) says, and runs stay in the plugin's own sessions.
 */

const defaultOf = (key: 'to' | 'channel') => (key === 'channel' ? 'last' : undefined);

/** A plugin's transform sends replies where its mapping does: only the operator chooses a recipient. */
function keepRoute(templated: Draft, made: Draft): void {
  for (const key of ['to', 'channel'] as const) {
    if ((made[key] ?? defaultOf(key)) === (templated[key] ?? defaultOf(key))) continue;
    const reason = `a plugin's transform cannot choose where replies go (its ${key} is ${JSON.stringify(made[key])}); set ${key} in its hooks.presets entry`;
    throw hookdError('TRANSFORM_FAILED', { reason });
  }
}

/**
 * A plugin's run keeps to `namespace` (`hook:acme`): a session key outside it fails, unless it
 * is the templated one (which the operator's entry may set anywhere); a run without one gets a
 * new session in it, `hook:acme:<id>`.
 */
function keepSession(templated: Draft, made: Draft, namespace: string): Draft {
  if (made.kind !== 'agent') return made;
  const key = made.sessionKey;
  if (key === undefined) return { ...made, sessionKey: `${namespace}:${newId()}` };
  if (inNamespace(key, namespace) || key === templated.sessionKey) return made;
  const reason = `a plugin's runs keep to its own sessions, ${namespace}:… (its sessionKey is ${JSON.stringify(key)}); set sessionKey in its hooks.presets entry to choose another`;
  throw hookdError('TRANSFORM_FAILED', { reason });
}

/** The draft a plugin's mapping made, as it may run: its route the templated one, its session its own; throws TRANSFORM_FAILED. */
export function confinePluginDraft(templated: Draft, made: Draft, namespace: string): Draft {
  keepRoute(templated, made);
  return keepSession(templated, made, namespace);
}
