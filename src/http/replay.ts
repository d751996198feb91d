import type { ActionSink, StoredRequest } from '../actions/index.js';
import { hookdError } from '../errors.js';
import type { MappingEngine } from '../mapping/index.js';
import type { HookOutcomes } from '../runtime/index.js';
import { classifyContentType, type ParsedBody, parseBody } from './body.js';
import { toHookdError } from './errors.js';
import type { HookActions } from './hook-actions.js';
import type { RequestFacts, RequestRecorder } from './request-log.js';
import { type Answer, answerFor } from './responses.js';

export interface ReplayerOptions {
  readonly sink: ActionSink;
  readonly requested: HookActions;
  readonly recorder: RequestRecorder;
  readonly mappings?: MappingEngine;
  /** Told of a replay a mapping answered 2xx: it clears the mapping's alert (docs/operations.md#alerts). */
  readonly outcomes?: HookOutcomes;
}

/** What a replay runs: the stored request's path, URL, headers and whole body. */
interface Replayable {
  readonly subPath: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  readonly mappingId?: string;
}

/**
 * Replays a logged request (docs/runtime.md#request-log-and-replay): the *current* mapping and transform run on its stored
 * body and headers; its signature and idempotency were settled at first receipt and are not
 * checked or counted again. The replay is logged as a new request with `replayOf`, under
 * `replayId`, and answers what a live request would.
 */
export function createReplayer(options: ReplayerOptions) {
  const { sink, requested, recorder, mappings } = options;

  return async function replay(id: string, replayId: string): Promise<Answer> {
    const stored = await sink.findRequest(id);
    if (!stored) throw hookdError('NOT_FOUND', { resource: 'request', id });
    const source = replayable(id, stored);
    if (source.mappingId && mappings && !mappings.mappings.some((m) => m.id === source.mappingId))
      throw hookdError('REPLAY_MAPPING_GONE', { requestId: id, mappingId: source.mappingId });
    const facts: RequestFacts = {
      id: replayId,
      receivedAt: Date.now(),
      startedMs: performance.now(),
      subPath: source.subPath,
      url: source.url,
      headers: source.headers,
      replayOf: id,
    };
    const trail: { mappingId?: string } = {};
    let parsed: ParsedBody | undefined;
    try {
      parsed = parsedBody(source);
      const query = Object.fromEntries(new URLSearchParams(source.url.split('?')[1] ?? ''));
      const request = { id: replayId, headers: source.headers, query, url: source.url };
      // A replay is the operator's: any mapping that verifies signatures may take it.
      const verified = mappings ? new Set(mappings.mappings.map((m) => m.id)) : undefined;
      const withBody = { ...facts, body: parsed };
      const { actions, fanOut } = await requested.actionsFor(request, source.subPath, parsed, verified, trail);
      const record = (accepted: Parameters<typeof answerFor>[0]) =>
        recorder.accepted(withBody, accepted, fanOut, trail);
      const accepted = await sink.accept(actions, { requestId: replayId, record });
      const answer = answerFor(accepted, fanOut);
      if (answer.status < 300) {
        sink.markReplayed(id);
        // A failed replay is not counted: the operator is looking already.
        if (trail.mappingId) options.outcomes?.answered(trail.mappingId, { status: answer.status });
      }
      return answer;
    } catch (err) {
      const e = toHookdError(err);
      const ending = { status: e.statusCode, code: e.code, ...(trail.mappingId ? { mappingId: trail.mappingId } : {}) };
      sink.recordRequest(recorder.record({ ...facts, ...(parsed ? { body: parsed } : {}) }, ending));
      throw e;
    }
  };
}

export type Replayer = ReturnType<typeof createReplayer>;

/** The whole stored request: the kept failure's copy, else the logged body when nothing was cut or masked. */
function replayable(id: string, { record, failure }: StoredRequest): Replayable {
  const mappingId = record?.mappingId ? { mappingId: record.mappingId } : {};
  if (failure) {
    const { subPath, url, headers, body } = failure;
    return { subPath, url, headers, body, ...mappingId };
  }
  if (!record) throw hookdError('NOT_FOUND', { resource: 'request', id });
  if (record.truncated) throw hookdError('REPLAY_BODY_INCOMPLETE', { requestId: id, why: 'truncated' });
  if (record.redacted) throw hookdError('REPLAY_BODY_INCOMPLETE', { requestId: id, why: 'redacted' });
  return { subPath: record.path, url: record.url, headers: record.headers, body: record.body, ...mappingId };
}

/** The body parsed as a live request's would be (a 415 or 400 then is the replay's answer too). */
function parsedBody(source: Replayable): ParsedBody {
  const contentType = source.headers['content-type'];
  const kind = classifyContentType(contentType);
  if (kind === undefined) throw hookdError('UNSUPPORTED_MEDIA_TYPE', { contentType: String(contentType) });
  if (source.body.length === 0) return { payload: {}, rawBody: source.body, payloadIsJsonOfRawBody: false };
  const outcome = parseBody(kind, source.body);
  if (!outcome.ok) throw outcome.error;
  return outcome.body;
}
