import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Accepted, type ActionOptions, type ActionSink, parseAgentBody, parseWakeBody } from '../actions/index.js';
import type { HooksConfig } from '../config/index.js';
import { type HookdError, hookdError, isHookdError } from '../errors.js';
import type { Logger } from '../log.js';
import type { MappingEngine } from '../mapping/index.js';
import { createTokenMatcher, findToken } from './auth.js';
import { type BodyOutcome, type ParsedBody, readBody } from './body.js';
import { type AuthThrottle, createAuthThrottle } from './throttle.js';

/** What the hook routes need; the HTTP layer sees the runtime only through `sink`. */
export interface HookRoutesOptions {
  readonly hooks: HooksConfig & { readonly token: string };
  readonly sink: ActionSink;
  readonly actionOptions: ActionOptions;
  readonly log: Logger;
  /** Routes `/hooks/<name>`; without it every name but wake and agent is 404. */
  readonly mappings?: MappingEngine;
  /** Defaults to 20 failures per 60 s, then a 60 s lock. */
  readonly throttle?: AuthThrottle;
}

interface HookState {
  subPath: string;
  maxBodyBytes: number;
  /** The raw response, for the body reader's lingering close. */
  res: ServerResponse;
}

declare module 'fastify' {
  interface FastifyRequest {
    hook: HookState | null;
  }
}

const HTTP_METHODS = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'];

/** Registers `POST {hooks.path}/*`: checks in the order of DESIGN §3. */
export async function hookRoutes(app: FastifyInstance, options: HookRoutesOptions): Promise<void> {
  const { hooks, sink, actionOptions } = options;
  const log = options.log.child({ component: 'hooks' });
  const tokenMatches = createTokenMatcher(hooks.token);
  const throttle = options.throttle ?? createAuthThrottle();
  const base = hooks.path;

  app.decorateRequest('hook', null);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (request, payload, done) => {
    const state = request.hook as HookState;
    readBody(request.raw, state.res, payload, state.maxBodyBytes).then(
      (outcome) => done(null, outcome),
      (err: Error) => done(err, undefined),
    );
  });

  const onRequest = async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.method !== 'POST') throw hookdError('METHOD_NOT_ALLOWED', '', { headers: { allow: 'POST' } });
    const presented = findToken(request.headers, request.query);
    if (presented?.source === 'query') {
      if (!hooks.allowQueryToken) throw hookdError('QUERY_TOKEN_DISABLED');
      reply.header('deprecation', 'true');
      log.warn({ reqId: request.id }, 'the ?token= query parameter is deprecated; send Authorization: Bearer instead');
    }
    if (presented === undefined || !tokenMatches(presented.token)) {
      const locked = throttle.lockedForSeconds(request.ip);
      log.warn(
        { reqId: request.id, ip: request.ip, locked: locked > 0 },
        'hook request refused: missing or invalid token',
      );
      if (locked > 0) throw hookdError('TOO_MANY_AUTH_FAILURES', '', { headers: { 'retry-after': String(locked) } });
      throttle.fail(request.ip);
      throw hookdError('UNAUTHORIZED');
    }
    throttle.succeed(request.ip);
    const subPath = subPathOf(request);
    if (subPath === '') throw hookdError('NOT_FOUND', 'a hook name is required, e.g. /wake');
    const builtIn = subPath === 'wake' || subPath === 'agent';
    const maxBodyBytes = builtIn || !options.mappings ? hooks.maxBodyBytes : options.mappings.maxBodyBytesFor(subPath);
    request.hook = { subPath, maxBodyBytes, res: reply.raw };
  };

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const state = request.hook as HookState;
    const body = bodyOf(request.body as BodyOutcome | undefined);
    const context = { requestId: request.id };
    switch (state.subPath) {
      case 'wake': {
        const [accepted] = await sink.accept([parseWakeBody(body.value)], context);
        return reply.code(200).send(responseFor(accepted as Accepted));
      }
      case 'agent': {
        const [accepted] = await sink.accept([parseAgentBody(body.value, actionOptions)], context);
        return reply.code(202).send(responseFor(accepted as Accepted));
      }
      default:
        return mapped(request, reply, state.subPath, body);
    }
  };

  const mapped = async (request: FastifyRequest, reply: FastifyReply, subPath: string, body: ParsedBody) => {
    const outcome = options.mappings
      ? await options.mappings
          .route({
            subPath,
            payload: body.value,
            headers: request.headers,
            query: request.query as Record<string, unknown>,
            url: request.url,
            rawBody: body.raw,
            payloadIsJsonOfRawBody: body.fromJson,
          })
          .catch((err: unknown) => {
            if (isHookdError(err) && err.code === 'TRANSFORM_FAILED') keepFailure(request, subPath, body, err);
            throw err;
          })
      : ({ kind: 'none' } as const);
    if (outcome.kind === 'none') throw hookdError('NO_MAPPING', subPath);
    if (outcome.actions.length === 0) return reply.code(204).send();
    const accepted = await sink.accept(outcome.actions, { requestId: request.id });
    const anyAgent = accepted.some((a) => a.kind === 'agent');
    if (!outcome.fanOut && accepted.length === 1) {
      return reply.code(anyAgent ? 202 : 200).send(responseFor(accepted[0] as Accepted));
    }
    return reply.code(anyAgent ? 202 : 200).send(fanOutResponse(accepted));
  };

  const keepFailure = (request: FastifyRequest, subPath: string, body: ParsedBody, err: HookdError) => {
    sink.recordFailure({
      requestId: request.id,
      subPath,
      url: withoutToken(request.url),
      headers: withoutCredentials(request.headers),
      body: body.raw,
      code: err.code,
      error: err.message,
    });
  };

  for (const url of [base, `${base}/*`]) {
    app.route({ method: HTTP_METHODS, url, onRequest, handler });
  }
}

