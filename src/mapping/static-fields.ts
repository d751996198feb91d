import { MAIN_SESSION, THINKING_LEVELS } from '../action-shape.js';
import type { MappingConfig } from '../config/index.js';

/** What every rendering of `template` starts with: the text before its first tag. */
const fixedStart = (template: string) => {
  const at = template.indexOf('{{');
  return at < 0 ? template : template.slice(0, at);
};

/**
 * A mapping's fields that no request could make valid (docs/mappings.md#a-mapping): a fixed
 * `thinking` that is not a level, a `sessionKey` whose fixed start no allowed prefix fits, or
 * the main session's. Checked only per request before, each request was a 400 its sender could
 * not mend, and a webhook sender does not retry a 4xx.
 */
export function staticFieldProblems(
  mapping: Pick<MappingConfig, 'thinking' | 'sessionKey'>,
  path: string,
  prefixes: readonly string[],
): string[] {
  const problems: string[] = [];
  const { thinking, sessionKey } = mapping;
  if (thinking !== undefined && !thinking.includes('{{') && !(THINKING_LEVELS as readonly string[]).includes(thinking))
    problems.push(`${path}.thinking: expected one of ${THINKING_LEVELS.join(', ')}, got ${JSON.stringify(thinking)}`);
  if (sessionKey !== undefined) {
    const fixed = !sessionKey.includes('{{');
    const start = fixedStart(sessionKey).toLowerCase();
    const fits = prefixes.some((prefix) => {
      const p = prefix.toLowerCase();
      // A templated key fits while its fixed start is a prefix's start, or starts with one.
      return start.startsWith(p) || (!fixed && p.startsWith(start));
    });
    if (!fits || (fixed && start === MAIN_SESSION))
      problems.push(
        `${path}.sessionKey: expected a key starting with ${prefixes.join(', ')} (hooks.allowedSessionKeyPrefixes), got ${JSON.stringify(sessionKey)}`,
      );
  }
  return problems;
}
