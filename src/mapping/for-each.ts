import { hookdError } from '../errors.js';
import { overlay } from './item-view.js';
import { MAX_ACTIONS } from './merge.js';
import { isPlainObject } from './templates.js';

/**
 * The payloads a mapping renders: the payload itself, or for `forEach: "messages"` one per
 * item of that array (at most 100), the item replacing the array with a one-element array
 * so that `messages.0` templates keep working (docs/mappings.md).
 */
export function itemPayloads(forEach: string | undefined, payload: unknown): unknown[] {
  if (forEach === undefined) return [payload];
  const path = forEach.split('.');
  const list = path.reduce<unknown>((value, key) => (isPlainObject(value) ? value[key] : undefined), payload);
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw hookdError('INVALID_FIELD', { field: forEach, expected: 'an array' });
  if (list.length > MAX_ACTIONS) throw hookdError('TOO_MANY_ACTIONS', { count: list.length, max: MAX_ACTIONS });
  return list.map((item) => setPath(payload, path, [item]));
}

/**
 * `value` with `path` set to `replacement`: a view of each object along the path with its one
 * key replaced (docs/mappings.md), never a copy of its other keys.
 */
function setPath(value: unknown, path: readonly string[], replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path as [string, ...string[]];
  const object = isPlainObject(value) ? value : {};
  return overlay(object, head, setPath(object[head], rest, replacement));
}
