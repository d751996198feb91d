/**
 * How a call tells when it leaves its process's event loop and when it is back
 * (docs/transforms.md#isolation). The transform process passes it on to the gateway, which blames
 * a process that stopped answering on the call holding its thread: one that is off the loop
 * (cut at the slice and run again on isolated-vm's thread, or waiting for an isolate) cannot be it.
 */
export interface LoopSignal {
  /** The call no longer runs on the event loop: it waits, or runs on isolated-vm's thread. */
  readonly off: () => void;
  /** The call runs on the event loop again. */
  readonly on: () => void;
}

/** The signal of the call starting now, while `startingCall` runs. */
let starting: LoopSignal | undefined;

/** Runs `start`, which starts one call: `signal` is that call's (its slot takes it as the call starts). */
export function startingCall<T>(signal: LoopSignal, start: () => T): T {
  const outer = starting;
  starting = signal;
  try {
    return start();
  } finally {
    starting = outer;
  }
}

/**
 * The signal of the call starting now, if one was given. Read as a slot's call starts, before its
 * first `await`: the host calls the slot synchronously from `run`.
 */
export const loopSignal = (): LoopSignal | undefined => starting;
