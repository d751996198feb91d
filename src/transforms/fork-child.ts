import { type ChildProcess, fork, type StdioOptions } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Logger } from '../log.js';
import type { Bundle } from './compile.js';
import type { TransformHostOptions } from './host.js';
import { errorOf, failed, startMessage, type ToGateway } from './wire.js';

/**
 * What of the gateway's environment the transform process keeps: where programs and temporary
 * files are, the locale and time zone, Node's own options. Nothing else: the gateway's token, a
 * model's key or a database's password are no business of the process that runs users' code.
 */
const KEPT = /^(PATH|HOME|TMPDIR|TMP|TEMP|TZ|LANG|LANGUAGE|LC_[A-Z]+|NODE_OPTIONS|ESBUILD_BINARY_PATH|SYSTEMROOT)$/;

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
      else if (message.t === 'failed') reject(errorOf(message.error));
      else handlers.onMessage(message);
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
