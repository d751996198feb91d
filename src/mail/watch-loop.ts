import { setTimeout as sleep } from 'node:timers/promises';
import { ImapFlow, type MailboxObject } from 'imapflow';
import type { BackoffBounds } from '../backoff.js';
import { hookdError } from '../errors.js';
import type { Logger } from '../log.js';
import type { BatchPoster } from './batch-poster.js';
import { type Cursor, type CursorStore, chunksOf, rangeOf } from './cursor-store.js';
import { fetchBatch, MAX_MESSAGE_BYTES } from './fetch-batch.js';
import { describeImapError, isLoginRefused, reconnectWaitMs, type SessionStep } from './imap-errors.js';
import type { WatchConfig } from './watch-config.js';

export type { WatchConfig } from './watch-config.js';

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
  /** Set by an EXISTS: mail arrived (maybe while a drain ran, before its wait began). */
  newMail?: boolean;
  /** What the session is doing, named in the error when it fails. */
  step?: SessionStep;
  /** Messages over this many bytes are not downloaded (default: fetch-batch.ts's `MAX_MESSAGE_BYTES`). */
  readonly maxMessageBytes?: number;
  /** How long a step may go without progress (default STEP_DEADLINE_MS; tests shorten it). */
  readonly stepDeadlineMs?: number;
  /** The IMAP password and the hook token masked in what a server or the hook said (lastError, the log). */
  readonly mask: (text: string) => string;
}

/**
 * How long a session must have lasted for the next reconnect to start the back-off over, when
 * it delivered nothing: a server that drops every connection soon after the login (a BYE on
 * IDLE) is reconnected to with back-off, not every second.
 */
export const STEADY_SESSION_MS = 60_000;

/** The largest literal (a message's source) the IMAP client reads: room past `MAX_MESSAGE_BYTES`. */
const MAX_LITERAL_BYTES = 2 * MAX_MESSAGE_BYTES;
/**
 * The longest line without a literal the IMAP client reads (imapflow: 1 GB, and a SEARCH answer
 * of 400 MB ended the process with a fatal V8 error): 16 MiB holds the UIDs of 2 million
 * messages, more than a search after the cursor finds.
 */
const MAX_LINE_BYTES = 16 * 1024 * 1024;
/** The tokens one response may hold (imapflow: a million, about 100 MB of heap): a FETCH of one message holds hundreds. */
const MAX_RESPONSE_TOKENS = 100_000;
/**
 * How long a session step (a search, the fetch of the next message) may go without progress: a
 * server that keeps the connection busy (`* OK still searching` every second) and never answers
 * resets imapflow's idle timeout for ever. Past it the connection is closed and the watcher
 * reconnects, saying which step the server did not finish.
 */
export const STEP_DEADLINE_MS = 120_000;

/** An IMAP client for the configured server (not yet connected). */
function openImap(imap: WatchConfig['imap']): ImapFlow {
  return new ImapFlow({
    host: imap.host,
    port: imap.port ?? (imap.secure === false ? 143 : 993),
    secure: imap.secure ?? true,
    auth: { user: imap.user, pass: imap.password },
    logger: false,
    emitLogs: false,
    // A source is fetched only under MAX_MESSAGE_BYTES (its size asked first); these bound what
    // a server that sends more than it announced can make the watcher hold: a literal, a
    // response (imapflow: 2 GB; one FETCH answer can carry many literals), a line, its tokens.
    maxLiteralSize: MAX_LITERAL_BYTES,
    maxResponseSize: MAX_LITERAL_BYTES + 1024 * 1024,
    maxLineLength: MAX_LINE_BYTES,
    maxResponseTokens: MAX_RESPONSE_TOKENS,
  });
}

/** What a failed step says (describeImapError), the secrets a server may quote back masked. */
const failureText = (state: WatchState, err: unknown, step: SessionStep) => state.mask(describeImapError(err, step));

/** Waits `ms`, or less once `signal` aborts; never rejects. */
function pause(signal: AbortSignal, ms: number): Promise<void> {
  return sleep(ms, undefined, { signal }).catch(() => undefined);
}

/**
 * `work` (a step of the session on `imap`), failed and the connection closed when it goes
 * `stepDeadlineMs` without progress; `progress` is handed a function that starts the wait over.
 */
