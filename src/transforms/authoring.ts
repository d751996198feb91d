/**
 * Types for transform authors, exported by the package as `hookd/transform`
 * (docs/transforms.md#writing-one). A transform receives a TransformInput and returns a
 * TransformResult: `null` (skip, 204), `undefined` (use the mapping's templates), a
 * partial action merged over the templated one, or an array of them (a fan-out).
 * defineTransform is the one value here: when hookd bundles a transform, `hookd/transform`
 * becomes that identity function alone (compile.ts), never hookd itself.
 */

import type { ActionFieldValues } from '../action-shape.js';

/** A payload's type from its JSON Schema (`as const`), as json-schema-to-ts derives it. */
export type { FromSchema } from 'json-schema-to-ts';

export interface TransformInput<Payload = unknown> {
  /** The parsed body (for a `forEach` mapping, with the current item at index 0). */
  readonly payload: Payload;
  /** Request headers, lower-cased; the token headers are never included. */
  readonly headers: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string | string[]>>;
  /** The sub-path after hooks.path (`github`). */
  readonly path: string;
  /** The request's path and query string. */
  readonly url: string;
  /** The body exactly as received. */
  readonly rawBody: string;
}

/** Any field of a wake or agent action (src/action-shape.ts); `kind` switches between them. */
export type PartialAction = Partial<ActionFieldValues>;

/** A partial action, and the request's event type (docs/mappings.md#event-types): a label, not an action field. */
export type TransformResultItem = PartialAction & { readonly eventType?: string };

export type TransformResult = TransformResultItem | TransformResultItem[] | null | undefined;

export type Transform<Payload = unknown> = (
  input: TransformInput<Payload>,
) => TransformResult | Promise<TransformResult>;

/** Identity helper that gives a transform its types: `export default defineTransform((input) => …)`. */
export function defineTransform<Payload = unknown>(fn: Transform<Payload>): Transform<Payload> {
  return fn;
}