/** The part of the path after `hooks.path`, slashes trimmed (`/hooks/github/` → `github`). */
function subPathOf(request: FastifyRequest): string {
  const wildcard = (request.params as Record<string, string | undefined>)['*'] ?? '';
  return wildcard.replace(/^\/+|\/+$/g, '');
}

function bodyOf(outcome: BodyOutcome | undefined): ParsedBody {
  if (outcome === undefined) return { value: {}, raw: Buffer.alloc(0), fromJson: false };
  if (!outcome.ok) throw outcome.error;
  return outcome.body;
}

const CREDENTIAL_HEADERS = new Set(['authorization', 'x-service-token', 'cookie', 'proxy-authorization']);

function withoutCredentials(headers: FastifyRequest['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers)) {
    if (value !== undefined && !CREDENTIAL_HEADERS.has(key)) out[key] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function withoutToken(url: string): string {
  const [path, query] = url.split('?', 2) as [string, string | undefined];
  if (query === undefined) return path;
  const params = new URLSearchParams(query);
  params.delete('token');
  const rest = params.toString();
  return rest ? `${path}?${rest}` : path;
}

/** A fan-out's body: arrays of event ids and/or run ids (with their session keys). */
export function fanOutResponse(accepted: readonly Accepted[]): Record<string, unknown> {
  const eventIds: string[] = [];
  const runIds: string[] = [];
  const sessionKeys: string[] = [];
  for (const a of accepted) {
    if (a.kind === 'wake') eventIds.push(a.eventId);
    else {
      runIds.push(a.runId);
      sessionKeys.push(a.sessionKey);
    }
  }
  return {
    ok: true,
    ...(eventIds.length > 0 ? { eventIds } : {}),
    ...(runIds.length > 0 ? { runIds, sessionKeys } : {}),
  };
}

/** The success body of one accepted action (DESIGN §3). */
export function responseFor(accepted: Accepted): Record<string, unknown> {
  return accepted.kind === 'wake'
    ? { ok: true, mode: accepted.mode, eventId: accepted.eventId }
    : { ok: true, runId: accepted.runId, sessionKey: accepted.sessionKey };
}
