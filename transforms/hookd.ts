// Helpers for transform authors. Copy this file next to your transforms; the types come
// from hookd itself (type imports vanish when hookd bundles a transform).
import type { Transform } from '../src/transforms/authoring.js';

export type { PartialAction, Transform, TransformInput, TransformResult } from '../src/transforms/authoring.js';

/** Gives a transform its types: `export default defineTransform<MyPayload>((input) => …)`. */
export function defineTransform<Payload = unknown>(fn: Transform<Payload>): Transform<Payload> {
  return fn;
}
