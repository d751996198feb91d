import { hash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { ActionSink, IdempotentAnswer } from '../actions/index.js';
import { hookdError } from '../errors.js';

const KEY = /^[\x21-\x7e]{1,255}$/;

/** True when the request names no key of its own: a key found is then the sender's webhook id. */
export function keyIsDeliveryId(headers: IncomingHttpHeaders): boolean {
  return headers['idempotency-key'] === undefined && headers['x-service-idempotency-key'] === undefined;
}

/** `Idempotency-Key`, else `x-service-idempotency-key`, else the sender's webhook id. */
export function idempotencyKeyOf(headers: IncomingHttpHeaders, webhookId: string | undefined): string | undefined {
  const raw = headers['idempotency-key'] ?? headers['x-service-idempotency-key'];
  const key = Array.isArray(raw) ? raw[0] : raw;
  if (key === undefined) return webhookId;
  if (!KEY.test(key))
    throw hookdError('INVALID_FIELD', { field: 'Idempotency-Key', expected: '1 to 255 visible ASCII characters' });
  return key;
}

export const hashBody = (raw: Buffer): string => hash('sha256', raw, 'hex');

/** Requests whose key is being processed right now (a repeat meanwhile is a conflict). */
export function createInFlightKeys() {
  const keys = new Set<string>();
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
      const id = `${scope}\u0000${key}`;
      if (keys.has(id)) throw hookdError('IDEMPOTENCY_IN_FLIGHT');
      keys.add(id);
      let answer: IdempotentAnswer | undefined;
      try {
        answer = await sink.findAnswer(scope, key);
      } catch (err) {
        keys.delete(id);
        throw err;
      }
      if (!answer) return undefined;
      keys.delete(id);
      // A sender that reused its own delivery id never sent an Idempotency-Key: not named.
      if (answer.bodyHash !== bodyHash)
        throw hookdError('IDEMPOTENCY_CONFLICT', deliveryId ? { of: 'delivery id' } : undefined);
      return answer;
    },
    release(scope: string, key: string): void {
      keys.delete(`${scope}\u0000${key}`);
    },
  };
}
