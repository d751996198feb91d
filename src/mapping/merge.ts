import { ACTION_FIELDS } from '../action-shape.js';
import { hookdError } from '../errors.js';
import { isPlainObject } from './templates.js';
import type { Draft } from './types.js';

/** The fields a transform may return: every field of an action. */
const ALLOWED: ReadonlySet<string> = new Set(Object.keys(ACTION_FIELDS));

/** The most actions one request may yield (docs/http.md). */
export const MAX_ACTIONS = 100;

function invalidResult(detail: string) {
  return hookdError('TRANSFORM_FAILED', { reason: `the transform returned ${detail}` });
}

/** Checks one partial action a transform returned; its author's mistakes are TRANSFORM_FAILED. */
function checkPartial(value: unknown): Partial<Draft> {
  if (!isPlainObject(value)) {
    throw invalidResult(
      `${Array.isArray(value) ? 'a nested array' : typeof value}, expected an object, null or undefined`,
    );
  }
  for (const key of Object.keys(value)) {
    if (!ALLOWED.has(key)) throw invalidResult(`an unknown field "${key}"`);
  }
  if (value.kind !== undefined && value.kind !== 'wake' && value.kind !== 'agent') {
    throw invalidResult('a kind other than "wake" or "agent"');
  }
  return value as Partial<Draft>;
}

/**
 * Merges a transform's result over the templated draft (docs/mappings.md): `null` skips (no
 * drafts), `undefined` keeps the templates, an object (or an array of them, a fan-out)
 * overrides field by field; `kind` may switch wake ↔ agent.
 */
export function mergeTransformResult(draft: Draft, result: unknown): { drafts: Draft[]; fanOut: boolean } {
  if (result === null) return { drafts: [], fanOut: false };
  if (result === undefined) return { drafts: [draft], fanOut: false };
  if (Array.isArray(result)) {
    if (result.length > MAX_ACTIONS) throw hookdError('TOO_MANY_ACTIONS', { count: result.length, max: MAX_ACTIONS });
    return { drafts: result.map((item) => ({ ...draft, ...checkPartial(item) }) as Draft), fanOut: true };
  }
  return { drafts: [{ ...draft, ...checkPartial(result) } as Draft], fanOut: false };
}
