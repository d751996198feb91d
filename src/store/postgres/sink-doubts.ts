import type { Accepted } from '../../actions/index.js';

/**
 * The accepts answered 503 `COMMIT_UNCONFIRMED` (docs/scale.md#failure-behaviour), until the
 * database says what became of them: once a commit works again, those it holds (their first
 * action's row is there) are told as committed; the rest are told as not committed only when
 * no statement of theirs can still be running on the server (`settleMs`, past its
 * `statement_timeout`), checked again then.
 */
export interface Doubts {
  /** An accept whose commit is in doubt. */
  add(requestId: string, accepted: readonly Accepted[]): void;
  /** A commit worked: the database answers, and what is in doubt can be looked for. */
  committed(): void;
  /** Stops the check that waits. */
  stop(): void;
}

/** What became of accepts in doubt, by request id. */
export interface DoubtsResolved {
  readonly committed: readonly string[];
  readonly notCommitted: readonly string[];
  /** Accepts in doubt past the first MAX_DOUBTS: neither looked for nor named. */
  readonly untold: number;
}

export interface DoubtsOptions {
  /** The ids among `ids` whose row is there (events' and runs' ids). */
  readonly find: (ids: readonly string[]) => Promise<ReadonlySet<string>>;
  readonly report: (resolved: DoubtsResolved) => void;
  /** How long after the database answers again a statement of theirs may still commit. */
  readonly settleMs: number;
  /** The clock doubts are dated by (monotonic milliseconds). */
  readonly now?: () => number;
}

/** Accepts kept in doubt at most: a longer outage's are told by count alone. */
const MAX_DOUBTS = 1000;

export function createDoubts(options: DoubtsOptions): Doubts {
  const now = options.now ?? (() => performance.now());
  /** Request ids and when they fell in doubt, by their first action's id. */
  const pending = new Map<string, { readonly requestId: string; readonly at: number }>();
  let untracked = 0;
  let looking = false;
  let settle: NodeJS.Timeout | undefined;

  /** The final look, `ms` from now, unless one is armed. */
  function arm(ms: number): void {
    if (settle) return;
    settle = setTimeout(() => {
      settle = undefined;
      void look(true);
    }, ms);
    settle.unref();
  }

  /** Tells the doubts whose row is there; `final`: also those old enough that none can still commit. */
  async function look(final: boolean): Promise<void> {
    if (looking) {
      if (final) arm(options.settleMs / 10);
      return;
    }
    if (pending.size === 0 && untracked === 0) return;
    looking = true;
    try {
      const found = await options.find([...pending.keys()]);
      const settled = now() - options.settleMs;
      const committed: string[] = [];
      const notCommitted: string[] = [];
      for (const [id, { requestId, at }] of pending) {
        if (found.has(id)) committed.push(requestId);
        else if (final && at <= settled) notCommitted.push(requestId);
        else continue;
        pending.delete(id);
      }
      const untold = final ? untracked : 0;
      if (final) untracked = 0;
      if (committed.length > 0 || notCommitted.length > 0 || untold > 0)
        options.report({ committed, notCommitted, untold });
      // Doubts that fell after the database answered again: each is judged settleMs after its own.
      const youngest = Math.min(...[...pending.values()].map(({ at }) => at));
      if (final && pending.size > 0) arm(Math.max(0, youngest + options.settleMs - now()));
    } catch {
      // Looked for again at the next commit that works (or the armed final look).
    } finally {
      looking = false;
    }
  }

  return {
    add(requestId, accepted) {
      const first = accepted[0];
      if (!first) return;
      if (pending.size >= MAX_DOUBTS) {
        untracked++;
        return;
      }
      pending.set(first.kind === 'wake' ? first.eventId : first.runId, { requestId, at: now() });
    },
    committed() {
      if ((pending.size === 0 && untracked === 0) || settle) return;
      void look(false);
      arm(options.settleMs);
    },
    stop() {
      clearTimeout(settle);
      settle = undefined;
    },
  };
}
