import type { BackoffBounds } from '../backoff.js';
import type { Logger } from '../log.js';
import { maskerOf } from '../secret-text.js';
import type { MetaStore } from '../store/index.js';
import { createBatchPoster } from './batch-poster.js';
import { createCursorStore } from './cursor-store.js';
import { type MailWatcherStatus, type Progress, type WatchConfig, type WatchState, watchLoop } from './watch-loop.js';

export type { MailWatcherStatus } from './watch-loop.js';

export interface MailWatcherOptions {
  readonly account: string;
  readonly watch: WatchConfig;
  /** The gateway's `/hooks/mail`. */
  readonly hookUrl: string;
  readonly hookToken: string;
  readonly meta: MetaStore;
  readonly log: Logger;
  /** Retry and reconnect back-off bounds (tests shorten them). */
  readonly backoff?: BackoffBounds;
}

/** One mailbox watched over IMAP, its new mail posted to the hook. */
export interface MailWatcher {
  /** Connects and keeps reconnecting until stopped; a second call does nothing. */
  start(): void;
  /** Where the watcher is, for `/api/mail/status` and the stop log line. */
  status(): MailWatcherStatus;
  /** Closes the IMAP connection and resolves once the watcher has wound down. */
  stop(): Promise<void>;
}

/** What the watch loop works on: its cursor store and poster over `options`, stopped by `signal`. */
export function watchStateOf(options: MailWatcherOptions, signal: AbortSignal): WatchState {
  const { watch, account, log } = options;
  const backoff = options.backoff ?? { minMs: 1000, maxMs: 30_000 };
  const status: Progress = { connected: false, delivered: 0 };
  const mask = maskerOf([watch.imap.password, options.hookToken]);
  return {
    watch,
    log,
    backoff,
    signal,
    status,
    mask,
    cursors: createCursorStore({ meta: options.meta, account, mailbox: watch.mailbox, log }),
    poster: createBatchPoster({
      account,
      mailbox: watch.mailbox,
      hookUrl: options.hookUrl,
      hookToken: options.hookToken,
      backoff,
      signal,
      log,
      mask,
      onError: (message) => {
        status.lastError = message;
      },
    }),
  };
}

/**
 * The mail watch flow (docs/mail.md): IMAP IDLE on one mailbox, each new message parsed and
 * posted to `/hooks/mail` in the preset's payload shape. The cursor advances only after a
 * 2xx, and each batch carries an Idempotency-Key, so a restart neither skips nor repeats.
 */
export function createMailWatcher(options: MailWatcherOptions): MailWatcher {
  const { watch, account } = options;
  const log = options.log.child({ component: 'mail-watch', account, mailbox: watch.mailbox });
  const stopper = new AbortController();
  const state = watchStateOf({ ...options, log }, stopper.signal);
  const { status } = state;
  let running: Promise<void> | undefined;

  return {
    start(): void {
      running ??= watchLoop(state);
    },
    status(): MailWatcherStatus {
      return { account, mailbox: watch.mailbox, ...status };
    },
    async stop(): Promise<void> {
      stopper.abort();
      state.wake?.();
      state.client?.close();
      await running;
    },
  };
}
