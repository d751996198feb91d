import type { HookdError } from '../errors.js';
import type { TransformContext } from '../mapping/index.js';
import { MAX_IN_FLIGHT, transformBusy } from './pool.js';
import { failed } from './wire.js';

/**
 * The calls a transform process runs, as the gateway keeps them (docs/transforms.md#isolation):
 * each mapping has at most `window` calls in the process at once (its `maxInFlight`), the rest
 * wait here, so that a burst of quick calls is not a queue inside the process that answers late
 * and gets it stopped; a call that gets no answer in time is blamed on the call that holds the
 * process's thread.
 */

/** Past a call's time limit, how long the process may stay silent before it is stopped. */
export const GRACE_MS = 1000;
/** Calls of one mapping waiting for its window, at most; one more is TRANSFORM_BUSY at once. */
export const MAX_WAITING = 1024;

export interface ProcessCall {
  readonly id: number;
  readonly key: string;
  readonly context: TransformContext;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: HookdError) => void;
  timer: NodeJS.Timeout | undefined;
  readonly started: number;
  /** Its time limit, grace included, in ms. */
  readonly limit: number;
  /** When the call's time is up, grace included (`performance.now()`); its wait for its window is not counted. */
  deadline: number;
  /** Since when it waits for its mapping's window (`performance.now()`), while it does. */
  waitingSince: number | undefined;
  /** When it went to the process; undefined while it waits (for its window, or for a restart). */
  sentAt: number | undefined;
  /** The process said it left its event loop (and not that it is back): it cannot be what holds the process's thread. */
  offLoop: boolean;
}

export interface ProcessCallsOptions {
  readonly window: number;
  readonly retryAfterS: number;
  /** Whether a process takes calls now. */
  readonly up: () => boolean;
  /** Sends a call with its budget; false when the process cannot be written to (it just ended). */
  readonly send: (call: ProcessCall, budgetMs: number) => boolean;
  /** Call `call` got no answer in time: `holder` is the call blamed, the process is to be stopped. */
  readonly overdue: (call: ProcessCall, holder: ProcessCall) => void;
  /** Told when a call settled and none is left. */
  readonly settled: () => void;
}

const RESTARTING = 'the transform process was restarting and did not take this call in time';

export class ProcessCalls {
  private readonly calls = new Map<number, ProcessCall>();
  private readonly inProcess = new Map<string, number>();
  private readonly waiting = new Map<string, number>();
  private nextId = 0;

  constructor(private readonly options: ProcessCallsOptions) {}

  get size(): number {
    return this.calls.size;
  }

  /** A new call of mapping `key` within `limit` ms (grace included); sent at once when its window has room. */
  add(key: string, context: TransformContext, limit: number): Promise<unknown> {
    if ((this.waiting.get(key) ?? 0) >= MAX_WAITING) return Promise.reject(this.busy(key));
    const id = ++this.nextId;
    const started = performance.now();
    return new Promise((resolve, reject) => {
      const call: ProcessCall = {
        id,
        key,
        context,
        resolve,
        reject,
        started,
        limit,
        deadline: started + limit,
        timer: undefined,
        waitingSince: undefined,
        sentAt: undefined,
        offLoop: false,
      };
      this.calls.set(id, call);
      this.arm(call);
      if (this.options.up()) this.send(call);
    });
  }

  /** Takes call `id` off the books, and (`next`) sends the next call its window has room for. */
  settle(id: number, next = true): ProcessCall | undefined {
    const call = this.calls.get(id);
    if (!call) return undefined;
    this.calls.delete(id);
    clearTimeout(call.timer);
    if (call.sentAt !== undefined) this.count(this.inProcess, call.key, -1);
    if (call.waitingSince !== undefined) this.count(this.waiting, call.key, -1);
    if (next && call.sentAt !== undefined && this.waiting.has(call.key) && this.options.up()) {
      const waiting = [...this.calls.values()].find((c) => c.key === call.key && c.sentAt === undefined);
      if (waiting) this.send(waiting);
    }
    if (this.calls.size === 0) this.options.settled();
    return call;
  }

