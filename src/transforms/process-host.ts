import type { ChildProcess } from 'node:child_process';
import type { HookdError } from '../errors.js';
import type { Logger } from '../log.js';
import type { TransformContext } from '../mapping/index.js';
import type { Bundle } from './compile.js';
import { type Child, startTransformProcess } from './fork-child.js';
import type { TransformHost, TransformHostOptions } from './host.js';
import { ProcessEnds } from './process-ends.js';
import { errorOf, type FromGateway, failed, relay, type ToGateway } from './wire.js';

/**
 * Transforms in a process of their own (`hooks.transforms.isolation: "process"`,
 * docs/transforms.md#isolation). isolated-vm keeps a transform from the gateway's memory, not
 * from its fate: V8 aborts the whole process on some out-of-memory patterns, and a few built-ins
 * hold the thread past the time limit. Here the process that aborts or hangs is the transform
 * process: the calls it was running fail (500 `TRANSFORM_FAILED`, kept for replay), it is
 * started again, and the calls that arrive meanwhile wait for it within their time limit.
 */

/** Past a call's time limit, how long the process may stay silent before it is stopped. */
const GRACE_MS = 1000;

interface Call {
  readonly id: number;
  readonly key: string;
  readonly context: TransformContext;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: HookdError) => void;
  readonly timer: NodeJS.Timeout;
  readonly started: number;
  /** When the call's time is up, grace included (`performance.now()`). */
  readonly deadline: number;
  /** Set once the call went to the process (calls made while it restarts wait). */
  sent: boolean;
}

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
  private readonly calls = new Map<number, Call>();
  private readonly reloads = new Map<number, () => void>();
  private readonly ends: ProcessEnds;
  /** Each mapping's last good bundle, as the process reported it: a restarted one starts from these. */
  private readonly bundles = new Map<string, Bundle>();
  private nextId = 0;
  private closing = false;
  /** Set once the process was told to close. */
  private stopping = false;
  private isStarted = false;
  /** The mapping whose call got no answer, when this side stopped the process: the end is blamed on it alone. */
  private stoppedFor: string | undefined;
  private current: Child;

  constructor(private readonly options: TransformHostOptions) {
    this.log = options.log.child({ component: 'transforms' });
    this.ends = new ProcessEnds(this.log);
    this.timeoutMs = options.config.hooks.transforms.timeoutMs;
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
      throw err;
    }
  }

  private spawn(): Child {
    return startTransformProcess(this.options, this.bundles, {
      log: this.log,
      onMessage: (message) => this.onMessage(message),
      onExit: (child, how) => this.onExit(child, how),
    });
  }

  private onMessage(message: ToGateway): void {
    // The line carries its own component: written by the root, not by this host's child logger.
    if (message.t === 'log') relay(this.options.log, message.line);
    else if (message.t === 'bundle') this.keep(message.key, message.bundle);
    else if (message.t === 'reloaded') {
      this.reloads.get(message.id)?.();
      this.reloads.delete(message.id);
    } else if (message.t === 'done') {
      const call = this.settle(message.id);
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

  /** Keeps mapping `key`'s bundle: mappings of one module share one copy. */
  private keep(key: string, bundle: Bundle): void {
    const same = [...this.bundles.values()].find((other) => other.code === bundle.code);
    this.bundles.set(key, same?.mapText === bundle.mapText ? same : bundle);
  }

  /** Takes call `id` off the books (its timer too); when the host is closing, the last one closes the process. */
  private settle(id: number): Call | undefined {
    const call = this.calls.get(id);
    if (!call) return undefined;
    this.calls.delete(id);
    clearTimeout(call.timer);
    if (this.closing && this.calls.size === 0) this.stop();
    return call;
  }

  /** Fails the calls `which` picks with `reason`. */
  private fail(which: (call: Call) => boolean, reason: string): void {
    for (const call of [...this.calls.values()].filter(which)) {
      this.settle(call.id);
      call.reject(failed(reason));
    }
  }

  /** The process ended: the calls it ran fail, the mappings blamed take a strike, and a new one starts. */
  private onExit(ended: ChildProcess, how: string): void {
    if (!this.isStarted || ended !== this.current.process) return;
    this.current.up = false;
    const now = Date.now();
    const running = [...this.calls.values()].filter((call) => call.sent);
    // A call that got no answer is why this side stopped the process; the others ran beside it.
    const blamed = this.stoppedFor === undefined ? [...new Set(running.map((call) => call.key))] : [this.stoppedFor];
    const end = this.stoppedFor === undefined ? how : 'no answer';
    this.stoppedFor = undefined;
    this.fail((call) => call.sent, `the transform process ended (${how}) while this call ran; it is being restarted`);
    // Closed by this side (a config reload, the gateway's end): not an end to count.
    if (this.closing && end !== 'no answer') return;
    this.options.onProcessEnd?.(end);
    if (this.closing) return;
    this.log.error({ mappings: blamed, end }, 'the transform process ended; restarting it');
    for (const key of blamed) this.ends.strike(key, now);
    this.restart(ended, this.ends.restartDelay(now));
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
      () => {
        for (const call of this.calls.values()) if (!call.sent) this.send(call);
      },
      (err: HookdError) => {
        if (this.closing) return;
        this.log.error({ err: err.message }, 'the transform process did not start again');
        // Its end starts another try, after a longer wait: the calls waiting now are not kept waiting for it.
        this.fail(
          (call) => !call.sent,
          'the transform process is being restarted and could not start (the gateway log has why)',
        );
      },
    );
  }

  /** Sends a call with what is left of its time: one that waited for a restart gets less. */
  private send(call: Call): void {
    // A process that just ended is not written to: the call waits for the next one.
    if (!this.current.process.connected) return;
    const { id } = call;
    const budgetMs = Math.ceil(call.deadline - GRACE_MS - performance.now());
    if (budgetMs < 1) {
      this.settle(id);
      call.reject(failed('the transform process was restarting and did not take this call in time'));
      return;
    }
    call.sent = true;
    this.current.process.send({ t: 'call', id, key: call.key, context: call.context, budgetMs } satisfies FromGateway);
  }

  /** No answer within the limit and its grace: the process is stuck in a built-in, and is stopped. */
  private overdue(id: number, limit: number): void {
    const call = this.settle(id);
    if (!call) return;
    if (!call.sent) {
      call.reject(failed('the transform process was restarting and did not take this call in time'));
      return;
    }
    call.reject(failed(`no answer within ${limit} ms; the transform process was stopped and is being restarted`));
    if (!this.current.up) return;
    // Calls from now on wait for the next process, not for this one's end to be seen.
    this.current.up = false;
    // The process takes calls in the order sent: the oldest it has not answered is the one that
    // holds it, whichever call's time ran out first (the map keeps the order calls were made).
    const oldest = [...this.calls.values()].find((other) => other.sent && other.id < call.id) ?? call;
    this.stoppedFor = oldest.key;
    this.current.process.kill('SIGKILL');
  }

  run(key: string, context: TransformContext, budgetMs?: number): Promise<unknown> {
    const refused = this.ends.refusal(key, Date.now());
    if (refused !== undefined) return Promise.reject(failed(refused));
    if (this.closing) return Promise.reject(failed('the gateway is closing'));
    // The sandbox parses the raw body itself when the payload is its JSON: no need to copy both.
    const { payload: _payload, ...rest } = context;
    const sent = (context.payloadIsJsonOfRawBody ? rest : context) as TransformContext;
    const id = ++this.nextId;
    const limit = Math.max(1, Math.min(this.timeoutMs, Math.ceil(budgetMs ?? this.timeoutMs))) + GRACE_MS;
    const started = performance.now();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.overdue(id, limit), limit);
      const call: Call = {
        id,
        key,
        context: sent,
        resolve,
        reject,
        timer,
        started,
        deadline: started + limit,
        sent: false,
      };
      this.calls.set(id, call);
      if (this.current.up) this.send(call);
    });
  }

  async reload(): Promise<void> {
    await this.current.ready.catch(() => undefined);
    const child = this.current.process;
    if (!child.connected) return;
    const id = ++this.nextId;
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
   * No call is taken from now on, and those waiting for a restart fail; those running finish
   * (as an inline host's do when a config reload replaces it), then the process is closed.
   */
  close(): void {
    if (this.closing) return;
    this.closing = true;
    this.fail((call) => !call.sent, 'the gateway is closing');
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
