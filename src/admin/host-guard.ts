import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { hookdError } from '../errors.js';

/** A loopback name: `localhost` and its subdomains, 127.0.0.0/8, ::1 (what `server.host` binds to by default). */
const LOOPBACK = /^(?:localhost|[^.]+(?:\.[^.]+)*\.localhost|127(?:\.\d{1,3}){3}|\[?::1\]?)$/i;

/**
 * The name part of a Host header, as it is compared: without its port or a final dot, in lower
 * case, an IPv6 literal with its brackets.
 */
function nameOf(host: string): string {
  const colon = host.startsWith('[') ? host.indexOf(']') + 1 : host.lastIndexOf(':');
  return (colon <= 0 ? host : host.slice(0, colon)).toLowerCase().replace(/\.$/, '');
}

/**
 * The operator's routes' guard against DNS rebinding (docs/security.md#dns-rebinding): on a
 * gateway bound to loopback, a request must name it by a loopback name or by one of
 * `allowedHosts`, else 421 HOST_NOT_ALLOWED. A web page whose name an attacker pointed at
 * 127.0.0.1 sends its own name. Nothing else tells a page from a proxy or tunnel on the same
 * machine (a rebound page is same-origin: it may send any header, `X-Forwarded-For` included),
 * so a name a proxy passes on must be listed. Undefined when the gateway listens beyond loopback
 * and no names are configured.
 */
export function hostGuardOf(
  bound: string,
  allowedHosts: readonly string[],
): ((request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void) | undefined {
  if (!LOOPBACK.test(bound) && allowedHosts.length === 0) return undefined;
  // An entry as a Host names it: an IPv6 address written without its brackets gets them.
  const allowed = new Set(
    allowedHosts.map((name) => nameOf(/:.*:/.test(name) && !name.startsWith('[') ? `[${name}]` : name)),
  );
  return (request, _reply, done) => {
    const { host } = request.headers;
    // No Host at all is HTTP/1.0, which no browser sends.
    if (host === undefined) return done();
    const name = nameOf(host);
    if (LOOPBACK.test(name) || allowed.has(name)) return done();
    done(hookdError('HOST_NOT_ALLOWED', { host: name.slice(0, 100) }));
  };
}
