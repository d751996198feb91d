/**
 * The transform process's entry (`hooks.transforms.isolation: "process"`, docs/transforms.md#isolation):
 * it compiles and runs every mapping's transform in its own isolates, as the gateway does inline,
 * and answers the gateway's calls over the IPC channel. Nothing else runs here, so that when V8
 * aborts on an isolate out of memory, or a built-in holds the thread, the gateway goes on and
 * restarts this process. It ends when the gateway goes (the channel closes).
 */
import type { LevelWithSilent } from 'pino';
import { createLogger, type Logger } from '../log.js';
import { createTransformHost, type TransformHost, type TransformHostOptions } from './host.js';
import { type LoopSignal, startingCall } from './loop-signal.js';
import { type FromGateway, type ToGateway, wireError } from './wire.js';

const send = (message: ToGateway) => process.send?.(message);

let host: TransformHost | undefined;
let log: Logger | undefined;

async function start(options: Omit<TransformHostOptions, 'log'>, level: LevelWithSilent): Promise<void> {
  // Every line goes to the gateway, which writes it with its own bindings, redaction and destination.
  log = createLogger({ level, destination: { write: (line: string) => void send({ t: 'log', line }) } });
  try {
    host = await createTransformHost({
      ...options,
      log,
      onBundle: (key, bundle) => send({ t: 'bundle', key, bundle }),
      onLoading: (key, hash) => send({ t: 'loading', key, ...(hash === undefined ? {} : { hash }) }),
    });
    send({ t: 'ready', size: host.size });
  } catch (err) {
    // The gateway kills it at start; on a restart, its end is what makes the gateway try again.
    process.send?.({ t: 'failed', error: wireError(err) } satisfies ToGateway, undefined, undefined, () =>
      process.exit(1),
    );
  }
}

/**
 * Runs a call. Whenever it leaves the event loop (cut at the slice and run again off it, or
 * waiting for an isolate), and when it is back, the gateway is told: while off, it cannot be what
 * holds this thread.
 */
function call({ id, key, context, budgetMs }: Extract<FromGateway, { t: 'call' }>): void {
  if (!host) return void send({ t: 'done', id, error: { message: 'the transform process has not started' } });
  const running = host;
  let off = false;
  const signal: LoopSignal = {
    off: () => {
      if (!off) send({ t: 'off', id });
      off = true;
    },
    on: () => {
      if (off) send({ t: 'on', id });
      off = false;
    },
  };
  startingCall(signal, () => running.run(key, context, budgetMs)).then(
    (value) => send({ t: 'done', id, value }),
    (err: unknown) => send({ t: 'done', id, error: wireError(err) }),
  );
}

process.on('message', (message: FromGateway) => {
  switch (message.t) {
    case 'start':
      void start(message.options, message.level);
      return;
    case 'call':
      // Each call in a turn of its own: one on the loop has sent its answer, or said it left the
      // loop, before the next starts, so that the gateway can tell which call holds this thread
      // when one never ends.
      setImmediate(() => call(message));
      return;
    case 'reload':
      void host?.reload().then(() => send({ t: 'reloaded', id: message.id }));
      return;
    case 'close':
      host?.close();
      process.disconnect?.();
      return;
  }
});
// A terminal's Ctrl-C or a service manager's stop reaches the whole group: the gateway closes this
// process as it shuts down, instead of seeing it end and starting it again.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => undefined);
// A fault of hookd's own in a promise no call awaits is logged; the process, and the calls it runs, go on.
process.on('unhandledRejection', (err) =>
  log?.error(
    { err: err instanceof Error ? err.message : String(err) },
    'a promise in the transform process failed unseen',
  ),
);
// The gateway went (or closed this process): nothing is left to answer.
process.on('disconnect', () => {
  host?.close();
  process.exit(0);
});
