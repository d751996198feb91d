import { hash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { ActionSink, IdempotentAnswer } from '../actions/index.js';
import { hookdError } from '../errors.js';

const KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * A key's scope (the hook's sub-path) or a sender's webhook id as stored: itself when it is 1 to
 * 255 visible ASCII characters, else its digest. Neither is checked like a key the client
 * names, and the store's index takes a few KB at most (PostgreSQL refuses a longer entry).
 */
export const storedKeyOf = (text: string): string => (KEY.test(text) ? text : `sha256:${hash('sha256', text, 'hex')}`);

/** `Idempotency-Key`, else `x-service-idempotency-key`; a key that is not 1 to 255 visible ASCII characters is a 400. */
export function idempotencyKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const raw = headers['idempotency-key'] ?? headers['x-service-idempotency-key'];
  const key = Array.isArray(raw) ? raw[0] : raw;
  if (key === undefined) return undefined;
  if (!KEY.test(key))
    throw hookdError('INVALID_FIELD', { field: 'Idempotency-Key', expected: '1 to 255 visible ASCII characters' });
  return key;
}

/** A request's idempotency key, where it is kept, and whether it is its sender's delivery id. */
export interface RequestKey {
  readonly scope: string;
  readonly key: string;
  readonly deliveryId: boolean;
}

/** The delivery a valid signature named: its id, and the scheme whose check gave it. */
export interface SignedDelivery {
  readonly webhookId: string;
  readonly scheme: string;
}

/**
 * The key a hook request is deduped on (docs/operations.md#idempotency). A delivery id a valid
 * signature gave (GitHub's and GitLab's are not signed, but stand alike) wins over any key the
 * request names, scoped by its scheme, whose senders make ids unique: a captured delivery sent
 * again with an `Idempotency-Key` of its own, to another sub-path, or after its mappings were
 * renamed, is the same delivery. Else the request's own key, scoped by its sub-path. A signed
 * scope holds a space, which no sub-path's scope does (`storedKeyOf`).
 */
export function requestKeyOf(
  headers: IncomingHttpHeaders,
  subPath: string,
  signed: SignedDelivery | undefined,
): RequestKey | undefined {
  if (signed)
    return { scope: `signed ${storedKeyOf(signed.scheme)}`, key: storedKeyOf(signed.webhookId), deliveryId: true };
  const key = idempotencyKeyOf(headers);
  return key === undefined ? undefined : { scope: storedKeyOf(subPath), key, deliveryId: false };
}

export const hashBody = (raw: Buffer): string => hash('sha256', raw, 'hex');

/** Requests whose key is being processed right now (a repeat meanwhile is a conflict; a replay waits). */
export function createInFlightKeys() {
  // Each key held, with whoever waits for it to be let go.
  const keys = new Map<string, (() => void)[]>();
  const idOf = (scope: string, key: string) => `${scope}\u0000${key}`;
  const release = (scope: string, key: string): void => {
    const id = idOf(scope, key);
    const waiting = keys.get(id);
    keys.delete(id);
    for (const wake of waiting ?? []) wake();
  };
  return {
    /**
     * Looks the key up: a remembered answer for the same body is returned for replay; another
     * body, or the key still in flight, is a 409. Otherwise the key is taken until `release`.
     */
    async claim(
      sink: ActionSink,
      scope: string,
      key: string,
      bodyHash: string,
      deliveryId = false,
    ): Promise<IdempotentAnswer | undefined> {
      // Taken before the look-up, which may wait on the store: a second request with the key
      // arriving meanwhile is in flight, not a second accept.
      const id = idOf(scope, key);
      if (keys.has(id)) throw hookdError('IDEMPOTENCY_IN_FLIGHT');
      keys.set(id, []);
      let answer: IdempotentAnswer | undefined;
      try {
        answer = await sink.findAnswer(scope, key);
      } catch (err) {
        release(scope, key);
        throw err;
      }
      if (!answer) return undefined;
      release(scope, key);
      // A sender that reused its own delivery id never sent an Idempotency-Key: not named.
      if (answer.bodyHash !== bodyHash)
        throw hookdError('IDEMPOTENCY_CONFLICT', deliveryId ? { of: 'delivery id' } : undefined);
      return answer;
    },
    release,
    /** Resolves once the key is not held here (at once when it is not). */
    released(scope: string, key: string): Promise<void> {
      const waiting = keys.get(idOf(scope, key));
      if (!waiting) return Promise.resolve();
      return new Promise((resolve) => waiting.push(resolve));
    },
  };
}

export type InFlightKeys = ReturnType<typeof createInFlightKeys>;
