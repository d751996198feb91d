import { setTimeout as sleep } from 'node:timers/promises';
import { ImapFlow } from 'imapflow';
import { type BackoffBounds, backoffMs } from '../backoff.js';
import type { MailConfig } from '../config/index.js';
import type { Logger } from '../log.js';
import type { MetaStore } from '../store/index.js';
import { createBatchPoster } from './batch-poster.js';
import { type Cursor, chunksOf, createCursorStore } from './cursor-store.js';
import { type MailMessage, toMailMessage } from './message.js';

type WatchConfig = NonNullable<MailConfig['watch']>;

/** What `/api/mail/status` shows: the mailbox, the connection and the cursor. */
export interface MailWatcherStatus {
  readonly account: string;
  readonly mailbox: string;
  readonly connected: boolean;
  readonly uidValidity?: string;
  readonly lastUid?: number;
  readonly delivered: number;
  readonly lastError?: string;
}

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

/** The changing part of the status, written by the session and the poster. */
type Progress = Omit<{ -readonly [K in keyof MailWatcherStatus]: MailWatcherStatus[K] }, 'account' | 'mailbox'>;

/** One mailbox watched over IMAP, its new mail posted to the hook. */
export interface MailWatcher {
  /** Connects and keeps reconnecting until stopped; a second call does nothing. */
  start(): void;
  /** Where the watcher is, for `/api/mail/status` and the stop log line. */
  status(): MailWatcherStatus;
  /** Closes the IMAP connection and resolves once the watcher has wound down. */
  stop(): Promise<void>;
}

/** An IMAP client for the configured server (not yet connected). */
function openImap(imap: WatchConfig['imap']): ImapFlow {
  return new ImapFlow({
    host: imap.host,
    port: imap.port ?? (imap.secure === false ? 143 : 993),
    secure: imap.secure ?? true,
    auth: { user: imap.user, pass: imap.password },
    logger: false,
    emitLogs: false,
  });
}

/**
 * Fetches and parses the messages of one batch, in UID order; skips those not newer than
 * `cursor.since`. `newest` is the latest internal date seen, skipped messages included.
 */
async function fetchBatch(
  imap: ImapFlow,
  uids: readonly number[],
  cursor: Cursor,
  watch: WatchConfig,
): Promise<{ messages: MailMessage[]; newest: number }> {
  const messages: MailMessage[] = [];
  let newest = cursor.lastDate;
  const query = { uid: true, source: true, flags: true, internalDate: true } as const;
  for await (const msg of imap.fetch(uids.join(','), query, { uid: true })) {
    const date = msg.internalDate ? new Date(msg.internalDate).getTime() : Date.now();
    newest = Math.max(newest, date);
    if (cursor.since !== undefined && date <= cursor.since) continue;
    if (!msg.source) continue;
    messages.push(
      await toMailMessage(msg.source, {
        uid: msg.uid,
        uidValidity: cursor.uidValidity,
        mailbox: watch.mailbox,
        flags: [...(msg.flags ?? [])].sort(),
        includeBody: watch.includeBody,
        maxBodyBytes: watch.maxBodyBytes,
      }),
    );
  }
  messages.sort((a, b) => Number(a.id.split('-')[1]) - Number(b.id.split('-')[1]));
  return { messages, newest };
}

/**
 * The mail watch flow (docs/mail.md): IMAP IDLE on one mailbox, each new message parsed and
 * posted to `/hooks/mail` in the preset's payload shape. The cursor advances only after a
 * 2xx, and each batch carries an Idempotency-Key, so a restart neither skips nor repeats.
 */
