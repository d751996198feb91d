// A mail watcher's shared state for tests that drive the watch loop's parts directly: an
// in-memory store, a real poster to a hook URL, and the log lines it writes.
import { ImapFlow } from 'imapflow';
import { pino } from 'pino';
import type { WatchConfig, WatchState } from '../../src/mail/watch-loop.js';
import { watchStateOf } from '../../src/mail/watcher.js';
import { createStore, sqliteBackend } from '../../src/store/sqlite/index.js';
import { cleanups, TOKEN } from './mail-watch.js';

export const ACCOUNT = 'me@example.com';

/** A log line as the tests read it. */
export type LogLine = Record<string, unknown> & { level: number; msg: string };

export function watchConfig(imap: { port: number; user: string; password: string }, extra: Partial<WatchConfig> = {}) {
  return {
    imap: { host: '127.0.0.1', port: imap.port, secure: false, user: imap.user, password: imap.password },
    mailbox: 'INBOX',
    includeBody: true,
    maxBodyBytes: 20_000,
    batchSize: 25,
    pollIntervalSeconds: 3600,
    ...extra,
  } satisfies WatchConfig;
}

/** A watcher's state over an in-memory store, posting to `hookUrl`; `lines` gets its log lines. */
export function watchState(
  watch: WatchConfig,
  hookUrl: string,
  lines: LogLine[] = [],
  extra: { maxMessageBytes?: number; stepDeadlineMs?: number } = {},
) {
  const store = createStore({ path: ':memory:', synchronous: 'normal' });
  cleanups.push(() => store.close());
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const stopper = new AbortController();
  cleanups.push(() => stopper.abort());
  const meta = sqliteBackend(store).meta;
  const options = { account: ACCOUNT, watch, hookUrl, hookToken: TOKEN, meta, log, backoff: { minMs: 1, maxMs: 5 } };
  const state: WatchState = { ...watchStateOf(options, stopper.signal), ...extra };
  /** Stops the loop: aborts, wakes the session and closes its connection. */
  const stop = () => {
    stopper.abort();
    state.wake?.();
    state.client?.close();
  };
  return { state, stop, store };
}

/** A logged-in client with INBOX open (after the test's appends), and the cursor of a first run on an empty mailbox. */
export async function openInbox(imap: { port: number; user: string; password: string }, state: WatchState) {
  const client = new ImapFlow({
    host: '127.0.0.1',
    port: imap.port,
    secure: false,
    auth: { user: imap.user, pass: imap.password },
    logger: false,
  });
  await client.connect();
  cleanups.push(() => client.logout().catch(() => client.close()));
  const mailbox = await client.mailboxOpen('INBOX');
  const cursor = await state.cursors.load(String(mailbox.uidValidity), 1);
  return { client, cursor };
}
