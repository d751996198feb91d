import type { ActionOptions } from '../actions/index.js';
import { type Config, configInvalid } from '../config/index.js';
import { hookdError, isHookdError } from '../errors.js';
import { type CredentialTest, credentialTest, flattenHeaders, type RawHeaders } from '../headers.js';
import { signatureHeadersOf } from '../schemes/index.js';
import { type CompiledMapping, compileMappings } from './compile.js';
import { type DraftParts, draftsFor } from './drafts.js';
import { readEventType } from './event-type.js';
import { isPlainObject } from './templates.js';
import { type ActionValidator, createActionValidator } from './to-action.js';
import type { HookRequest, MappingOutcome, TransformRunner } from './types.js';

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

/** What routing reads, assembled once per engine. */
interface Routing extends DraftParts {
  readonly mappings: readonly CompiledMapping[];
  readonly isCredentialHeader: CredentialTest;
  readonly toAction: ActionValidator;
}

/** Routes requests through compiled mappings (by default, the config's mappings and presets compiled here). */
export function createMappingEngine(options: MappingEngineOptions): MappingEngine {
  const { config, actionOptions } = options;
  const mappings = options.mappings ?? compileMappings(config, actionOptions.models);
  const isCredentialHeader = credentialTest(mappings.flatMap((m) => (m.verify ? signatureHeadersOf(m.verify) : [])));
  if (!options.transforms) refuseTransforms(mappings, config.file);
  const routing: Routing = {
    mappings,
    transforms: options.transforms,
    now: options.now ?? (() => new Date()),
    isCredentialHeader,
    toAction: createActionValidator(actionOptions),
  };
  return {
    mappings,
    maxBodyBytesFor: (subPath) => maxBodyBytesFor(mappings, config.hooks.maxBodyBytes, subPath),
    resolve: (subPath, payload, headers) => resolveMapping(mappings, subPath, payload, headers),
    isCredentialHeader,
    verifiersFor: (subPath) => verifiersFor(mappings, subPath),
    route: (received) => routeRequest(routing, received),
  };
}

/** A config whose mappings have transforms cannot be served where no transforms run (CONFIG_INVALID). */
function refuseTransforms(mappings: readonly CompiledMapping[], file: string | undefined): void {
  const problems = mappings
    .filter((m) => m.transform)
    .map((m) => `${m.configPath}.transform: transforms are not available here`);
  if (problems.length > 0) throw configInvalid(problems, file);
}

/** The first mapping whose predicates (path, source, headers) all hold. */
export function resolveMapping(
  mappings: readonly CompiledMapping[],
  subPath: string,
  payload: unknown,
  headers: RawHeaders = {},
): CompiledMapping | undefined {
  const source = isPlainObject(payload) && typeof payload.source === 'string' ? payload.source : undefined;
  return mappings.find(
    (m) =>
      (m.matchPath === undefined || m.matchPath === subPath) &&
      (m.matchSource === undefined || m.matchSource === source) &&
      (m.matchHeaders === undefined || m.matchHeaders.every(([name, values]) => headerIn(headers[name], values))),
  );
}

/** The body limit for a sub-path: the largest of `hooks.maxBodyBytes` and its mappings'. */
export function maxBodyBytesFor(mappings: readonly CompiledMapping[], maxBodyBytes: number, subPath: string): number {
  let limit = maxBodyBytes;
  for (const m of mappings) {
    if (m.maxBodyBytes !== undefined && (m.matchPath === undefined || m.matchPath === subPath)) {
      limit = Math.max(limit, m.maxBodyBytes);
    }
  }
  return limit;
}

/** The mappings with `verify` that may take a request on this sub-path. */
export function verifiersFor(mappings: readonly CompiledMapping[], subPath: string): readonly CompiledMapping[] {
  return mappings.filter((m) => m.verify && (m.matchPath === undefined || m.matchPath === subPath));
}

/** Turns a request into validated actions through the first mapping that takes it; throws 400s and TRANSFORM_FAILED. */
async function routeRequest(routing: Routing, received: HookRequest): Promise<MappingOutcome> {
  const request = withoutCredentialHeaders(received, routing.isCredentialHeader);
  const mapping = resolveMapping(routing.mappings, request.subPath, request.payload, request.headers);
  if (!mapping) return { kind: 'none' };
  if (request.verifiedMappings && !request.verifiedMappings.has(mapping.id)) throw hookdError('UNAUTHORIZED');
  // Checked before any template renders or transform runs (docs/presets.md).
  const invalid = mapping.checkPayload?.(request.payload);
  if (invalid) throw hookdError('PAYLOAD_INVALID', invalid);
  let rendered: Awaited<ReturnType<typeof draftsFor>>;
  try {
    rendered = await draftsFor(routing, mapping, request);
  } catch (err) {
    throw ofMapping(err, mapping.id);
  }
  const { drafts, fanOut } = rendered;
  const eventType = rendered.eventType ?? declaredEventType(mapping, request.payload, request.headers);
  const actions = drafts.map((d) => routing.toAction(d, mapping));
  return { kind: 'actions', mappingId: mapping.id, actions, fanOut, eventType };
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

/** True when a request header (one value or several) holds one of `values`. */
function headerIn(value: string | readonly string[] | undefined, values: ReadonlySet<string>): boolean {
  if (value === undefined) return false;
  return typeof value === 'string' ? values.has(value.trim()) : value.some((v) => values.has(v.trim()));
}
