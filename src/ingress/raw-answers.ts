import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { errorBody, type HookdError, hookdError } from '../errors.js';
import { closeWithGrace } from './close-grace.js';

/**
 * Answers written on the raw socket for what never reaches fastify's routes: an `Expect:` it
 * cannot meet, CONNECT, bytes that are not HTTP and a request that ran out of time. Each is JSON
 * with a code and an `x-request-id`, like every other answer (docs/http.md).
 */

/** A complete JSON answer written on a raw socket or response, for what never reaches fastify. */
function rawAnswer(err: HookdError): { status: number; headers: Record<string, string | number>; body: string } {
  const body = JSON.stringify(errorBody(err));
  const headers = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': randomUUID(),
    connection: 'close',
    ...err.headers,
  };
  return { status: err.statusCode, headers, body };
}

/**
 * What node:http answers itself, answered like the rest: an `Expect:` other than
 * `100-continue` (417), and CONNECT (405, which node would otherwise leave unanswered).
 */
export function answerOutsideFastify(server: Server): void {
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const answer = rawAnswer(hookdError('EXPECTATION_FAILED', { expect: String(req.headers.expect).slice(0, 100) }));
    res.writeHead(answer.status, answer.headers).end(answer.body);
  });
  server.on('connect', (_req: IncomingMessage, socket: Socket) => {
    const answer = rawAnswer(hookdError('METHOD_NOT_ALLOWED', undefined, { headers: { allow: 'POST' } }));
    const head = Object.entries(answer.headers).map(([k, v]) => `${k}: ${v}`);
    closeWithGrace(socket, `HTTP/1.1 405 Method Not Allowed\r\n${head.join('\r\n')}\r\n\r\n${answer.body}`);
  });
}

/**
 * The 400 for bytes that are not HTTP. A request before them on the same connection may still
 * be in flight (committed, its answer not yet written): it is answered first, then the 400.
 */
export function answerMalformed(err: NodeJS.ErrnoException, socket: Socket): void {
  const pending = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  // A client that closed its side in the middle of a request's body can never finish it: the
  // request is ended now, not when its time runs out (its body's room is given back with it).
  const endedMidBody = err.code === 'HPE_INVALID_EOF_STATE' && pending && !pending.req.complete;
  if (err.code === 'ECONNRESET' || !socket.writable || endedMidBody) {
    socket.destroy();
    return;
  }
  const timedOut = err.code === 'ERR_HTTP_REQUEST_TIMEOUT';
  const answer = rawAnswer(
    timedOut ? hookdError('REQUEST_TIMEOUT') : hookdError('INVALID_BODY', { problem: 'malformed-request' }),
  );
  const head = Object.entries(answer.headers).map(([k, v]) => `${k}: ${v}`);
  const statusLine = timedOut ? 'HTTP/1.1 408 Request Timeout' : 'HTTP/1.1 400 Bad Request';
  let sent = false;
  const refuse = () => {
    if (sent) return;
    sent = true;
    // Ended, then destroyed a moment later: a client that never closes its side must not keep
    // its slot in `server.maxConnections`.
    closeWithGrace(socket, `${statusLine}\r\n${head.join('\r\n')}\r\n\r\n${answer.body}`);
  };
  // A request still arriving when its time ran out (a trickled body), or whose body broke the
  // framing (a chunk extension without end), has no answer coming: it gets the 408 or 400 now.
  // A request received whole is answered first.
  const stillArriving = pending !== null && pending !== undefined && !pending.req.complete;
  if (!pending || pending.writableFinished || (stillArriving && !pending.headersSent)) {
    refuse();
    return;
  }
  pending.once('finish', refuse);
  pending.once('close', refuse);
  // Bounded like any request: an answer that never comes does not hold the socket.
  setTimeout(() => socket.destroy(), 30_000).unref();
}
