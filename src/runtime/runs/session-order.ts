import { MADE_KEY_PREFIX, startsItsSession } from '../../actions/index.js';
import type { PendingRun } from './types.js';

/**
 * Which waiting run of a session may start: runs of one key run in arrival order
 * (docs/runtime.md#agent-runs), whichever lines (mappings, models) they wait in. A key hookd
 * made (`hook:<runId>`) is not kept: its first run is the one it names, and it starts its session.
 */
export interface SessionOrder {
  /** `run` waits, after the runs of its session that wait already. */
  add(run: PendingRun): void;
  /** `run` waits no more (it started, or was taken out). */
  remove(run: PendingRun): void;
  /** Whether no run of `run`'s session waits before it; `waiting(id)`: whether run `id` waits. */
  first(run: PendingRun, waiting: (id: string) => boolean): boolean;
}

export function createSessionOrder(): SessionOrder {
  /** Waiting runs by session, in arrival order, of the keys whose first run is not named by them. */
  const bySession = new Map<string, PendingRun[]>();
  return {
    add(run) {
      if (startsItsSession(run)) return;
      const runs = bySession.get(run.sessionKey);
      if (runs) runs.push(run);
      else bySession.set(run.sessionKey, [run]);
    },
    remove(run) {
      const runs = bySession.get(run.sessionKey);
      const at = runs?.indexOf(run) ?? -1;
      if (!runs || at < 0) return;
      runs.splice(at, 1);
      if (runs.length === 0) bySession.delete(run.sessionKey);
    },
    first(run, waiting) {
      if (startsItsSession(run)) return true;
      // A made key's own run, waiting still, goes before every run that named the key after it.
      const key = run.sessionKey;
      if (key.startsWith(MADE_KEY_PREFIX) && waiting(key.slice(MADE_KEY_PREFIX.length))) return false;
      return (bySession.get(key)?.[0] ?? run) === run;
    },
  };
}
