import { hookdError } from '../errors.js';
import { cutNote, MAX_TEXT_CHARS, renderBudget, withNote } from './bounded-text.js';
import type { CompiledMapping } from './compile.js';
import { itemPayloads } from './for-each.js';
import { plainOf } from './item-view.js';
import { MAX_ACTIONS, mergeTransformResult } from './merge.js';
import { confinePluginDraft } from './plugin-drafts.js';
import { buildView, EMPTY_VIEW } from './templates.js';
import type { Draft, HookRequest, TransformContext, TransformRunner } from './types.js';

/** A request as templates and transforms see it: its headers flattened, credentials masked. */
export type MaskedRequest = HookRequest & { readonly headers: Readonly<Record<string, string>> };

/** What rendering a request's drafts needs besides the request: the transforms, the clock of `{{now}}`. */
export interface DraftParts {
  /** Needed when the mapping has a transform. */
  readonly transforms?: TransformRunner | undefined;
  readonly now: () => Date;
}

/** One request's drafts: rendered per item, each merged with the transform's result. */
export async function draftsFor(
  parts: DraftParts,
  mapping: CompiledMapping,
  request: MaskedRequest,
): Promise<{ drafts: Draft[]; fanOut: boolean; eventType?: string }> {
  const { transforms } = parts;
  const drafts: Draft[] = [];
  let fanOut = mapping.forEach !== undefined;
  let eventType: string | undefined;
  // One request's transform calls share one time budget (a fan-out calls once per item: one
  // request must not hold an isolate for items × timeoutMs).
  const budgetMs = transforms?.timeoutMs;
  const started = performance.now();
  // And its templates share one budget of steps (a fan-out renders once per item).
  const renders = renderBudget();
  for (const payload of itemPayloads(mapping.forEach, request.payload)) {
    const view = mapping.usesView
      ? buildView({ payload, headers: request.headers, query: request.query, path: request.subPath, clock: parts.now })
      : EMPTY_VIEW;
    const draft = mapping.draft(view, renders);
    const confine = (made: Draft) =>
      mapping.sessionNamespace ? confinePluginDraft(draft, made, mapping.sessionNamespace) : made;
    if (!mapping.transform || !transforms) {
      drafts.push(confine(draft));
      continue;
    }
    const left = budgetMs === undefined ? undefined : budgetMs - (performance.now() - started);
    if (left !== undefined && left < 1) {
      const reason = `this request's transform calls used up their budget of ${budgetMs} ms`;
      throw hookdError('TRANSFORM_FAILED', { reason });
    }
    const context = transformContext(request, payload, mapping.presetOptions);
    const result = await transforms.run(mapping.id, context, left);
    const merged = mergeTransformResult(draft, result);
    fanOut ||= merged.fanOut;
    eventType ??= merged.eventType;
    drafts.push(...merged.drafts.map(confine));
  }
  if (drafts.length > MAX_ACTIONS) throw hookdError('TOO_MANY_ACTIONS', { count: drafts.length, max: MAX_ACTIONS });
  const bounded = drafts.map((draft) => boundDraft(draft, mapping));
  return { drafts: bounded, fanOut, ...(eventType === undefined ? {} : { eventType }) };
}

export { MAX_TEXT_CHARS } from './bounded-text.js';

/**
 * Bounds a draft's `text` and `message`: a transform that returns more fails (500, its bug to
 * fix); a template that renders more is cut with a note (a mail with a long body still runs),
 * which its render has done already (docs/mappings.md#what-a-template-may-render).
 * A plugin's transform may not ask for a run longer than the operator allows.
 */
export function boundDraft(draft: Draft, mapping: Pick<CompiledMapping, 'maxTimeoutSeconds' | 'transform'>): Draft {
  const most = mapping.maxTimeoutSeconds;
  if (most !== undefined && draft.timeoutSeconds !== undefined && draft.timeoutSeconds > most) {
    const reason = `its timeoutSeconds is ${draft.timeoutSeconds}; a plugin's runs may last at most ${most} (agents.defaults.timeoutSeconds, or the entry's timeoutSeconds)`;
    throw hookdError('TRANSFORM_FAILED', { reason });
  }
  let bounded = draft;
  for (const field of ['text', 'message'] as const) {
    const value = bounded[field];
    if (value === undefined || value.length <= MAX_TEXT_CHARS) continue;
    if (mapping.transform) {
      const reason = `its ${field} is ${value.length} characters; the limit is ${MAX_TEXT_CHARS}`;
      throw hookdError('TRANSFORM_FAILED', { reason });
    }
    bounded = { ...bounded, [field]: withNote(value, cutNote(value.length)) };
  }
  return bounded;
}

/**
 * What a transform is called with for one payload (the request's, or a fan-out's item, as the
 * plain copy its view stands for): a preset's options, and `payloadIsJsonOfRawBody` only when
 * the payload is the whole body's JSON.
 */
export function transformContext(
  request: MaskedRequest,
  payload: unknown,
  presetOptions: Readonly<Record<string, unknown>> | undefined,
): TransformContext {
  return {
    ...(presetOptions ? { options: presetOptions } : {}),
    payload: plainOf(payload),
    headers: request.headers,
    query: request.query,
    path: request.subPath,
    url: request.url,
    rawBody: request.rawBody.toString('utf8'),
    ...(request.payloadIsJsonOfRawBody && payload === request.payload ? { payloadIsJsonOfRawBody: true } : {}),
  };
}
