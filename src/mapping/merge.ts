import { ACTION_FIELDS } from '../action-shape.js';
import { hookdError } from '../errors.js';
import { checkedEventType } from './event-type.js';
import { isPlainObject } from './templates.js';
import type { Draft } from './types.js';

/** The fields a transform may return: every field of an action. */
const ALLOWED: ReadonlySet<string> = new Set(Object.keys(ACTION_FIELDS));

/** The most actions one request may yield (docs/http.md). */
export const MAX_ACTIONS = 100;

function invalidResult(detail: string) {
  return hookdError('TRANSFORM_FAILED', { reason: `the transform returned ${detail}` });
}

/**
 * Checks one partial action a transform returned; its author's mistakes are TRANSFORM_FAILED.
 * Its `eventType` labels the request (docs/transforms.md#writing-one): taken out, never an action field.
 */
function checkPartial(value: unknown): { partial: Partial<Draft>; eventType: string | undefined } {
  if (!isPlainObject(value)) {
    throw invalidResult(
      `${Array.isArray(value) ? 'a nested array' : typeof value}, expected an object, null or undefined`,
    );
  }
  let eventType: string | undefined;
  let partial = value;
  for (const key of Object.keys(value)) {
    if (key === 'eventType') {
      eventType = checkedEventType(value.eventType);
      const { eventType: _label, ...fields } = value;
      partial = fields;
    } else if (!ALLOWED.has(key)) throw invalidResult(`an unknown field "${key}"`);
  }
  if (value.kind !== undefined && value.kind !== 'wake' && value.kind !== 'agent') {
    throw invalidResult('a kind other than "wake" or "agent"');
  }
  return { partial: partial as Partial<Draft>, eventType };
}

/**
 * Merges a transform's result over the templated draft (docs/mappings.md): `null` skips (no
 * drafts), `undefined` keeps the templates, an object (or an array of them, a fan-out)
 * overrides field by field; `kind` may switch wake ↔ agent. The `eventType` it returns (in a
 * fan-out, its first item's that has one) is the request's.
 */
export function mergeTransformResult(
  draft: Draft,
  result: unknown,
): { drafts: Draft[]; fanOut: boolean; eventType?: string } {
  if (result === null) return { drafts: [], fanOut: false };
  if (result === undefined) return { drafts: [draft], fanOut: false };
  const items = Array.isArray(result) ? result : [result];
  if (items.length > MAX_ACTIONS) throw hookdError('TOO_MANY_ACTIONS', { count: items.length, max: MAX_ACTIONS });
  let eventType: string | undefined;
  const drafts = items.map((item) => {
    const checked = checkPartial(item);
    eventType ??= checked.eventType;
    return { ...draft, ...checked.partial } as Draft;
  });
  return { drafts, fanOut: Array.isArray(result), ...(eventType === undefined ? {} : { eventType }) };
}
