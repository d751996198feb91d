import { type Action, type ActionOptions, parseAgentBody, parseWakeBody } from '../actions/index.js';
import { hookdError } from '../errors.js';
import { classifyContentType, parseBody } from '../ingress/index.js';
import { buildView, type MappingEngine, unresolvedNames } from '../mapping/index.js';

/** A request to dry-run: what `hookd try` and the console's playground pass. */
export interface DryRunRequest {
  readonly subPath: string;
  readonly raw: Buffer;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
}

/** The actions a request would become, and the template names it leaves unresolved. */
export interface DryRunOutcome {
  readonly ok: true;
  readonly mapping: string | null;
  /** The request's event type, as the request log would keep it (docs/mappings.md#event-types). */
  readonly eventType?: string;
  readonly actions: readonly Action[];
  /** `path.field: {{name}}` for each name a template of the mapping reads and this payload lacks. */
  readonly unresolved?: readonly string[];
}

export interface DryRunContext {
  readonly hooksPath: string;
  readonly actionOptions: ActionOptions;
  /** Without it, every name but wake and agent is 404. */
  readonly mappings?: MappingEngine;
}

/**
 * Runs a request through the mapping engine as the gateway would (body parsing, schema,
 * templates, the sandboxed transform) and returns the actions; dispatches and stores nothing.
 * Throws the error a live request would answer with.
 */
export async function dryRun(request: DryRunRequest, context: DryRunContext): Promise<DryRunOutcome> {
  const { subPath, raw, headers, query } = request;
  const kind = classifyContentType(headers['content-type']);
  if (!kind) throw hookdError('UNSUPPORTED_MEDIA_TYPE', { contentType: String(headers['content-type']) });
  const parsed = parseBody(kind, raw);
  if (!parsed.ok) throw parsed.error;
  const { payload } = parsed.body;
  if (subPath === 'wake' || subPath === 'agent') {
    const action = subPath === 'wake' ? parseWakeBody(payload) : parseAgentBody(payload, context.actionOptions);
    return { ok: true, mapping: null, actions: [action] };
  }
  if (!context.mappings) throw hookdError('NO_MAPPING', { hook: subPath });
  const search = new URLSearchParams(query).toString();
  const outcome = await context.mappings.route({
    subPath,
    payload,
    headers,
    query,
    url: `${context.hooksPath}/${subPath}${search ? `?${search}` : ''}`,
    rawBody: raw,
    payloadIsJsonOfRawBody: parsed.body.payloadIsJsonOfRawBody,
  });
  if (outcome.kind === 'none') throw hookdError('NO_MAPPING', { hook: subPath });
  const mapping = context.mappings.mappings.find((m) => m.id === outcome.mappingId);
  const view = buildView({ payload, headers, query, path: subPath });
  const unresolved = (mapping?.templateNames ?? []).flatMap(({ field, names }) =>
    unresolvedNames(names, view).map((name) => `${mapping?.configPath}.${field}: {{${name}}}`),
  );
  return {
    ok: true,
    mapping: outcome.mappingId,
    ...(outcome.eventType === undefined ? {} : { eventType: outcome.eventType }),
    actions: outcome.actions,
    ...(unresolved.length ? { unresolved } : {}),
  };
}
