import { hookdError } from '../errors.js';
import { type ModelProvider, unwrapExternalContent } from '../runtime/index.js';

/**
 * `builtin/echo`: deterministic and offline, so the embedded default works end to end.
 * It answers `HEARTBEAT_OK` when the last message carries nothing, otherwise a short
 * restatement of what it received. A demo, not an assistant.
 */
export function createBuiltinProvider(): ModelProvider {
  return {
    async complete({ model, messages, signal }) {
      // An aborted call answers nothing, as a provider over the network would not.
      if (signal.aborted) throw signal.reason;
      if (model !== 'echo')
        throw hookdError('MODEL_UNKNOWN', { provider: 'builtin', model, suggestion: 'builtin/echo' });
      const last = messages.at(-1)?.content ?? '';
      const content = unwrapExternalContent(last).trim();
      if (content === '') return 'HEARTBEAT_OK';
      const short = content.length > 500 ? `${content.slice(0, 500)}…` : content;
      return `Echo: ${short}`;
    },
  };
}
