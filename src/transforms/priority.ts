import { readdirSync } from 'node:fs';
import { access } from 'node:fs/promises';
import { setPriority } from 'node:os';
import type { Logger } from '../log.js';

/**
 * Ingress first on a busy machine too (docs/transforms.md#limits): the threads isolated-vm runs off-loop
 * transform calls on get a lower OS priority, so a transform that spins until its time-out
 * takes CPU from hook answers only where a core would otherwise idle. With a core to spare,
 * nothing changes.
 *
 * isolated-vm neither names its threads nor says which they are. Every thread the gateway
 * itself needs is running once it listens (V8's, libuv's, the checkpointer's; libuv's pool is
 * started here first), and isolated-vm starts its pool and timer threads only for calls off the
 * loop, so the threads that appear later are isolated-vm's. Linux only: elsewhere, and where
 * `/proc` cannot be read, it does nothing.
 */
export interface TransformThreads {
  /** Lowers the priority of the threads started since the gateway was up; answers how many. */
  lowerNew(): number;
  stop(): void;
}

export interface TransformThreadsOptions {
  readonly log: Logger;
  /** Between two looks for new threads (1 s). */
  readonly intervalMs?: number;
}

/**
 * The nice value the threads get: about a tenth of a core's share beside ingress. Measured (A/B,
 * 6 interleaved rounds, 4 clients on a transform spinning 900 ms): `/hooks/agent`'s p99 52 ms
 * at nice 10 against 104 ms without, and 10,161 against 6,567 req/s.
 */
const NICENESS = 10;
/** Where the process's threads are listed. */
const TASK_DIR = '/proc/self/task';

function threadIds(taskDir: string): string[] | undefined {
  try {
    return readdirSync(taskDir);
  } catch {
    return undefined;
  }
}

/** Takes the threads running now as the gateway's own, then lowers every later one. */
export async function watchTransformThreads(options: TransformThreadsOptions): Promise<TransformThreads> {
  const taskDir = TASK_DIR;
  const niceness = NICENESS;
  const log = options.log.child({ component: 'transforms' });
  // libuv starts all its pool threads on the first task: started now, they count as the gateway's.
  await access(taskDir).catch(() => undefined);
  const own = new Set(threadIds(taskDir) ?? []);
  const lowered = new Set<string>();
  let timer: NodeJS.Timeout | undefined;

  function lowerNew(): number {
    const ids = threadIds(taskDir);
    if (!ids) return 0;
    let count = 0;
    for (const id of ids) {
      if (own.has(id) || lowered.has(id)) continue;
      lowered.add(id);
      try {
        setPriority(Number(id), niceness);
        count++;
      } catch {
        // The thread ended in between (isolated-vm's timer threads are short-lived).
      }
    }
    // Forget threads that ended: a later thread may reuse the id.
    if (lowered.size > 64) {
      const live = new Set(ids);
      for (const id of lowered) if (!live.has(id)) lowered.delete(id);
    }
    if (count > 0) log.debug({ threads: count, niceness }, 'transform threads given a lower priority');
    return count;
  }

  if (own.size > 0) {
    timer = setInterval(lowerNew, options.intervalMs ?? 1000);
    timer.unref();
  }
  return {
    lowerNew,
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}
