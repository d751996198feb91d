import type { ChildProcess } from 'node:child_process';
import type { HookdError } from '../errors.js';
import type { Logger } from '../log.js';
import type { TransformContext } from '../mapping/index.js';
import { CarryOver } from './carry-over.js';
import { type Child, startTransformProcess } from './fork-child.js';
import type { TransformHost, TransformHostOptions } from './host.js';
import { retryAfterFor } from './pool.js';
import { GRACE_MS, type ProcessCall, ProcessCalls } from './process-calls.js';
import { ProcessEnds } from './process-ends.js';
import { SET_ASIDE_PROBLEM } from './set-aside.js';
import { errorOf, type FromGateway, failed, relay, type ToGateway } from './wire.js';

/**
 * Transforms in a process of their own (`hooks.transforms.isolation: "process"`,
 * docs/transforms.md#isolation). isolated-vm keeps a transform from the gateway's memory, not
 * from its fate: V8 aborts the whole process on some out-of-memory patterns, and a few built-ins
 * hold the thread past the time limit. Here the process that aborts or hangs is the transform
 * process: the calls it was running fail (500 `TRANSFORM_FAILED`, kept for replay), it is
 * started again, and the calls that arrive meanwhile wait for it within their time limit.
 */

const SET_ASIDE_LOG = `the transform process ended while it loaded these mappings' new code: ${SET_ASIDE_PROBLEM}; they run their last good code`;

/** Compiles every transform in a new process and answers when they are loaded (throws as the inline host does). */
export async function createProcessTransformHost(options: TransformHostOptions): Promise<TransformHost> {
  const host = new TransformProcess(options);
  const size = await host.started();
  return {
    run: (key, context, budgetMs) => host.run(key, context, budgetMs),
    timeoutMs: host.timeoutMs,
    size,
    reload: () => host.reload(),
    close: () => host.close(),
  };
}

/** The transform process, started again whenever it ends, and the calls it runs. */
class TransformProcess {
  readonly timeoutMs: number;
  private readonly log: Logger;
  private readonly calls: ProcessCalls;
  private readonly reloads = new Map<number, () => void>();
  private readonly ends: ProcessEnds;
  /** What a restarted process starts from: the last good bundles, and code set aside. */
  private readonly carried = new CarryOver();
  private nextReload = 0;
  private closing = false;
  /** Set once the process was told to close. */
  private stopping = false;
  private isStarted = false;
  /** The mapping whose call got no answer, when this side stopped the process: the end is blamed on it alone. */
  private stoppedFor: string | undefined;
  /** Why the first process ended while it loaded a mapping's code (its failure says so). */
  private endedAtStart: string | undefined;
  private current: Child;

  constructor(private readonly options: TransformHostOptions) {
    this.log = options.log.child({ component: 'transforms' });
    this.ends = new ProcessEnds(this.log);
    const limits = options.config.hooks.transforms;
    this.timeoutMs = limits.timeoutMs;
    this.calls = new ProcessCalls({
      window: limits.maxInFlight,
      retryAfterS: retryAfterFor(limits.timeoutMs),
      up: () => this.current.up,
      send: (call, budgetMs) => this.send(call, budgetMs),
      overdue: (call, holder) => this.overdue(call, holder),
      settled: () => {
        if (this.closing) this.stop();
      },
    });
    this.current = this.spawn();
  }

  /** The number of transforms, once the first process loaded them; its failure is the host's. */
  async started(): Promise<number> {
    try {
      const size = await this.current.ready;
      this.isStarted = true;
      return size;
    } catch (err) {
      this.closing = true;
      this.current.process.kill('SIGKILL');
      throw this.endedAtStart === undefined ? err : failed(this.endedAtStart);
    }
  }

  private spawn(): Child {
    const options = { ...this.options, setAside: this.carried.setAsideList() };
    return startTransformProcess(options, this.carried.bundles, {
      log: this.log,
      onMessage: (message) => this.onMessage(message),
      onExit: (child, how) => this.onExit(child, how),
    });
  }

  private onMessage(message: ToGateway): void {
    // The line carries its own component: written by the root, not by this host's child logger.
    if (message.t === 'log') relay(this.options.log, message.line);
    else if (message.t === 'bundle') this.carried.keep(message.key, message.bundle);
    else if (message.t === 'loading') this.carried.loads(message.key, message.hash);
    else if (message.t === 'off' || message.t === 'on') this.calls.markOffLoop(message.id, message.t === 'off');
    else if (message.t === 'reloaded') {
      this.reloads.get(message.id)?.();
      this.reloads.delete(message.id);
    } else if (message.t === 'done') {
      const call = this.calls.settle(message.id);
      if (!call) return;
      if (!message.error) {
        this.options.observe?.(call.key, (performance.now() - call.started) / 1000);
        call.resolve(message.value);
        return;
      }
      if ('message' in message.error)
        this.log.error(
          { mapping: call.key, err: message.error.message },
          'a transform call failed in the transform process',
        );
      call.reject(errorOf(message.error));
    }
  }

