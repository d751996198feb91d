import type { ActionOptions } from '../actions/index.js';
import { type Config, configInvalid } from '../config/index.js';
import { hookdError, isHookdError } from '../errors.js';
import { type CredentialTest, credentialTest, flattenHeaders, type RawHeaders } from '../headers.js';
import { signatureHeadersOf } from '../schemes/index.js';
import { type CompiledMapping, compileMappings } from './compile.js';
import { readEventType } from './event-type.js';
import { itemPayloads } from './for-each.js';
import { MAX_ACTIONS, mergeTransformResult } from './merge.js';
import { confinePluginDraft } from './plugin-drafts.js';
import { buildView, EMPTY_VIEW, isPlainObject } from './templates.js';
import { createActionValidator } from './to-action.js';
import type { Draft, HookRequest, MappingOutcome, TransformContext, TransformRunner } from './types.js';

export interface MappingEngineOptions {
  readonly config: Pick<Config, 'hooks' | 'file' | 'baseDir' | 'agents'>;
  readonly actionOptions: ActionOptions;
  /** The compiled mappings (default: `compileMappings` of the config). */
  readonly mappings?: readonly CompiledMapping[];
  /** Needed when any mapping has a transform. */
  readonly transforms?: TransformRunner;
  readonly now?: () => Date;
}

/** Routes `/hooks/<name>` requests through mappings, then presets (docs/mappings.md). */
export interface MappingEngine {
  readonly mappings: readonly CompiledMapping[];
  /** The body limit for a sub-path: the largest of `hooks.maxBodyBytes` and its mappings'. */
  maxBodyBytesFor(subPath: string): number;
  /** The mappings with `verify` that may take a request on this sub-path. */
  verifiersFor(subPath: string): readonly CompiledMapping[];
  /**
   * Whether a header carries a credential: the fixed names and every mapping's signature headers
   * (docs/security.md#what-is-masked). Templates and transforms never see these.
   */
  readonly isCredentialHeader: CredentialTest;
  /** The first mapping whose predicates (path, source, headers) all hold. */
  resolve(subPath: string, payload: unknown, headers?: RawHeaders): CompiledMapping | undefined;
  /** Turns a request into validated actions; throws 400s and TRANSFORM_FAILED. */
  route(request: HookRequest): Promise<MappingOutcome>;
}

/** Routes requests through compiled mappings (by default, the config's mappings and presets compiled here). */
export function createMappingEngine(options: MappingEngineOptions): MappingEngine {
  const { config, actionOptions } = options;
  const now = options.now ?? (() => new Date());
  const mappings = options.mappings ?? compileMappings(config, actionOptions.models);
  const isCredentialHeader = credentialTest(mappings.flatMap((m) => (m.verify ? signatureHeadersOf(m.verify) : [])));
  if (!options.transforms) {
    const problems = mappings
      .filter((m) => m.transform)
      .map((m) => `${m.configPath}.transform: transforms are not available here`);
    if (problems.length > 0) throw configInvalid(problems, config.file);
  }

  function resolve(subPath: string, payload: unknown, headers: RawHeaders = {}): CompiledMapping | undefined {
    const source = isPlainObject(payload) && typeof payload.source === 'string' ? payload.source : undefined;
    return mappings.find(
      (m) =>
        (m.matchPath === undefined || m.matchPath === subPath) &&
        (m.matchSource === undefined || m.matchSource === source) &&
        (m.matchHeaders === undefined || m.matchHeaders.every(([name, values]) => headerIn(headers[name], values))),
    );
  }

  const toAction = createActionValidator(actionOptions);

  /** One request's drafts: rendered per item, each merged with the transform's result. */
  async function draftsFor(
    mapping: CompiledMapping,
    request: HookRequest & { readonly headers: Readonly<Record<string, string>> },
  ): Promise<{ drafts: Draft[]; fanOut: boolean; eventType?: string }> {
    const drafts: Draft[] = [];
    let fanOut = mapping.forEach !== undefined;
    let eventType: string | undefined;
    // One request's transform calls share one time budget (a fan-out calls once per item: one
    // request must not hold an isolate for items × timeoutMs).
    const budgetMs = options.transforms?.timeoutMs;
    const started = performance.now();
    for (const payload of itemPayloads(mapping.forEach, request.payload)) {
      const view = mapping.usesView
        ? buildView({ payload, headers: request.headers, query: request.query, path: request.subPath, clock: now })
        : EMPTY_VIEW;
      const draft = mapping.draft(view);
      const confine = (made: Draft) =>
        mapping.sessionNamespace ? confinePluginDraft(draft, made, mapping.sessionNamespace) : made;
      if (!mapping.transform || !options.transforms) {
        drafts.push(confine(draft));
        continue;
      }
      const left = budgetMs === undefined ? undefined : budgetMs - (performance.now() - started);
      if (left !== undefined && left < 1) {
        const reason = `this request's transform calls used up their budget of ${budgetMs} ms`;
        throw hookdError('TRANSFORM_FAILED', { reason });
      }
      const context = transformContext(request, payload, mapping.presetOptions);
      const result = await options.transforms.run(mapping.id, context, left);
      const merged = mergeTransformResult(draft, result);
      fanOut ||= merged.fanOut;
      eventType ??= merged.eventType;
      drafts.push(...merged.drafts.map(confine));
    }
    if (drafts.length > MAX_ACTIONS) throw hookdError('TOO_MANY_ACTIONS', { count: drafts.length, max: MAX_ACTIONS });
    const bounded = drafts.map((draft) => boundDraft(draft, mapping));
    return { drafts: bounded, fanOut, eventType };
  }

  return {
    mappings,
    maxBodyBytesFor(subPath) {
      let limit = config.hooks.maxBodyBytes;
      for (const m of mappings) {
        if (m.maxBodyBytes !== undefined && (m.matchPath === undefined || m.matchPath === subPath)) {
          limit = Math.max(limit, m.maxBodyBytes);
        }
      }
      return limit;
    },
    resolve,
    isCredentialHeader,
    verifiersFor(subPath) {
      return mappings.filter((m) => m.verify && (m.matchPath === undefined || m.matchPath === subPath));
    },
    async route(received) {
      const request = withoutCredentialHeaders(received, isCredentialHeader);
      const mapping = resolve(request.subPath, request.payload, request.headers);
      if (!mapping) return { kind: 'none' };
      if (request.verifiedMappings && !request.verifiedMappings.has(mapping.id)) throw hookdError('UNAUTHORIZED');
      // Checked before any template renders or transform runs (docs/presets.md).
      const invalid = mapping.checkPayload?.(request.payload);
      if (invalid) throw hookdError('PAYLOAD_INVALID', invalid);
      let rendered: Awaited<ReturnType<typeof draftsFor>>;
      try {
        rendered = await draftsFor(mapping, request);
      } catch (err) {
        throw ofMapping(err, mapping.id);
      }
      const { drafts, fanOut } = rendered;
      const eventType = rendered.eventType ?? declaredEventType(mapping, request.payload, request.headers);
      const actions = drafts.map((d) => toAction(d, mapping));
      return { kind: 'actions', mappingId: mapping.id, actions, fanOut, eventType };
    },
  };
}

