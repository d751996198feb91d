import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { hookdError } from '../errors.js';
import type { ActivityFeed } from '../runtime/index.js';
import type { ConsoleAuth } from './console-auth.js';

/** A stream whose reader lags this far behind is cut: a slow reader costs a bounded buffer. */
const STREAM_MAX_BUFFERED = 1024 * 1024;
const STREAM_PING_MS = 15_000;
/** Streams open at once, at most: each holds a socket and a subscription to every update. */
const MAX_STREAMS = 16;
/** Streams one console session may hold (a few tabs), so that one holder cannot take them all. */
const STREAMS_PER_SESSION = 4;

export interface LiveStreamOptions {
  readonly activity: ActivityFeed;
  /** Console sessions: a stream opened with one ends at its sign-out or expiry. */
  readonly console?: ConsoleAuth;
}

/** `GET /api/stream`: Server-Sent Events of new requests (`request`) and run updates (`run`). */
export function registerStream(app: FastifyInstance, options: LiveStreamOptions): void {
  const { activity } = options;
  const open = new Set<ServerResponse>();
  const perSession = new Map<string, number>();
  app.addHook('preClose', (done) => {
    for (const res of open) res.end();
    done();
  });
  app.get('/api/stream', async (request: FastifyRequest, reply) => {
    if (open.size >= MAX_STREAMS) throw hookdError('STREAMS_FULL', { max: MAX_STREAMS });
    const session = request.consoleSession;
    const held = session ? (perSession.get(session.tokenHash) ?? 0) : 0;
    if (session && held >= STREAMS_PER_SESSION) throw hookdError('STREAMS_FULL', { max: STREAMS_PER_SESSION });
    const res = reply.raw;
    reply.hijack();
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      connection: 'keep-alive',
      'x-request-id': request.id,
      'x-accel-buffering': 'no',
    });
    res.write(': hookd live log\n\n');
    open.add(res);
    if (session) perSession.set(session.tokenHash, held + 1);
    const write = (chunk: string) => {
      if (res.writableLength > STREAM_MAX_BUFFERED) res.destroy();
      else res.write(chunk);
    };
    const unsubscribe = activity.subscribe((item) => {
      const data = item.kind === 'request' ? item.request : item.run;
      write(`event: ${item.kind}\ndata: ${JSON.stringify(data)}\n\n`);
    });
    // A session's stream ends with the session: at sign-out at once, at expiry by the next ping.
    const stopListening = session && options.console?.onSignOut(session, () => res.end());
    const ping = setInterval(async () => {
      const live = !session || (await options.console?.sessionOf(request).catch(() => undefined));
      if (live) write(': ping\n\n');
      else res.end();
    }, STREAM_PING_MS);
    res.on('close', () => {
      clearInterval(ping);
      unsubscribe();
      stopListening?.();
      open.delete(res);
      if (session) {
        const left = (perSession.get(session.tokenHash) ?? 1) - 1;
        if (left > 0) perSession.set(session.tokenHash, left);
        else perSession.delete(session.tokenHash);
      }
    });
  });
}
