/**
 * Auth-failure throttling per client address (docs/security.md#throttling). A success erases nothing: failures
 * age out with their window, so one correct request cannot reset an attacker's count.
 */
export interface AuthThrottle {
  /** Seconds until `client` may try again, or 0 when it is not locked. */
  lockedForSeconds(client: string): number;
  /** Counts a failure; the one that reaches the limit starts the lock. */
  fail(client: string): void;
  readonly size: number;
}

export interface AuthThrottleOptions {
  maxFailures?: number;
  windowMs?: number;
  lockMs?: number;
  /** Clients remembered at once; the oldest is forgotten first (bounded memory). */
  maxEntries?: number;
  now?: () => number;
}

interface Entry {
  windowStart: number;
  failures: number;
  lockedUntil: number;
}

/** 20 failures within 60 s lock a client for 60 s; at most 10,000 clients are tracked. */
export function createAuthThrottle(options: AuthThrottleOptions = {}): AuthThrottle {
  const maxFailures = options.maxFailures ?? 20;
  const windowMs = options.windowMs ?? 60_000;
  const lockMs = options.lockMs ?? 60_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  // A Map keeps insertion order: re-inserting on each failure makes the first key the stalest.
  const entries = new Map<string, Entry>();

  const secondsLeft = (entry: Entry | undefined, at: number) =>
    entry && entry.lockedUntil > at ? Math.ceil((entry.lockedUntil - at) / 1000) : 0;

  return {
    lockedForSeconds(client) {
      return secondsLeft(entries.get(client), now());
    },
    fail(client) {
      const at = now();
      let entry = entries.get(client);
      if (!entry || (at - entry.windowStart >= windowMs && entry.lockedUntil <= at)) {
        entry = { windowStart: at, failures: 0, lockedUntil: 0 };
      }
      entry.failures++;
      if (entry.failures >= maxFailures && entry.lockedUntil <= at) entry.lockedUntil = at + lockMs;
      entries.delete(client);
      entries.set(client, entry);
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value as string);
    },
    get size() {
      return entries.size;
    },
  };
}
