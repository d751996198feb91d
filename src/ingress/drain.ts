import type { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { closeWithGrace } from './close-grace.js';

/**
 * After a 413/415 the rest of the body is read and dropped (so that the client reads the
 * answer, not a reset), up to 64 KiB or 2 s (docs/operations.md#limits); then the connection is closed.
 */
const DRAIN_LIMIT_BYTES = 64 * 1024;
const DRAIN_LIMIT_MS = 2_000;
/**
 * Connections lingering on a refused body at once. Past it (a flood of refusals), a refused
 * body is not read at all and its connection closes as soon as the answer is out: draining
 * 64 KiB of each of thousands is what filled the memory, and fragmented it for good.
 */
const MAX_LINGERING = 64;

/**
 * A request refused before its body was read (401, 404, 405, 429): its answer says the
 * connection closes (a refused client keeps none for its next try), and it closes once the
 * answer is out. A body still arriving is read and dropped for the close's grace (close-grace.ts), so that the
 * client reads its answer rather than a reset (docs/security.md#hostile-input).
 */
export function drainRefused(req: IncomingMessage, res: ServerResponse, lingering?: Set<Socket>): void {
  // Only a real connection has a socket to close (app.inject's requests have none).
  if (req.destroyed || !(req.socket instanceof Socket)) return;
  const socket = req.socket;
  res.shouldKeepAlive = false;
  // All of it received (a small body comes with its headers): node closes it after the answer.
  if (req.complete || req.readableEnded) return;
  if (lingering && lingering.size >= MAX_LINGERING) {
    closeUnread(res);
    return;
  }
  // Node ends a connection that closes with destroySoon, which resets one whose body still
  // arrives: this one ends its side and reads (node drops the rest) until the grace is over.
  lingering?.add(socket);
  socket.once('close', () => lingering?.delete(socket));
  socket.destroySoon = () => closeWithGrace(socket);
}

/**
 * Lingering close for a refused body: the rest is read and dropped, and the connection
 * is kept open until the client has sent it all, so that the answer reaches the client
 * instead of a TCP reset.
 */
export function drain(
  req: IncomingMessage,
  res: ServerResponse,
  payload: NodeJS.ReadableStream,
  lingering: Set<Socket> | undefined,
): void {
  if (lingering && lingering.size >= MAX_LINGERING) {
    payload.pause();
    closeUnread(res);
    return;
  }
  const clientAskedToClose = !res.shouldKeepAlive;
  res.shouldKeepAlive = true;
  dropBounded(payload, res, req.socket, lingering, () => {
    if (clientAskedToClose) closeAfter(res, req.socket);
  });
}

/**
 * Reads and drops `payload` for at most 64 KiB or 2 s. Past a bound, reading stops and the
 * answer goes out with a FIN, so that the client can still read it; the socket goes a moment
 * later whatever the client does (close-grace.ts).
 */
function dropBounded(
  payload: NodeJS.ReadableStream,
  res: ServerResponse,
  socket: Socket,
  lingering: Set<Socket> | undefined,
  onEnd: () => void = () => undefined,
): void {
  let dropped = 0;
  let cutOff = false;
  const release = () => lingering?.delete(socket);
  const done = () => {
    clearTimeout(timer);
    if (!cutOff) release();
  };
  const cut = () => {
    clearTimeout(timer);
    // Until it is gone, the socket holds what it had read: it still counts as lingering.
    cutOff = true;
    socket.once('close', release);
    payload.pause();
    res.shouldKeepAlive = false;
    closeAfter(res, socket);
  };
  const timer = setTimeout(cut, DRAIN_LIMIT_MS);
  timer.unref();
  lingering?.add(socket);
  payload.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DRAIN_LIMIT_BYTES) cut();
  });
  payload.on('end', () => {
    done();
    onEnd();
  });
  payload.on('error', done);
  payload.on('close', done);
  payload.resume();
}

/**
 * Ends the connection once the answer is out, and destroys it a moment later: a client that
 * never closes its side does not keep its slot in `server.maxConnections`.
 */
function closeAfter(res: ServerResponse, socket: Socket): void {
  const close = () => closeWithGrace(socket);
  if (res.writableFinished) close();
  else res.once('finish', close);
}

/**
 * A refused body left unread (503 `BUSY`, or any refusal while MAX_LINGERING connections
 * linger): the connection closes as soon as the answer is out (docs/security.md#hostile-input).
 */
export function closeUnread(res: ServerResponse): void {
  res.shouldKeepAlive = false;
  // Without this, node would read on (and drop) what arrives until its own close, a moment later.
  const socket = res.socket;
  res.once('finish', () => {
    if (socket?.writableLength === 0) socket.destroy();
  });
}
