import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  type Accepted,
  type Action,
  type ActionOptions,
  type ActionSink,
  parseAgentBody,
  parseWakeBody,
} from '../actions/index.js';
import type { HooksConfig } from '../config/index.js';
import { type HookdError, hookdError, isHookdError } from '../errors.js';
import { CREDENTIAL_HEADERS, flattenHeaders } from '../headers.js';
import type { Logger } from '../log.js';
import type { CompiledMapping, MappingEngine } from '../mapping/index.js';
import { createTokenMatcher, findToken } from './auth.js';
import { type BodyOutcome, type ParsedBody, readBody } from './body.js';
import { createInFlightKeys, hashBody, idempotencyKeyOf } from './idempotency.js';
import { type Answer, answerFor } from './responses.js';
import { type VerifyConfig, verifySignature } from './signatures.js';
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
  /** Set when the token was missing or wrong: a signature of one of these must hold. */
  verifiers: readonly CompiledMapping[];
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
  // Connections draining a refused body are cut when the gateway closes: a client that
  // stopped sending after its 413 would otherwise hold the close up to the drain limit.
  const lingering = new Set<Socket>();
  app.addHook('preClose', (done) => {
    for (const socket of lingering) socket.destroy();
    lingering.clear();
    done();
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (request, payload, done) => {
    const state = request.hook as HookState;
    readBody(request.raw, state.res, payload, state.maxBodyBytes, lingering).then(
      (outcome) => done(null, outcome),
      (err: Error) => done(err, undefined),
    );
  });

  const inFlight = createInFlightKeys();

  const refuse = (request: FastifyRequest, why: string) => {
    const locked = throttle.lockedForSeconds(request.ip);
    log.warn({ reqId: request.id, ip: request.ip, locked: locked > 0 }, `hook request refused: ${why}`);
    if (locked > 0)
      return hookdError('TOO_MANY_AUTH_FAILURES', undefined, { headers: { 'retry-after': String(locked) } });
    throttle.fail(request.ip);
    return hookdError('UNAUTHORIZED');
  };

  const onRequest = async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.method !== 'POST') throw hookdError('METHOD_NOT_ALLOWED', undefined, { headers: { allow: 'POST' } });
    const presented = findToken(request.headers, request.query);
    if (presented?.source === 'query') {
      if (!hooks.allowQueryToken) throw hookdError('QUERY_TOKEN_DISABLED');
      reply.header('deprecation', 'true');
      log.warn({ reqId: request.id }, 'the ?token= query parameter is deprecated; send Authorization: Bearer instead');
    }
    const subPath = subPathOf(request);
    const builtIn = subPath === 'wake' || subPath === 'agent';
    let verifiers: readonly CompiledMapping[] = [];
    if (presented !== undefined && tokenMatches(presented.token)) throttle.succeed(request.ip);
    else {
      // Mappings with `verify` accept a valid signature instead: checked once the body is read.
      verifiers = subPath && !builtIn && options.mappings ? options.mappings.verifiersFor(subPath) : [];
      if (verifiers.length === 0 || throttle.lockedForSeconds(request.ip) > 0)
        throw refuse(request, 'missing or invalid token');
    }
    if (subPath === '') throw hookdError('NOT_FOUND', { resource: 'hook name', hint: `e.g. ${hooks.path}/wake` });
    const maxBodyBytes = builtIn || !options.mappings ? hooks.maxBodyBytes : options.mappings.maxBodyBytesFor(subPath);
    request.hook = { subPath, maxBodyBytes, res: reply.raw, verifiers };
  };

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const state = request.hook as HookState;
    const body = bodyOf(request.body as BodyOutcome | undefined);
    let verified: { mappings: ReadonlySet<string>; webhookId?: string } | undefined;
    if (state.verifiers.length > 0) {
      verified = verifyWebhook(state.verifiers, request, body);
      if (!verified) throw refuse(request, 'missing or invalid signature');
      throttle.succeed(request.ip);
      const challenge = slackChallenge(state.verifiers, verified.mappings, body.payload);
      if (challenge !== undefined) return reply.code(200).send({ challenge });
    }
    const key = idempotencyKeyOf(request.headers, verified?.webhookId);
    if (key === undefined) return send(reply, await handle(request, state, body, verified, undefined));
    const bodyHash = hashBody(body.rawBody);
    const remembered = inFlight.claim(sink, state.subPath, key, bodyHash);
    if (remembered) {
      reply.header('idempotent-replayed', 'true');
      return send(reply, { status: remembered.status, body: remembered.body as Answer['body'] });
    }
    try {
      return send(reply, await handle(request, state, body, verified, { scope: state.subPath, key, bodyHash }));
    } finally {
      inFlight.release(state.subPath, key);
    }
  };

  const handle = async (
    request: FastifyRequest,
    state: HookState,
    body: ParsedBody,
    verified: { mappings: ReadonlySet<string> } | undefined,
    idempotent: { scope: string; key: string; bodyHash: string } | undefined,
  ): Promise<Answer> => {
    let actions: readonly Action[];
    let fanOut = false;
    if (state.subPath === 'wake') actions = [parseWakeBody(body.payload)];
    else if (state.subPath === 'agent') actions = [parseAgentBody(body.payload, actionOptions)];
    else {
      const outcome = await route(request, state.subPath, body, verified?.mappings);
      actions = outcome.actions;
      fanOut = outcome.fanOut;
    }
    if (actions.length === 0 && !idempotent) return { status: 204, body: null };
    const respond = (accepted: readonly Accepted[]) => answerFor(accepted, fanOut);
    const accepted = await sink.accept(actions, {
      requestId: request.id,
      ...(idempotent ? { idempotency: { ...idempotent, respond } } : {}),
    });
    return respond(accepted);
  };

  const route = async (
    request: FastifyRequest,
    subPath: string,
    body: ParsedBody,
    verifiedMappings?: ReadonlySet<string>,
  ) => {
    const outcome = options.mappings
      ? await options.mappings
          .route({
            subPath,
            ...body,
            // Templates and transforms never see the credentials: no token header, no ?token=.
            headers: withoutCredentials(request.headers),
            query: queryWithoutToken(request.query),
            url: withoutToken(request.url),
            ...(verifiedMappings ? { verifiedMappings } : {}),
          })
          .catch((err: unknown) => {
            if (isHookdError(err) && err.code === 'TRANSFORM_FAILED') keepFailure(request, subPath, body, err);
            throw err;
          })
      : ({ kind: 'none' } as const);
    if (outcome.kind === 'none') throw hookdError('NO_MAPPING', { hook: subPath });
    return outcome;
  };

  const keepFailure = (request: FastifyRequest, subPath: string, body: ParsedBody, err: HookdError) => {
    sink.recordFailure({
      requestId: request.id,
      subPath,
      url: withoutToken(request.url),
      headers: withoutCredentials(request.headers),
      body: body.rawBody,
      code: err.code,
      error: err.message,
    });
  };

  for (const url of [base, `${base}/*`]) {
    app.route({ method: HTTP_METHODS, url, onRequest, handler });
  }
}

