import { setTimeout as sleep } from 'node:timers/promises';
import { ImapFlow } from 'imapflow';
import { type BackoffBounds, backoffMs } from '../backoff.js';
import type { MailConfig } from '../config/index.js';
import type { Logger } from '../log.js';
import type { BatchPoster } from './batch-poster.js';
import { type Cursor, type CursorStore, chunksOf } from './cursor-store.js';
import { type MailMessage, toMailMessage } from './message.js';

/** `hooks.mail.watch`, its defaults applied. */
export type WatchConfig = NonNullable<MailConfig['watch']>;

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

/** The changing part of the status, written by the session and the poster. */
export type Progress = Omit<{ -readonly [K in keyof MailWatcherStatus]: MailWatcherStatus[K] }, 'account' | 'mailbox'>;

/** What a watcher's reconnect loop, its sessions and their drains share: settings, parts and state. */
export interface WatchState {
  readonly watch: WatchConfig;
  readonly log: Logger;
  /** Reconnect back-off bounds. */
  readonly backoff: BackoffBounds;
  /** Aborted by `stop`: ends the loop, the session, the drain and the waits. */
  readonly signal: AbortSignal;
  readonly status: Progress;
  readonly cursors: CursorStore;
  readonly poster: BatchPoster;
  /** The session's IMAP connection, while one is open (`stop` closes it). */
  client?: ImapFlow;
  /** Ends the session's wait for new mail: the server's EXISTS, or `stop`. */
  wake?: () => void;
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

/** Waits `ms`, or less once `signal` aborts; never rejects. */
function pause(signal: AbortSignal, ms: number): Promise<void> {
  return sleep(ms, undefined, { signal }).catch(() => undefined);
}

/**
 * Fetches and parses the messages of one batch, in UID order; skips those not newer than
 * `cursor.since`. `newest` is the latest internal date seen, skipped messages included.
 */
export async function fetchBatch(
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
 * Posts the mail after the cursor (a pending batch first), one batch after another: each is
 * marked pending, posted, then marked delivered, so a restart neither skips nor repeats one.
 */
export async function drainMailbox(state: WatchState, imap: ImapFlow, cursor: Cursor): Promise<void> {
  const { watch, cursors, status, log } = state;
  const found = await imap.search({ uid: `${cursor.lastUid + 1}:*` }, { uid: true });
  const uids = (found || []).filter((uid) => uid > cursor.lastUid).sort((a, b) => a - b);
  for (const chunk of chunksOf(uids, cursor.pending, watch.batchSize)) {
    if (state.signal.aborted) return;
    const batch = { firstUid: chunk[0] as number, lastUid: chunk[chunk.length - 1] as number };
    await cursors.markPending(cursor, batch);
    const { messages, newest } = await fetchBatch(imap, chunk, cursor, watch);
    if (messages.length > 0) await state.poster.post({ ...batch, uidValidity: cursor.uidValidity, messages });
    await cursors.markDelivered(cursor, batch.lastUid, newest);
    status.lastUid = batch.lastUid;
    status.delivered += messages.length;
    if (messages.length > 0)
      log.info({ messages: messages.length, lastUid: batch.lastUid }, 'mail delivered to the hook');
  }
}

/** One connection: opens the mailbox, then drains it whenever the server tells of new mail or the poll is due. */
export async function watchSession(state: WatchState): Promise<void> {
  const { watch, status, cursors, signal } = state;
  const imap = openImap(watch.imap);
  state.client = imap;
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
  state.log.info({ uidValidity: cursor.uidValidity, lastUid: cursor.lastUid }, 'mail watch connected');
  imap.on('exists', () => state.wake?.());
  while (!signal.aborted && imap.usable) {
    await drainMailbox(state, imap, cursor);
    if (cursor.since !== undefined && !signal.aborted) await cursors.markCaughtUp(cursor);
    status.lastError = undefined;
    // IDLE now: the client's own IDLE starts only after 15 s without a command, and until then
    // the server tells nothing of new mail. The next command (drain's SEARCH) ends it.
    imap.idle({ whenFree: true }).catch((err: Error) => {
      status.lastError = err.message;
    });
    await Promise.race([
      new Promise<void>((resolve) => {
        state.wake = resolve;
      }),
      pause(signal, watch.pollIntervalSeconds * 1000),
      closed,
    ]);
  }
}

/** Runs sessions until `signal` aborts, reconnecting after a failure with back-off. */
export async function watchLoop(state: WatchState): Promise<void> {
  const { status, signal } = state;
  for (let attempt = 0; !signal.aborted; attempt++) {
    try {
      await watchSession(state);
      attempt = -1;
    } catch (err) {
      if (signal.aborted) break;
      status.lastError = (err as Error).message;
      state.log.warn({ err: status.lastError, attempt }, 'mail watch disconnected; reconnecting');
    } finally {
      status.connected = false;
      const imap = state.client;
      state.client = undefined;
      await imap?.logout().catch(() => imap.close());
    }
    await pause(signal, backoffMs(attempt, state.backoff));
  }
}
