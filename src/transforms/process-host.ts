import { type ChildProcess, fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { HookdError } from '../errors.js';
import type { Logger } from '../log.js';
import type { TransformContext } from '../mapping/index.js';
import type { TransformHost, TransformHostOptions } from './host.js';
import { errorOf, type FromGateway, failed, relay, startMessage, type ToGateway } from './wire.js';

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
/** A mapping whose calls were running when the process ended this many times… */
const STRIKES = 3;
/** …within this window… */
const STRIKE_WINDOW_MS = 10 * 60_000;
/** …has its calls refused for this long (each one kept for replay), so that a payload sent again and again cannot keep every transform down. */
const QUARANTINE_MS = 60_000;
/** Restarts that follow an end within a minute wait longer each time, up to this. */
const MAX_RESTART_DELAY_MS = 5000;

interface Call {
  readonly key: string;
  readonly message: FromGateway;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: HookdError) => void;
  readonly timer: NodeJS.Timeout;
  readonly started: number;
  /** Set once the call went to the process (calls made while it restarts wait). */
  sent: boolean;
}

interface Child {
  readonly process: ChildProcess;
  /** The number of transforms loaded, once the process is ready. */
  readonly ready: Promise<number>;
  /** True from the moment it is ready, until it is stopped: calls go to it. */
  up: boolean;
}

