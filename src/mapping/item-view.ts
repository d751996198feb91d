/**
 * A `forEach` item's payload (docs/mappings.md): the request's payload with the list replaced
 * by a one-element array. Each is a view of the payload, not a copy of it, so that an item costs
 * what the item and its path cost and not the payload's width: a copy of the top level per item
 * made a mail of 100 messages beside 200,000 keys about 20 s of work. A view reads like the copy it stands for
 * through `in` and property reads, which are all templates use; what needs its own keys (JSON, a
 * transform's context) takes `plainOf` it, the copy.
 */

/** Each view: the object it overlays and the one key it replaces. */
const views = new WeakMap<object, { readonly base: Readonly<Record<string, unknown>>; readonly key: string }>();

/** A view of `base` with `key` holding `value` (in its place among the base's keys when the base has it). */
export function overlay(base: Readonly<Record<string, unknown>>, key: string, value: unknown): Record<string, unknown> {
  const view = Object.create(base, { [key]: { value, enumerable: true, writable: true, configurable: true } });
  views.set(view, { base, key });
  return view;
}

/**
 * The plain object a view stands for, `{ ...base, [key]: value }` (its keys in the base's
 * order), views inside it made plain too; any other value as it is.
 */
export function plainOf(value: unknown): unknown {
  const of = typeof value === 'object' && value !== null ? views.get(value) : undefined;
  if (!of) return value;
  return { ...of.base, [of.key]: plainOf((value as Readonly<Record<string, unknown>>)[of.key]) };
}
