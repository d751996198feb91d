/** A committed run waiting for its turn. */
export interface PendingRun {
  readonly id: string;
  readonly sessionKey: string;
  readonly mappingId?: string;
}

/**
 * Which waiting run may start: the oldest whose session key has no run executing and whose
 * mapping is under its `maxConcurrent`. Runs of one session key so keep their arrival order.
 */
export interface RunScheduler {
  add(run: PendingRun): void;
  /** Takes the oldest run that may start now and marks its session and mapping busy. */
  take(): PendingRun | undefined;
  /** Takes a waiting run out without starting it; false when it is not waiting. */
  remove(id: string): boolean;
  /** Frees the session and mapping of a run that ended. */
  release(run: PendingRun): void;
  /** Runs added and not yet taken. */
  readonly waiting: number;
}

/** Creates the scheduler; `mappingLimits` caps runs executing at once per mapping id. */
export function createRunScheduler(mappingLimits: ReadonlyMap<string, number> = new Map()): RunScheduler {
  // A queue read from `head`: the run taken is almost always the oldest, and shifting an array
  // of 20,000 waiting runs cost about 40 µs per run.
  let pending: PendingRun[] = [];
  let head = 0;
  const busySessions = new Set<string>();
  const busyMappings = new Map<string, number>();
  const mappingFull = (id: string | undefined) =>
    id !== undefined && (busyMappings.get(id) ?? 0) >= (mappingLimits.get(id) ?? Number.POSITIVE_INFINITY);

  return {
    add(run) {
      pending.push(run);
    },
    take() {
      let at = head;
      while (at < pending.length) {
        const candidate = pending[at] as PendingRun;
        if (!busySessions.has(candidate.sessionKey) && !mappingFull(candidate.mappingId)) break;
        at++;
      }
      if (at === pending.length) return undefined;
      const run = pending[at] as PendingRun;
      if (at === head) head++;
      else pending.splice(at, 1);
      if (head > 1024 && head * 2 > pending.length) {
        pending = pending.slice(head);
        head = 0;
      }
      busySessions.add(run.sessionKey);
      if (run.mappingId !== undefined) busyMappings.set(run.mappingId, (busyMappings.get(run.mappingId) ?? 0) + 1);
      return run;
    },
    remove(id) {
      const at = pending.findIndex((run, i) => i >= head && run.id === id);
      if (at < 0) return false;
      if (at === head) head++;
      else pending.splice(at, 1);
      return true;
    },
    release(run) {
      busySessions.delete(run.sessionKey);
      if (run.mappingId !== undefined) busyMappings.set(run.mappingId, (busyMappings.get(run.mappingId) ?? 1) - 1);
    },
    get waiting() {
      return pending.length - head;
    },
  };
}
