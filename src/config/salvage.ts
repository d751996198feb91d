import type { ErrorObject } from 'ajv';

/** Validation rounds at most: each removes what the round before refused and fills defaults. */
const ROUNDS = 4;

type Node = Record<string, unknown> | unknown[];

const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null;

/** `/hooks/mappings/0/deliver` → `['hooks', 'mappings', '0', 'deliver']`. */
function partsOf(pointer: string): string[] {
  if (!pointer) return [];
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/**
 * Removes the value at `parts`. An item of an array goes with its whole array (removing only
 * the item would shift the indices later checks name); the root stays.
 */
function remove(root: unknown, parts: readonly string[]): void {
  if (parts.length === 0) return;
  let parent: unknown = root;
  for (const part of parts.slice(0, -1)) {
    if (!isNode(parent)) return;
    parent = (parent as Record<string, unknown>)[part];
  }
  if (Array.isArray(parent)) remove(root, parts.slice(0, -1));
  else if (isNode(parent)) delete (parent as Record<string, unknown>)[parts.at(-1) as string];
}

/** A mapping's part (`transform`, `verify`) that lacks a required key is useless to later checks: it goes. */
const IN_A_MAPPING = /^\/hooks\/mappings\/\d+\/./;

/** What to remove for one schema error: nothing for an unknown key (harmless to what follows). */
function refusedParts(error: ErrorObject): string[] | undefined {
  if (error.keyword === 'additionalProperties') return undefined;
  if (error.keyword === 'required')
    return IN_A_MAPPING.test(error.instancePath) ? partsOf(error.instancePath) : undefined;
  return partsOf(error.instancePath);
}

/**
 * A copy of a config the schema refused, without the refused values and with their defaults
 * filled in, for the checks that come after the schema (cross-key rules, mappings, templates,
 * transforms) to run on in the same pass (`hookd check` reports everything at once). Values
 * of the wrong type would make those checks fail in other ways; what the schema said of them
 * is already reported.
 */
export function withoutRefused(
  value: unknown,
  errors: readonly ErrorObject[],
  validate: ((data: unknown) => boolean) & { errors?: ErrorObject[] | null },
): unknown {
  const copy = structuredClone(value);
  let refused = errors;
  for (let round = 0; round < ROUNDS; round++) {
    const removals = refused.map(refusedParts).filter((parts): parts is string[] => parts !== undefined);
    // Deepest first: removing a parent first would leave its children's removals nothing to find.
    removals.sort((a, b) => b.length - a.length);
    for (const parts of removals) remove(copy, parts);
    if (validate(copy) || removals.length === 0) break;
    refused = validate.errors ?? [];
  }
  return copy;
}
