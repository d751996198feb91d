import { hookdError } from '../errors.js';
import type { ModelProvider } from '../runtime/index.js';

const MARKER_LINE = /^<<<(END_)?EXTERNAL_UNTRUSTED_CONTENT id="[0-9a-f]+">>>$/;

/** The content of a message with the safety wrapper's notice and marker lines taken out. */
function unwrap(text: string): string {
  return text
    .split('\n')
    .filter(
      (line) =>
        !line.startsWith('SECURITY NOTICE:') &&
        !MARKER_LINE.test(line) &&
        !/^Source: \w+$/.test(line) &&
        line !== '---',
    )
    .join('\n')
    .trim();
}

/**
 * `builtin/echo`: deterministic and offline, so the embedded default works end to end.
 * It answers `HEARTBEAT_OK` when the last message carries nothing, otherwise a short
 * restatement of what it received. A demo, not an assistant.
 */
export function createBuiltinProvider(): ModelProvider {
  return {
    async complete({ model, messages }) {
      if (model !== 'echo')
        throw hookdError('MODEL_UNKNOWN', { provider: 'builtin', model, suggestion: 'builtin/echo' });
      const last = messages.at(-1)?.content ?? '';
      const content = unwrap(last);
      if (content === '') return 'HEARTBEAT_OK';
      const short = content.length > 500 ? `${content.slice(0, 500)}…` : content;
      return `Echo: ${short}`;
    },
  };
}
