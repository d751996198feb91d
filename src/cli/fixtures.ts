import { isDeepStrictEqual } from 'node:util';
import { type HookdError, hookdError } from '../errors.js';
import { classifyContentType, parseBody, toHookdError } from '../ingress/index.js';
import type { MappingEngine } from '../mapping/index.js';
import { signDelivery, verifySignature } from '../schemes/index.js';

/**
 * A recorded delivery replayed through the mapping engine as the gateway would take it, for
 * `hookd presets test` and `hookd test`: signed with the mapping's own secret when it verifies
 * a scheme (and the signature checked), the body parsed by its content type, then routed.
 */

/** What a delivery became: its actions (null: nothing, answered 204), or the error answer it got. */
export type Replayed =
  | { readonly ok: true; readonly actions: readonly unknown[] | null; readonly eventType?: string }
  | { readonly ok: false; readonly problem: string; readonly error?: HookdError };

/** The actions a fixture expects: one, several, or null for none (204). */
export type Expected = Readonly<Record<string, unknown>> | readonly Readonly<Record<string, unknown>>[] | null;

/** Replays one delivery to `/hooks/<subPath>`; `headers` in any case. */
export async function replayDelivery(
  mappings: MappingEngine,
  subPath: string,
  delivery: { readonly headers?: Readonly<Record<string, string>>; readonly raw: Buffer },
): Promise<Replayed> {
  const { raw } = delivery;
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(delivery.headers ?? {})) headers[key.toLowerCase()] = value;
  const verifier = mappings.verifiersFor(subPath)[0]?.verify;
  if (verifier) {
    // Under the delivery id the fixture recorded (so that what the id shows is the same every
    // run), in its sender's header style.
    Object.assign(headers, signDelivery(verifier, raw, { recorded: { ...headers } }));
    const verified = verifySignature(verifier, headers, raw);
    if (!verified.ok)
      return { ok: false, problem: `the signature the fixture was signed with does not verify: ${verified.reason}` };
  }
  try {
    const kind = classifyContentType(headers['content-type']);
    if (!kind) throw hookdError('UNSUPPORTED_MEDIA_TYPE', { contentType: String(headers['content-type']) });
    const parsed = parseBody(kind, raw);
    if (!parsed.ok) throw parsed.error;
    const outcome = await mappings.route({
      subPath,
      payload: parsed.body.payload,
      headers,
      query: {},
      url: `/hooks/${subPath}`,
      rawBody: raw,
      payloadIsJsonOfRawBody: parsed.body.payloadIsJsonOfRawBody,
    });
    if (outcome.kind === 'none') return { ok: true, actions: null };
    const actions = outcome.actions.length === 0 ? null : [...outcome.actions];
    return { ok: true, actions, ...(outcome.eventType === undefined ? {} : { eventType: outcome.eventType }) };
  } catch (err) {
    const e = toHookdError(err);
    return { ok: false, problem: `answered ${e.statusCode} ${e.code}: ${e.message}`, error: e };
  }
}

/** `expect` against what came out: each expected action's keys must equal the actual ones; empty when they agree. */
export function diffActions(expect: Expected, actual: readonly unknown[] | null): string[] {
  const show = (value: unknown) => JSON.stringify(value);
  const expected = expect === null || Array.isArray(expect) ? expect : [expect];
  if (expected === null || actual === null) {
    return expected === actual ? [] : [`expected ${show(expected)}, got ${show(actual)}`];
  }
  const diff: string[] = [];
  if (expected.length !== actual.length) diff.push(`expected ${expected.length} action(s), got ${actual.length}`);
  expected.forEach((want: Readonly<Record<string, unknown>>, i: number) => {
    const got = (actual[i] ?? {}) as Record<string, unknown>;
    for (const [key, value] of Object.entries(want)) {
      if (!isDeepStrictEqual(got[key], value)) {
        diff.push(`action ${i} ${key}:\n    - expected ${show(value)}\n    + got      ${show(got[key])}`);
      }
    }
  });
  return diff;
}