/** The command that starts src/transforms/child.ts: the bundle's entry, or the source through tsx. */
function childCommand(): { module: string; execArgv: string[] } {
  const execArgv = ['--no-node-snapshot'];
  if (!import.meta.url.endsWith('.ts'))
    return { module: fileURLToPath(new URL('./transform-child.js', import.meta.url)), execArgv };
  const tsx = createRequire(import.meta.url).resolve('tsx');
  const loader = pathToFileURL(tsx.replace(/cjs[\\/]index\.cjs$/, 'loader.mjs')).href;
  return { module: fileURLToPath(new URL('./child.ts', import.meta.url)), execArgv: [...execArgv, '--import', loader] };
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
  private readonly start: FromGateway;
  private readonly calls = new Map<number, Call>();
  private readonly reloads = new Map<number, () => void>();
  private readonly strikes = new Map<string, number[]>();
  private readonly quarantined = new Map<string, number>();
  /** When the process ended, over the last minute (restarts wait longer as they come closer). */
  private readonly ends: number[] = [];
  private nextId = 0;
  private closing = false;
  private isStarted = false;
  /** Set when this side stopped the process (a call got no answer): its end is counted as such. */
  private stopped = false;
  private current: Child;

  constructor(private readonly options: TransformHostOptions) {
    this.log = options.log.child({ component: 'transforms' });
    this.timeoutMs = options.config.hooks.transforms.timeoutMs;
    this.start = startMessage(options);
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
    const { module, execArgv } = childCommand();
    const child = fork(module, [], {
      execArgv,
      serialization: 'json',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const ready = new Promise<number>((resolve, reject) => {
      child.on('message', (message: ToGateway) => {
        if (message.t === 'ready') resolve(message.size);
        else if (message.t === 'failed') reject(errorOf(message.error));
        else this.onMessage(message);
      });
      child.once('exit', (code, signal) => {
        const how = signal ?? `exit code ${code}`;
        reject(failed(`the transform process ended (${how}) while it started`));
        this.onExit(child, how);
      });
    });
    // Writing to a process that just ended: its calls are settled when its end is seen.
    child.on('error', (err) => this.log.warn({ err: err.message }, 'the transform process could not be written to'));
    child.send(this.start);
    const made: Child = { process: child, ready, up: false };
    ready.then(
      () => {
        made.up = true;
        // Once ready, it ends with the gateway: it never keeps the gateway's event loop alive.
        child.unref();
        child.channel?.unref();
      },
      () => undefined,
    );
    return made;
  }

  private onMessage(message: ToGateway): void {
    // The line carries its own component: written by the root, not by this host's child logger.
    if (message.t === 'log') {
      relay(this.options.log, message.line);
      return;
    }
    if (message.t === 'reloaded') {
      this.reloads.get(message.id)?.();
      this.reloads.delete(message.id);
      return;
    }
    if (message.t !== 'done') return;
    const call = this.calls.get(message.id);
    if (!call) return;
    this.calls.delete(message.id);
    clearTimeout(call.timer);
    if (message.error) {
      call.reject(errorOf(message.error));
      return;
    }
    this.options.observe?.(call.key, (performance.now() - call.started) / 1000);
    call.resolve(message.value);
  }

  /** The process ended: the calls it ran fail, their mappings take a strike, and a new one starts. */
  private onExit(ended: ChildProcess, how: string): void {
    if (!this.isStarted || ended !== this.current.process || this.closing) return;
    const now = Date.now();
    const running = [...this.calls].filter(([, call]) => call.sent);
    const keys = [...new Set(running.map(([, call]) => call.key))];
    for (const [id, call] of running) {
      this.calls.delete(id);
      clearTimeout(call.timer);
      call.reject(failed(`the transform process ended (${how}) while this call ran; it is being restarted`));
    }
    for (const key of keys) this.strike(key, now);
    this.options.onProcessEnd?.(this.stopped ? 'no answer' : how);
    this.stopped = false;
    this.log.error({ mappings: keys, end: how }, 'the transform process ended; restarting it');
    while (this.ends.length > 0 && (this.ends[0] as number) < now - 60_000) this.ends.shift();
    this.ends.push(now);
    const delay = this.ends.length < 2 ? 0 : Math.min(MAX_RESTART_DELAY_MS, 100 * 2 ** (this.ends.length - 2));
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
      () => this.sendWaiting(),
      (err: HookdError) => {
        if (!this.closing) this.log.error({ err: err.message }, 'the transform process did not start again');
      },
    );
  }

  private strike(key: string, now: number): void {
    const times = (this.strikes.get(key) ?? []).filter((at) => at > now - STRIKE_WINDOW_MS);
    times.push(now);
    this.strikes.set(key, times);
    if (times.length < STRIKES) return;
    this.strikes.delete(key);
    this.quarantined.set(key, now + QUARANTINE_MS);
    this.log.error(
      { mapping: key, strikes: STRIKES, forMs: QUARANTINE_MS },
      "the transform process ended again and again while this mapping's calls ran; its calls are refused for a while",
    );
  }

  private sendWaiting(): void {
    for (const call of this.calls.values()) if (!call.sent) this.send(call);
  }

  private send(call: Call): void {
    // A process that just ended is not written to: the call waits for the next one.
    if (!this.current.process.connected) return;
    call.sent = true;
    this.current.process.send(call.message);
  }

  /** No answer within the limit and its grace: the process is stuck in a built-in, and is stopped. */
  private overdue(id: number, limit: number): void {
    const call = this.calls.get(id);
    if (!call) return;
    this.calls.delete(id);
    if (!call.sent) {
      call.reject(failed('the transform process was restarting and did not take this call in time'));
      return;
    }
    call.reject(failed(`no answer within ${limit} ms; the transform process was stopped and is being restarted`));
    // Calls from now on wait for the next process, not for this one's end to be seen.
    this.current.up = false;
    this.stopped = true;
    this.current.process.kill('SIGKILL');
  }

  run(key: string, context: TransformContext, budgetMs?: number): Promise<unknown> {
    const until = this.quarantined.get(key);
    if (until !== undefined && until > Date.now())
      return Promise.reject(
        failed(
          `the transform process ended ${STRIKES} times while this mapping's calls ran; its calls are refused until ${new Date(until).toISOString()}`,
        ),
      );
    if (this.closing) return Promise.reject(failed('the gateway is closing'));
    // The sandbox parses the raw body itself when the payload is its JSON: no need to copy both.
    const { payload: _payload, ...rest } = context;
    const sent = context.payloadIsJsonOfRawBody ? rest : context;
    const id = ++this.nextId;
    const limit = Math.max(1, Math.min(this.timeoutMs, Math.ceil(budgetMs ?? this.timeoutMs))) + GRACE_MS;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.overdue(id, limit), limit);
      const message: FromGateway = { t: 'call', id, key, context: sent as TransformContext, budgetMs };
      const call: Call = { key, message, resolve, reject, timer, started: performance.now(), sent: false };
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
      this.reloads.set(id, resolve);
      child.send({ t: 'reload', id } satisfies FromGateway);
      child.once('exit', () => resolve());
    });
  }

  close(): void {
    this.closing = true;
    for (const call of this.calls.values()) {
      clearTimeout(call.timer);
      call.reject(failed('the gateway is closing'));
    }
    this.calls.clear();
    const child = this.current.process;
    if (!child.connected) return;
    child.send({ t: 'close' } satisfies FromGateway);
    setTimeout(() => child.kill('SIGKILL'), 2000).unref();
  }
}
