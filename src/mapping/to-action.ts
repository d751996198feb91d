import { type Action, type ActionOptions, parseAgentBody, parseWakeBody } from '../actions/index.js';
import type { CompiledMapping } from './compile.js';
import type { Draft } from './types.js';

/** Validates a mapping's draft into the action it stores, like `/hooks/wake` and `/hooks/agent` validate a body. */
export type ActionValidator = (draft: Draft, mapping: CompiledMapping) => Action;

/**
 * Creates the validator. A wake takes `text` (else `message`) and `mode` (else `wakeMode`,
 * else the mapping's); an agent the other way round, and remembers its mapping.
 */
export function createActionValidator(actionOptions: ActionOptions): ActionValidator {
  // Each mapping's validation options, built on its first draft and kept (not per request).
  const prepared = new WeakMap<CompiledMapping, { wake: Partial<ActionOptions>; agent: ActionOptions }>();
  const optionsOf = (mapping: CompiledMapping) => {
    let options = prepared.get(mapping);
    if (!options) {
      const { allowUnsafeExternalContent, contentSource } = mapping.policy;
      const wake = { allowUnsafeExternalContent, contentSource };
      options = { wake, agent: { ...actionOptions, ...wake } };
      prepared.set(mapping, options);
    }
    return options;
  };

  return (draft, mapping) => {
    const options = optionsOf(mapping);
    const { wakeMode } = mapping.policy;
    if (draft.kind === 'wake') {
      return parseWakeBody(
        { text: draft.text ?? draft.message, mode: draft.mode ?? draft.wakeMode ?? wakeMode },
        options.wake,
      );
    }
    // The agent's fields named one by one: a rest-and-spread copy of the draft made an object of
    // its own shape on every request.
    const body = {
      message: draft.message ?? draft.text,
      name: draft.name,
      sessionKey: draft.sessionKey,
      wakeMode: draft.wakeMode ?? draft.mode ?? wakeMode,
      deliver: draft.deliver,
      channel: draft.channel,
      to: draft.to,
      model: draft.model,
      thinking: draft.thinking,
      timeoutSeconds: draft.timeoutSeconds,
    };
    return parseAgentBody(body, options.agent, mapping.id);
  };
}
