import type { Server, Socket } from 'node:net';
import type { Logger } from '../log.js';

/** Refusals are told at most once a minute: a flood of them is one line. */
const WARN_EVERY_MS = 60_000;

/**
 * Whose share of `server.maxConnections` a connection takes: its address, an IPv4 address
 * mapped into IPv6 as itself, and an IPv6 address by its /64 (what one host is given).
 */
export function clientKeyOf(address: string): string {
  const bare = address.split('%')[0] as string;
  if (bare.startsWith('::ffff:') && bare.includes('.')) return bare.slice('::ffff:'.length);
  if (!bare.includes(':')) return bare;
  const [head = '', tail = ''] = bare.split('::');
  const front = head === '' ? [] : head.split(':');
  const back = tail === '' ? [] : tail.split(':');
  const groups = bare.includes('::')
    ? [...front, ...Array<string>(8 - front.length - back.length).fill('0'), ...back]
    : front;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/**
 * Refuses, at accept, a connection past `max` open ones from the same client (`clientKeyOf`):
 * one address holding idle connections cannot take every slot of `server.maxConnections`
 * (docs/security.md#hostile-input). Behind a trusted proxy the proxy is the only client the
 * socket shows, so it is not applied there. Refusals are logged at warn, once a minute at most.
 */
export function limitConnectionsPerClient(server: Server, max: number, log: Logger): void {
  const open = new Map<string, number>();
  let refused = 0;
  let toldAt = Number.NEGATIVE_INFINITY;
  const refuse = (socket: Socket, client: string) => {
    socket.destroy();
    refused++;
    const now = performance.now();
    if (now - toldAt < WARN_EVERY_MS) return;
    log.warn(
      { client, refused, maxConnectionsPerClient: max },
      'refused connections past server.maxConnectionsPerClient',
    );
    toldAt = now;
    refused = 0;
  };
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined) return;
    const key = clientKeyOf(address);
    const count = open.get(key) ?? 0;
    if (count >= max) {
      refuse(socket, key);
      return;
    }
    open.set(key, count + 1);
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left === 0) open.delete(key);
      else open.set(key, left);
    });
  });
}