/**
 * The request as templates, transforms and header predicates see it: no credential header
 * (docs/security.md#what-is-masked). Every field named: a spread made a shape of its own per request.
 */
function withoutCredentialHeaders(
  received: HookRequest,
  isCredentialHeader: CredentialTest,
): HookRequest & { readonly headers: Readonly<Record<string, string>> } {
  return {
    subPath: received.subPath,
    payload: received.payload,
    headers: flattenHeaders(received.headers, isCredentialHeader),
    query: received.query,
    url: received.url,
    rawBody: received.rawBody,
    payloadIsJsonOfRawBody: received.payloadIsJsonOfRawBody,
    verifiedMappings: received.verifiedMappings,
  };
}

/**
 * The event type a mapping declares, read from a request (docs/mappings.md#event-types): what
 * labels its record even when its transform fails or returns none.
 */
export function declaredEventType(mapping: CompiledMapping, payload: unknown, headers: RawHeaders): string | undefined {
  return mapping.eventType ? readEventType(mapping.eventType, payload, headers) : undefined;
}

/** A TRANSFORM_FAILED names the mapping whose transform failed (its log line does). */
function ofMapping(err: unknown, mapping: string): unknown {
  if (!isHookdError(err, 'TRANSFORM_FAILED') || err.params.mapping !== undefined) return err;
  return hookdError('TRANSFORM_FAILED', { ...err.params, mapping }, { cause: err.cause ?? err });
}

/** The most text one action may carry (docs/operations.md#limits): a 30-byte request cannot become a 50 MB wake. */
const MAX_TEXT_CHARS = 256 * 1024;

/**
 * Bounds a draft's `text` and `message`: a transform that returns more fails (500, its bug to
 * fix); a template that renders more is cut with a note (a mail with a long body still runs).
 * A plugin's transform may not ask for a run longer than the operator allows.
 */
function boundDraft(draft: Draft, mapping: CompiledMapping): Draft {
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
    const note = `\n… [cut by hookd: ${value.length - MAX_TEXT_CHARS} more characters]`;
    bounded = { ...bounded, [field]: value.slice(0, MAX_TEXT_CHARS - note.length) + note };
  }
  return bounded;
}

function transformContext(
  request: HookRequest & { readonly headers: Readonly<Record<string, string>> },
  payload: unknown,
  presetOptions: Readonly<Record<string, unknown>> | undefined,
): TransformContext {
  return {
    ...(presetOptions ? { options: presetOptions } : {}),
    payload,
    headers: request.headers,
    query: request.query,
    path: request.subPath,
    url: request.url,
    rawBody: request.rawBody.toString('utf8'),
    ...(request.payloadIsJsonOfRawBody && payload === request.payload ? { payloadIsJsonOfRawBody: true } : {}),
  };
}

/** True when a request header (one value or several) holds one of `values`. */
function headerIn(value: string | readonly string[] | undefined, values: ReadonlySet<string>): boolean {
  if (value === undefined) return false;
  return typeof value === 'string' ? values.has(value.trim()) : value.some((v) => values.has(v.trim()));
}
