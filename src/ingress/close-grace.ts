import type { Socket } from 'node:net';

/**
 * How long a connection answered with a closing 4xx (408, the 400 for bytes that are not HTTP,
 * a CONNECT, a refused body drained or cut off) stays open once its answer is handed to the
 * socket: long enough for the client to read it, and then it is destroyed whether or not the
 * client ever closes its side, so that it no longer holds a slot in `server.maxConnections`
 * (docs/security.md#hostile-input).
 */
export const CLOSE_GRACE_MS = 1_000;

/** An error on a socket being closed: it is destroyed, and nothing more. */
function destroyOnError(this: Socket): void {
  this.destroy();
}

/** Ends `socket` (after `data`, when given) and destroys it CLOSE_GRACE_MS later, whatever the peer does. */
export function closeWithGrace(socket: Socket, data?: string): void {
  // A reset (or any error) from a peer whose connection is being closed ends it now. Unheard, it
  // would end the process: node:http hands a CONNECT's socket over without its own listener.
  if (!socket.listeners('error').includes(destroyOnError)) socket.on('error', destroyOnError);
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  if (data === undefined) socket.end();
  else socket.end(data);
  const timer = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}
