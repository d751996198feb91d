import { type HookdError, hookdError } from '../errors.js';

/**
 * The bodies being read before anything has authenticated their request: on a path whose
 * mappings verify a signature, a request without the token can only be checked once its body
 * is in memory. This ledger bounds them all at once (bytes) and per client address (count),
 * so that tokenless senders cannot fill the gateway's memory or its connections
 * (docs/security.md#hostile-input).
 */
export interface PendingBodies {
  /** Reserves room for one unverified body of `declaredBytes` (0 when unknown: chunked); why not, else. */
  admit(client: string, declaredBytes: number): PendingBody | PendingRefusal;
  /** Bytes reserved by unverified bodies now. */
  readonly bytes: number;
  /** Client addresses with an unverified body now. */
  readonly clients: number;
}

/** Which bound a body did not fit: the client's count, or the bytes of all. */
export type PendingRefusal = 'client' | 'bytes';

/** One unverified body's reservation. */
export interface PendingBody {
  /** Makes the reservation at least `bytes` (a chunked body as it arrives); false, changing nothing, past the bound. */
  cover(bytes: number): boolean;
  /** Gives the reservation back (idempotent): the body is verified, refused, or its request is gone. */
  release(): void;
}

export interface PendingBodiesOptions {
  /** Bytes of all unverified bodies at once (`hooks.verifiedPaths.maxPendingBytes`). */
  readonly maxBytes: number;
  /** Unverified bodies of one client address at once (`hooks.verifiedPaths.maxPendingPerClient`). */
  readonly maxPerClient: number;
}

/** Creates the ledger; its memory is one map entry per client with a body pending, nothing after. */
export function createPendingBodies(options: PendingBodiesOptions): PendingBodies {
  const { maxBytes, maxPerClient } = options;
  const perClient = new Map<string, number>();
  let bytes = 0;

  return {
    admit(client, declaredBytes) {
      const held = perClient.get(client) ?? 0;
      if (held >= maxPerClient) return 'client';
      if (bytes + declaredBytes > maxBytes) return 'bytes';
      perClient.set(client, held + 1);
      bytes += declaredBytes;
      let reserved = declaredBytes;
      let released = false;
      return {
        cover(total) {
          if (released) return false;
          if (total <= reserved) return true;
          if (bytes + total - reserved > maxBytes) return false;
          bytes += total - reserved;
          reserved = total;
          return true;
        },
        release() {
          if (released) return;
          released = true;
          bytes -= reserved;
          const left = (perClient.get(client) ?? 1) - 1;
          if (left === 0) perClient.delete(client);
          else perClient.set(client, left);
        },
      };
    },
    get bytes() {
      return bytes;
    },
    get clients() {
      return perClient.size;
    },
  };
}

/** The 503 `BUSY` for a body past a bound; it may be retried once the pending bodies' deadline has passed. */
export function busyError(bound: PendingRefusal, bodyTimeoutMs: number): HookdError {
  return hookdError('BUSY', { bound }, { headers: { 'retry-after': String(Math.ceil(bodyTimeoutMs / 1000)) } });
}