  /** The process ended: the calls it ran fail, the mappings blamed take a strike, and a new one starts. */
  private onExit(ended: ChildProcess, how: string): void {
    if (ended !== this.current.process) return;
    const loading = this.carried.ended();
    if (loading.length > 0 && !this.isStarted)
      this.endedAtStart = `the transform process ended (${how}) while it loaded the transform of mapping ${loading.join(', ')}`;
    if (!this.isStarted) return;
    this.current.up = false;
    const now = Date.now();
    // A call that got no answer is why this side stopped the process; the others ran beside it.
    // One that ended while loading new code is that code's doing: it is set aside, no call is blamed.
    const blamed =
      loading.length > 0 ? [] : this.stoppedFor === undefined ? this.calls.keysInProcess() : [this.stoppedFor];
    if (loading.length > 0)
      this.log.error({ mappings: loading, modules: loading.map((key) => this.moduleOf(key)), end: how }, SET_ASIDE_LOG);
    const end = this.stoppedFor === undefined ? how : 'no answer';
    this.stoppedFor = undefined;
    this.calls.ended(`the transform process ended (${how}) while this call ran; it is being restarted`);
    // Closed by this side (a config reload, the gateway's end): not an end to count.
    if (this.closing && end !== 'no answer') return;
    this.options.onProcessEnd?.(end);
    if (this.closing) return;
    this.log.error({ mappings: blamed, end }, 'the transform process ended; restarting it');
    for (const key of blamed) this.ends.strike(key, now);
    this.restart(ended, this.ends.restartDelay(now));
  }

  private moduleOf(key: string): string | undefined {
    return this.options.mappings.find((mapping) => mapping.id === key)?.transform?.module;
  }

  private restart(ended: ChildProcess, delay: number): void {
    const next = new Promise<Child>((resolve, reject) =>
      setTimeout(
        () => (this.closing ? reject(failed('the gateway is closing')) : resolve(this.spawn())),
        delay,
      ).unref(),
    );
    const ready = next.then((child) => {
      this.current = child;
      return child.ready;
    });
    this.current = { process: ended, ready, up: false };
    ready.then(
      () => this.calls.sendWaiting(),
      (err: HookdError) => {
        if (this.closing) return;
        this.log.error({ err: err.message }, 'the transform process did not start again');
        // Its end starts another try, after a longer wait: the calls waiting now are not kept waiting for it.
        this.calls.fail(
          false,
          'the transform process is being restarted and could not start (the gateway log has why)',
        );
      },
    );
  }

  /** Writes a call to the process; false when it just ended (the call waits for the next one). */
  private send(call: ProcessCall, budgetMs: number): boolean {
    const child = this.current.process;
    if (!child.connected) return false;
    child.send({ t: 'call', id: call.id, key: call.key, context: call.context, budgetMs } satisfies FromGateway);
    return true;
  }

  /** No answer within the limit and its grace: the process is stuck, and is stopped; `holder` is blamed. */
  private overdue(call: ProcessCall, holder: ProcessCall): void {
    call.reject(failed(`no answer within ${call.limit} ms; the transform process was stopped and is being restarted`));
    if (!this.current.up) return;
    // Calls from now on wait for the next process, not for this one's end to be seen.
    this.current.up = false;
    this.stoppedFor = holder.key;
    this.current.process.kill('SIGKILL');
  }

  run(key: string, context: TransformContext, budgetMs?: number): Promise<unknown> {
    const refused = this.ends.refusal(key, Date.now());
    if (refused !== undefined) return Promise.reject(failed(refused));
    // A call of the mappings being replaced (or of a gateway going): busy, as an inline host's is once closed.
    if (this.closing) return Promise.reject(this.calls.busy(key));
    // The sandbox parses the raw body itself when the payload is its JSON: no need to copy both.
    const { payload: _payload, ...rest } = context;
    const sent = (context.payloadIsJsonOfRawBody ? rest : context) as TransformContext;
    const limit = Math.max(1, Math.min(this.timeoutMs, Math.ceil(budgetMs ?? this.timeoutMs))) + GRACE_MS;
    return this.calls.add(key, sent, limit);
  }

  async reload(): Promise<void> {
    await this.current.ready.catch(() => undefined);
    const child = this.current.process;
    if (!child.connected) return;
    const id = ++this.nextReload;
    await new Promise<void>((resolve) => {
      const ended = () => this.reloads.get(id)?.();
      this.reloads.set(id, () => {
        this.reloads.delete(id);
        child.off('exit', ended);
        resolve();
      });
      child.once('exit', ended);
      child.send({ t: 'reload', id } satisfies FromGateway);
    });
  }

  /**
   * No call is taken from now on, and those waiting (for their window or a restart) are refused
   * TRANSFORM_BUSY, never having run; those running finish (as an inline host's do when a config
   * reload replaces it), then the process is closed.
   */
  close(): void {
    if (this.closing) return;
    this.closing = true;
    this.calls.refuseWaiting();
    if (this.calls.size === 0) this.stop();
  }

  private stop(): void {
    const child = this.current.process;
    if (this.stopping || !child.connected) return;
    this.stopping = true;
    child.send({ t: 'close' } satisfies FromGateway);
    setTimeout(() => child.kill('SIGKILL'), 2000).unref();
  }
}
