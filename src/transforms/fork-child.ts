import { type ChildProcess, fork, type StdioOptions } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Logger } from '../log.js';
import type { Bundle } from './compile.js';
import type { TransformHostOptions } from './host.js';
import { errorOf, failed, startMessage, type ToGateway } from './wire.js';

/**
 * What of the gateway's environment the transform process keeps: where programs and temporary
 * files are, the locale and time zone, esbuild's binary. Nothing else: the gateway's token, a
 * model's key or a database's password are no business of the process that runs users' code,
 * and `NODE_OPTIONS` could open an inspector on it or load code into it. (Defence in depth: the
 * process runs as the gateway's user.) Windows spells some of these in mixed case.
 */
const KEPT = /^(PATH|HOME|TMPDIR|TMP|TEMP|TZ|LANG|LANGUAGE|LC_[A-Z]+|ESBUILD_BINARY_PATH|SYSTEMROOT)$/i;

/** How long a transform process may take to load every transform before it is stopped (and tried again). */
const START_TIMEOUT_MS = 60_000;

/** The gateway's environment, cut to what the transform process needs. */
export function childEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => KEPT.test(name)));
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

/** A transform process as its host holds it. */
export interface Child {
  readonly process: ChildProcess;
  /** The number of transforms loaded, once the process is ready. */
  readonly ready: Promise<number>;
  /** True from the moment it is ready, until it is stopped: calls go to it. */
  up: boolean;
}

/** What a transform process's host is told: every message but `ready` and `failed`, and its end. */
export interface ChildHandlers {
  readonly log: Logger;
  readonly onMessage: (message: ToGateway) => void;
  readonly onExit: (child: ChildProcess, how: string) => void;
}

/**
 * Starts a transform process and tells it what to load (`known`: the last good bundles, for a
 * restart); its messages cross as JSON (cheaper than V8's structured clone for these).
 */
export function startTransformProcess(
  options: TransformHostOptions,
  known: ReadonlyMap<string, Bundle>,
  handlers: ChildHandlers,
): Child {
  const { module, execArgv } = childCommand();
  const child = fork(module, [], { execArgv, env: childEnv(), serialization: 'json', stdio: STDIO });
  const ready = new Promise<number>((resolve, reject) => {
    child.on('message', (message: ToGateway) => {
      if (message.t === 'ready') resolve(message.size);
      else if (message.t === 'failed') {
        // A fault of hookd's own (no code): its message is for the log, not for a sender.
        if ('message' in message.error)
          handlers.log.error({ err: message.error.message }, 'the transform process could not start');
        reject(errorOf(message.error));
      } else handlers.onMessage(message);
    });
    child.once('exit', (code, signal) => {
      const how = signal ?? `exit code ${code}`;
      reject(failed(`the transform process ended (${how}) while it started`));
      handlers.onExit(child, how);
    });
  });
  // Writing to a process that just ended: its calls are settled when its end is seen.
  child.on('error', (err) => handlers.log.warn({ err: err.message }, 'the transform process could not be written to'));
  child.send(startMessage(options, known));
  const made: Child = { process: child, ready, up: false };
  const slow = setTimeout(() => {
    handlers.log.error({ forMs: START_TIMEOUT_MS }, 'the transform process did not start in time; stopping it');
    child.kill('SIGKILL');
  }, START_TIMEOUT_MS).unref();
  ready.finally(() => clearTimeout(slow)).catch(() => undefined);
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

const STDIO: StdioOptions = ['ignore', 'inherit', 'inherit', 'ipc'];
