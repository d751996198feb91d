import { performance } from 'node:perf_hooks';

/**
 * Ingress first: while hook requests keep the event loop busy, agent runs start at most every
 * 50 ms, so that accepting (the durable part a sender waits for) keeps the CPU; queued runs catch
 * up when the burst ends. Runs alone never count as pressure: without hook requests in a window,
 * runs start as fast as they can however busy they make the loop (see runtime.ts for figures).
 */
export interface IngressPressure {
  /** Counts one accepted hook request. */
  accepted(): void;
  /** True while hook requests saturate the event loop. */
  readonly high: boolean;
  /** Samples the last window (the timer calls it; tests call it directly). */
  tick(): void;
  start(): void;
  stop(): void;
}

export interface IngressPressureOptions {
  readonly intervalMs?: number;
  /** Event-loop utilization (0-1) over a window with requests that turns pressure on. */
  readonly enterAt?: number;
  /** Utilization under which it turns off again (or a window without requests). */
  readonly leaveAt?: number;
  /** Called when pressure turns off (the run queue starts its waiting runs). */
  readonly onRelease?: () => void;
  /** Utilization since the previous call; defaults to Node's event-loop utilization. */
  readonly utilization?: () => number;
}

/** Creates the ingress-pressure gauge; `start()` samples it every `intervalMs` (100). */
export function createIngressPressure(options: IngressPressureOptions = {}): IngressPressure {
  const enterAt = options.enterAt ?? 0.9;
  const leaveAt = options.leaveAt ?? 0.75;
  let last = performance.eventLoopUtilization();
  const utilization =
    options.utilization ??
    (() => {
      const now = performance.eventLoopUtilization();
      const window = performance.eventLoopUtilization(now, last);
      last = now;
      return window.utilization;
    });
  let requests = 0;
  let high = false;
  let timer: NodeJS.Timeout | undefined;

  const pressure: IngressPressure = {
    accepted() {
      requests++;
    },
    get high() {
      return high;
    },
    tick() {
      const busy = utilization();
      const seen = requests;
      requests = 0;
      if (!high && seen > 0 && busy >= enterAt) high = true;
      else if (high && (seen === 0 || busy < leaveAt)) {
        high = false;
        options.onRelease?.();
      }
    },
    start() {
      timer ??= setInterval(pressure.tick, options.intervalMs ?? 100);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
  return pressure;
}