function send(reply: FastifyReply, answer: Answer) {
  return answer.body === null ? reply.code(answer.status).send() : reply.code(answer.status).send(answer.body);
}

/** The mappings whose signature holds, and the sender's webhook id; undefined when none does. */
function verifyWebhook(verifiers: readonly CompiledMapping[], request: FastifyRequest, body: ParsedBody) {
  const mappings = new Set<string>();
  let webhookId: string | undefined;
  for (const mapping of verifiers) {
    const result = verifySignature(mapping.verify as VerifyConfig, request.headers, body.rawBody);
    if (!result.ok) continue;
    mappings.add(mapping.id);
    webhookId ??= result.webhookId;
  }
  if (mappings.size === 0) return undefined;
  return { mappings, ...(webhookId ? { webhookId } : {}) };
}

/** Slack's `url_verification` handshake: answered with its challenge once the signature holds. */
function slackChallenge(
  verifiers: readonly CompiledMapping[],
  verified: ReadonlySet<string>,
  payload: unknown,
): string | undefined {
  const bySlack = verifiers.some((m) => verified.has(m.id) && m.verify?.scheme === 'slack');
  const p = payload as { type?: unknown; challenge?: unknown } | null;
  return bySlack && p?.type === 'url_verification' && typeof p.challenge === 'string' ? p.challenge : undefined;
}

/** The part of the path after `hooks.path`, slashes trimmed (`/hooks/github/` → `github`). */
function subPathOf(request: FastifyRequest): string {
  const wildcard = (request.params as Record<string, string | undefined>)['*'] ?? '';
  return wildcard.replace(/^\/+|\/+$/g, '');
}

function bodyOf(outcome: BodyOutcome | undefined): ParsedBody {
  if (outcome === undefined) return { payload: {}, rawBody: Buffer.alloc(0), payloadIsJsonOfRawBody: false };
  if (!outcome.ok) throw outcome.error;
  return outcome.body;
}

function withoutCredentials(headers: FastifyRequest['headers']): Record<string, string> {
  return flattenHeaders(headers, CREDENTIAL_HEADERS);
}

function queryWithoutToken(query: unknown): Record<string, unknown> {
  const { token: _token, ...rest } = (query ?? {}) as Record<string, unknown>;
  return rest;
}

function withoutToken(url: string): string {
  const [path, query] = url.split('?', 2) as [string, string | undefined];
  if (query === undefined) return path;
  const params = new URLSearchParams(query);
  params.delete('token');
  const rest = params.toString();
  return rest ? `${path}?${rest}` : path;
}