export async function withinDeadline<T>(
  state: WatchState,
  imap: ImapFlow,
  work: (progress: () => void) => Promise<T>,
): Promise<T> {
  const ms = state.stepDeadlineMs ?? STEP_DEADLINE_MS;
  const step = state.step ?? 'connect and log in';
  let timer: ReturnType<typeof setTimeout> | undefined;
  let fail: (err: unknown) => void = () => undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    fail = reject;
  });
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      fail(hookdError('MAIL_SERVER_UNUSABLE', { problem: `it did not answer the ${step} within ${ms / 1000} s` }));
      imap.close();
    }, ms);
    timer.unref();
  };
  arm();
  try {
    return await Promise.race([work(arm), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Posts the mail after the cursor (a pending batch first), one batch after another: each is
 * marked pending, posted, then marked delivered, so a restart neither skips nor repeats one.
 * The search, and each message of a fetch, have STEP_DEADLINE_MS (withinDeadline).
 */
export async function drainMailbox(state: WatchState, imap: ImapFlow, cursor: Cursor): Promise<void> {
  const { watch, cursors, status, log } = state;
  state.step = 'search';
  const found = await withinDeadline(state, imap, () => imap.search({ uid: `${cursor.lastUid + 1}:*` }, { uid: true }));
  const uids = (found || []).filter((uid) => uid > cursor.lastUid).sort((a, b) => a - b);
  const { pending } = cursor;
  for (const chunk of chunksOf(uids, pending, watch.batchSize)) {
    if (state.signal.aborted) return;
    const batch = rangeOf(chunk, pending);
    await cursors.markPending(cursor, batch);
    state.step = 'fetch';
    const fetched = await withinDeadline(state, imap, (progress) =>
      fetchBatch(imap, chunk, { cursor, watch, log, maxMessageBytes: state.maxMessageBytes, progress }),
    );
    const { messages, newest } = fetched;
    state.step = 'post';
    const took =
      messages.length > 0 ? await state.poster.post({ ...batch, uidValidity: cursor.uidValidity, messages }) : 0;
    await cursors.markDelivered(cursor, batch.lastUid, newest);
    status.lastUid = batch.lastUid;
    status.delivered += took;
    if (took > 0) log.info({ messages: took, lastUid: batch.lastUid }, 'mail delivered to the hook');
  }
}

/**
 * The mailbox's next UID: its UIDNEXT, or when the server sent none (or not a UID), one past
 * the last message's UID; never NaN, which the cursor would save as `null`.
 */
export async function nextUid(imap: ImapFlow, mailbox: MailboxObject, log: Logger): Promise<number> {
  const uidNext = Number(mailbox.uidNext);
  if (Number.isSafeInteger(uidNext) && uidNext > 0) return uidNext;
  const last = mailbox.exists > 0 ? await imap.fetchOne('*', { uid: true }) : undefined;
  if (last === false || (last && !(Number.isSafeInteger(last.uid) && last.uid > 0)))
    throw hookdError('MAIL_SERVER_UNUSABLE', { problem: 'it sent neither UIDNEXT nor the UID of its last message' });
  const next = (last?.uid ?? 0) + 1;
  log.warn({ uidNext: mailbox.uidNext, next }, 'the mailbox has no UIDNEXT; taking one past its last message');
  return next;
}

/** One connection: opens the mailbox, then drains it whenever the server tells of new mail or the poll is due. */
export async function watchSession(state: WatchState): Promise<void> {
  const { watch, status, cursors, signal } = state;
  const imap = openImap(watch.imap);
  state.client = imap;
  const closed = new Promise<void>((resolve) => imap.once('close', () => resolve()));
  imap.on('error', (err: Error) => {
    status.lastError = failureText(state, err, state.step ?? 'connect and log in');
  });
  state.step = 'connect and log in';
  await imap.connect();
  state.step = 'open the mailbox';
  const mailbox = await imap.mailboxOpen(watch.mailbox);
  status.connected = true;
  const cursor = await cursors.load(String(mailbox.uidValidity), await nextUid(imap, mailbox, state.log));
  status.uidValidity = cursor.uidValidity;
  status.lastUid = cursor.lastUid;
  state.log.info({ uidValidity: cursor.uidValidity, lastUid: cursor.lastUid }, 'mail watch connected');
  imap.on('exists', () => {
    state.newMail = true;
    state.wake?.();
  });
  while (!signal.aborted && imap.usable) {
    state.newMail = false;
    await drainMailbox(state, imap, cursor);
    if (cursor.since !== undefined && !signal.aborted) await cursors.markCaughtUp(cursor);
    status.lastError = undefined;
    // Told of mail while draining (the wake below was not set yet): drain again at once.
    if (state.newMail) continue;
    // IDLE now: the client's own IDLE starts only after 15 s without a command, and until then
    // the server tells nothing of new mail. The next command (drain's SEARCH) ends it.
    state.step = 'wait for mail';
    imap.idle({ whenFree: true }).catch((err: Error) => {
      status.lastError = failureText(state, err, 'wait for mail');
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

/** Ends a session: marks the watcher disconnected and logs out (or closes) its connection. */
async function endSession(state: WatchState): Promise<void> {
  state.status.connected = false;
  const imap = state.client;
  state.client = undefined;
  await imap?.logout().catch(() => imap.close());
}

/**
 * Runs sessions until `signal` aborts, reconnecting with back-off after a failure or a closed
 * connection. The back-off starts over only after a session that delivered mail or lasted
 * `STEADY_SESSION_MS`; after a refused login it is minutes (imap-errors.ts's `AUTH_BACKOFF`).
 */
export async function watchLoop(state: WatchState): Promise<void> {
  const { status, signal, log } = state;
  for (let attempt = 0; !signal.aborted; attempt++) {
    const started = Date.now();
    const deliveredBefore = status.delivered;
    let loginRefused = false;
    let why: string;
    try {
      await watchSession(state);
      why = state.mask(`the server closed the connection: ${state.client?.byeReason ?? 'no reason given'}`);
    } catch (err) {
      if (signal.aborted) break;
      loginRefused = isLoginRefused(err);
      why = failureText(state, err, state.step ?? 'connect and log in');
    } finally {
      await endSession(state);
    }
    if (signal.aborted) break;
    if (status.delivered > deliveredBefore || Date.now() - started >= STEADY_SESSION_MS) attempt = 0;
    status.lastError = why;
    const retryInMs = reconnectWaitMs(attempt, state.backoff, loginRefused);
    const fields = { err: why, step: state.step, attempt, retryInMs };
    if (loginRefused) log.error(fields, 'mail watch login refused; retrying later');
    else log.warn(fields, 'mail watch disconnected; reconnecting');
    await pause(signal, retryInMs);
  }
}
