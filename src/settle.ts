import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Logger } from './log.js';

/**
 * Gives back the memory a burst took, once the gateway is quiet again.
 *
 * V8 keeps the heap a burst grew (200,000 accepted requests, their runs drained: a heap of
 * 100 MB holding 30 MB) and only shrinks it in full collections that nothing triggers while
 * the process idles. It gives back the young generation (up to 32 MB) only in a collection
 * that finds the allocation rate of the last 5 s low, and a collection on the first quiet
 * second still sees the burst in that window. So when the event loop has been quiet for a
 * whole tick, no run is queued and the heap is more than `slackMb` above the smallest heap
 * seen, the settler runs a full collection, then another `spacingMs` later while the loop
 * stays quiet, up to `maxPerQuiet` in all or until the heap is back within the slack; then it
 * waits for the next busy period. A collection takes about 20 ms, and only ever runs on a
 * quiet loop.
 */
export interface MemorySettler {
  /** One check (the timer calls it; tests call it directly). */
  tick(): void;
  start(): void;
  stop(): void;
}

export interface MemorySettlerOptions {
  /** True when no run is queued or executing. */
  readonly idle: () => boolean;
  readonly log: Logger;
  /** Between checks (1 s). */
  readonly intervalMs?: number;
  /** Event-loop utilization under which a tick is quiet (0.05). */
  readonly quietUnder?: number;
  /** Heap growth over the smallest seen that is worth a collection (16 MB). */
  readonly slackMb?: number;
  /** Collections per quiet period, at most (3). */
  readonly maxPerQuiet?: number;
  /** Between two collections of one quiet period, at least (5.5 s: V8 weighs the last 5 s). */
  readonly spacingMs?: number;
  /** A full collection; defaults to V8's, or none when it cannot be had. */
  readonly collect?: () => void;
  /** The heap's size in bytes; defaults to `process.memoryUsage().heapTotal`. */
  readonly heapBytes?: () => number;
  /** Utilization since the previous call; defaults to Node's event-loop utilization. */
  readonly utilization?: () => number;
  /** A clock in milliseconds; defaults to `performance.now`. */
  readonly now?: () => number;
}

/** V8's full collection, taken without exposing `gc` to the gateway's own global scope. */
function v8Collect(): (() => void) | undefined {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as (() => void) | undefined;
    setFlagsFromString('--no-expose-gc');
    return typeof gc === 'function' ? gc : undefined;
  } catch {
    return undefined;
  }
}

function loopUtilization(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const delta = performance.eventLoopUtilization(now, last);
    last = now;
    return delta.utilization;
  };
}

export function createMemorySettler(options: MemorySettlerOptions): MemorySettler {
  const collect = options.collect ?? v8Collect();
  const heapBytes = options.heapBytes ?? (() => process.memoryUsage().heapTotal);
  const utilization = options.utilization ?? loopUtilization();
  const quietUnder = options.quietUnder ?? 0.05;
  const slack = (options.slackMb ?? 16) * 1024 * 1024;
  const maxPerQuiet = options.maxPerQuiet ?? 3;
  const spacingMs = options.spacingMs ?? 5500;
  const now = options.now ?? (() => performance.now());
  const log = options.log.child({ component: 'memory' });
  let smallest = heapBytes();
  let collections = 0;
  let lastAt = 0;
  let busySince = false;
  let timer: NodeJS.Timeout | undefined;

  function tick(): void {
    const quiet = utilization() < quietUnder && options.idle();
    const heap = heapBytes();
    if (!quiet) {
      busySince = true;
      collections = 0;
      return;
    }
    if (heap < smallest) smallest = heap;
    if (!collect || !busySince || heap <= smallest + slack) {
      busySince = false;
      return;
    }
    if (collections > 0 && now() - lastAt < spacingMs) return;
    lastAt = now();
    collect();
    collections++;
    const after = heapBytes();
    log.debug(
      { heapMb: Math.round(heap / 1048576), afterMb: Math.round(after / 1048576) },
      'heap collected after a burst',
    );
    if (collections >= maxPerQuiet) busySince = false;
  }

  /** Every `intervalMs`, but a due follow-up on time (10 ms late: a timer may fire a little early). */
  function schedule(): void {
    const interval = options.intervalMs ?? 1000;
    const delay = busySince && collections > 0 ? Math.max(0, lastAt + spacingMs - now()) + 10 : interval;
    timer = setTimeout(() => {
      tick();
      if (timer) schedule();
    }, delay);
    timer.unref();
  }

  return {
    tick,
    start() {
      if (!timer) schedule();
    },
    stop() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