export function createMailWatcher(options: MailWatcherOptions): MailWatcher {
  const { watch, account } = options;
  const log = options.log.child({ component: 'mail-watch', account, mailbox: watch.mailbox });
  const backoff = options.backoff ?? { minMs: 1000, maxMs: 30_000 };
  const stopper = new AbortController();
  let client: ImapFlow | undefined;
  let wake: (() => void) | undefined;
  let running: Promise<void> | undefined;
  const status: Progress = { connected: false, delivered: 0 };
  const cursors = createCursorStore({ meta: options.meta, account, mailbox: watch.mailbox, log });
  const poster = createBatchPoster({
    account,
    mailbox: watch.mailbox,
    hookUrl: options.hookUrl,
    hookToken: options.hookToken,
    backoff,
    signal: stopper.signal,
    log,
    onError: (message) => {
      status.lastError = message;
    },
  });

  const pause = (ms: number) => sleep(ms, undefined, { signal: stopper.signal }).catch(() => undefined);

  async function drain(imap: ImapFlow, cursor: Cursor): Promise<void> {
    const found = await imap.search({ uid: `${cursor.lastUid + 1}:*` }, { uid: true });
    const uids = (found || []).filter((uid) => uid > cursor.lastUid).sort((a, b) => a - b);
    for (const chunk of chunksOf(uids, cursor.pending, watch.batchSize)) {
      if (stopper.signal.aborted) return;
      const batch = { firstUid: chunk[0] as number, lastUid: chunk[chunk.length - 1] as number };
      await cursors.markPending(cursor, batch);
      const { messages, newest } = await fetchBatch(imap, chunk, cursor, watch);
      if (messages.length > 0) await poster.post({ ...batch, uidValidity: cursor.uidValidity, messages });
      await cursors.markDelivered(cursor, batch.lastUid, newest);
      status.lastUid = batch.lastUid;
      status.delivered += messages.length;
      if (messages.length > 0)
        log.info({ messages: messages.length, lastUid: batch.lastUid }, 'mail delivered to the hook');
    }
  }

  async function session(): Promise<void> {
    const imap = openImap(watch.imap);
    client = imap;
    const closed = new Promise<void>((resolve) => imap.once('close', () => resolve()));
    imap.on('error', (err: Error) => {
      status.lastError = err.message;
    });
    await imap.connect();
    const mailbox = await imap.mailboxOpen(watch.mailbox);
    status.connected = true;
    const cursor = await cursors.load(String(mailbox.uidValidity), Number(mailbox.uidNext));
    status.uidValidity = cursor.uidValidity;
    status.lastUid = cursor.lastUid;
    log.info({ uidValidity: cursor.uidValidity, lastUid: cursor.lastUid }, 'mail watch connected');
    imap.on('exists', () => wake?.());
    while (!stopper.signal.aborted && imap.usable) {
      await drain(imap, cursor);
      if (cursor.since !== undefined && !stopper.signal.aborted) await cursors.markCaughtUp(cursor);
      status.lastError = undefined;
      // IDLE now: the client's own IDLE starts only after 15 s without a command, and until then
      // the server tells nothing of new mail. The next command (drain's SEARCH) ends it.
      imap.idle({ whenFree: true }).catch((err: Error) => {
        status.lastError = err.message;
      });
      await Promise.race([
        new Promise<void>((resolve) => {
          wake = resolve;
        }),
        pause(watch.pollIntervalSeconds * 1000),
        closed,
      ]);
    }
  }

  async function loop(): Promise<void> {
    for (let attempt = 0; !stopper.signal.aborted; attempt++) {
      try {
        await session();
        attempt = -1;
      } catch (err) {
        if (stopper.signal.aborted) break;
        status.lastError = (err as Error).message;
        log.warn({ err: status.lastError, attempt }, 'mail watch disconnected; reconnecting');
      } finally {
        status.connected = false;
        const imap = client;
        client = undefined;
        await imap?.logout().catch(() => imap.close());
      }
      await pause(backoffMs(attempt, backoff));
    }
  }

  return {
    start(): void {
      running ??= loop();
    },
    status(): MailWatcherStatus {
      return { account, mailbox: watch.mailbox, ...status };
    },
    async stop(): Promise<void> {
      stopper.abort();
      wake?.();
      client?.close();
      await running;
    },
  };
}
