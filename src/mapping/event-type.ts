/**
 * A request's event type (docs/mappings.md#event-types): what the sender says happened (`push`,
 * `payment_intent.succeeded`), read from a header or a JSON path of the payload as the mapping
 * (or its preset) declares, or returned by its transform. A label of the request, kept in the
 * request log; never an action field.
 */

import type { MappingConfig } from '../config/index.js';
import { hookdError } from '../errors.js';
import type { RawHeaders } from '../headers.js';
import { isPlainObject } from './templates.js';

/** How a mapping reads its event type: `{ header: "x-github-event" }` or `{ path: "event.type" }`. */
export type EventTypeRule = NonNullable<MappingConfig['eventType']>;

/** The longest event type kept (a longer one read from a request is cut). */
export const MAX_EVENT_TYPE_CHARS = 100;

// Control characters (C0, DEL, C1) never reach a label: a log line or a page shows it as text.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
const HAS_CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Reads the event type `rule` names from a request; undefined when the request has none. */
export function readEventType(rule: EventTypeRule, payload: unknown, headers: RawHeaders): string | undefined {
  if (rule.header !== undefined) {
    const value = headers[rule.header.toLowerCase()];
    return labelOf(Array.isArray(value) ? value[0] : value);
  }
  if (rule.path === undefined) return undefined;
  let node: unknown = payload;
  for (const key of rule.path.split('.')) {
    if (Array.isArray(node) && /^\d+$/.test(key)) node = node[Number(key)];
    else if (isPlainObject(node) && Object.hasOwn(node, key)) node = node[key];
    else return undefined;
  }
  return labelOf(node);
}

/**
 * A value read from a request as a label: a string, number or boolean, control characters
 * dropped, white space trimmed, cut at MAX_EVENT_TYPE_CHARS; undefined when nothing is left.
 * What a sender sends is never an error: it only labels its request.
 */
function labelOf(value: unknown): string | undefined {
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return undefined;
  const text = String(value).replace(CONTROL, '').trim().slice(0, MAX_EVENT_TYPE_CHARS).trim();
  return text === '' ? undefined : text;
}

/**
 * A transform's `eventType`, checked: a string of 1 to 100 characters without control
 * characters (null or undefined: none). Anything else is the transform's bug: TRANSFORM_FAILED.
 */
export function checkedEventType(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (
    typeof value === 'string' &&
    value.length >= 1 &&
    value.length <= MAX_EVENT_TYPE_CHARS &&
    !HAS_CONTROL.test(value)
  )
    return value;
  const what = typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : typeof value;
  const reason = `the transform returned an eventType ${what}; expected a string of 1 to ${MAX_EVENT_TYPE_CHARS} characters without control characters`;
  throw hookdError('TRANSFORM_FAILED', { reason });
}

/** How a mapping reads its event type, as the console shows it: `header x-github-event`, `path type`, `transform`. */
export function describeEventType(rule: EventTypeRule | undefined, hasTransform: boolean): string | undefined {
  if (rule?.header !== undefined) return `header ${rule.header.toLowerCase()}`;
  if (rule?.path !== undefined) return `path ${rule.path}`;
  return hasTransform ? 'transform' : undefined;
}