  /** The process said call `id` left its event loop (`off`), or is back on it. */
  markOffLoop(id: number, off = true): void {
    const call = this.calls.get(id);
    if (call) call.offLoop = off;
  }

  /** Fails the calls in the process (`sent`) or those waiting with `reason`. */
  fail(sent: boolean, reason: string): void {
    for (const call of [...this.calls.values()].filter((c) => (c.sentAt !== undefined) === sent)) {
      this.settle(call.id);
      call.reject(failed(reason));
    }
  }

  /**
   * Refuses the calls not in the process (waiting for their window, or for a restart): they never
   * ran, and are TRANSFORM_BUSY (503, Retry-After; nothing kept), as an inline host's waiting calls are when it closes.
   */
  refuseWaiting(): void {
    for (const call of [...this.calls.values()].filter((c) => c.sentAt === undefined)) {
      this.settle(call.id);
      call.reject(this.busy(call.key));
    }
  }

  /** The process ended: its calls fail, and those waiting for their window now wait for the next process. */
  ended(reason: string): void {
    this.fail(true, reason);
    for (const call of this.calls.values()) this.stopWaiting(call);
  }

  /** A process is up: the calls waiting go to it, as their windows allow. */
  sendWaiting(): void {
    for (const call of [...this.calls.values()]) if (call.sentAt === undefined) this.send(call);
  }

  /** The keys of the calls in the process. */
  keysInProcess(): string[] {
    return [...this.inProcess.keys()];
  }

  /** Sends a call with what is left of its time, when its window has room; one that waited for a restart gets less. */
  private send(call: ProcessCall): void {
    if (call.sentAt !== undefined) return;
    if ((this.inProcess.get(call.key) ?? 0) >= this.options.window) {
      if (call.waitingSince === undefined) {
        call.waitingSince = performance.now();
        clearTimeout(call.timer);
        this.count(this.waiting, call.key, 1);
      }
      return;
    }
    this.stopWaiting(call);
    const budgetMs = Math.ceil(call.deadline - GRACE_MS - performance.now());
    if (budgetMs < 1) {
      this.settle(call.id);
      call.reject(failed(RESTARTING));
      return;
    }
    if (!this.options.send(call, budgetMs)) return;
    call.sentAt = performance.now();
    this.count(this.inProcess, call.key, 1);
  }

  /** Ends a wait for the window: the time it took is added to the call's deadline. */
  private stopWaiting(call: ProcessCall): void {
    if (call.waitingSince === undefined) return;
    call.deadline += performance.now() - call.waitingSince;
    call.waitingSince = undefined;
    this.count(this.waiting, call.key, -1);
    this.arm(call);
  }

  private arm(call: ProcessCall): void {
    clearTimeout(call.timer);
    call.timer = setTimeout(() => this.onTimer(call.id), Math.max(0, call.deadline - performance.now()));
  }

  /** A call's time is up: one waiting for a restart fails; one in the process got no answer. */
  private onTimer(id: number): void {
    // Calls on the process's loop run one after another, in the order sent, each answered (or
    // said to have left the loop) before the next starts: the oldest one on the loop it has not
    // answered, sent long enough ago, holds its thread (and kept this call's answer from being
    // sent). None: this call is stuck off the loop.
    const now = performance.now();
    const holder = [...this.calls.values()].find(
      (c) => c.sentAt !== undefined && !c.offLoop && now - c.sentAt >= GRACE_MS,
    );
    // The process is about to be stopped: no call of this mapping goes to it in this one's place.
    const call = this.settle(id, false);
    if (!call) return;
    if (call.sentAt === undefined) call.reject(failed(RESTARTING));
    else this.options.overdue(call, holder ?? call);
  }

  /** TRANSFORM_BUSY for a call of mapping `key` that did not start. */
  busy(key: string): HookdError {
    return transformBusy(key, this.options.window, MAX_IN_FLIGHT, this.options.retryAfterS);
  }

  private count(counts: Map<string, number>, key: string, by: number): void {
    const n = (counts.get(key) ?? 0) + by;
    if (n > 0) counts.set(key, n);
    else counts.delete(key);
  }
}
