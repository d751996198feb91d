import { setTimeout as sleep } from 'node:timers/promises';
import { ImapFlow } from 'imapflow';
import { type BackoffBounds, backoffMs } from '../backoff.js';
import type { MailConfig } from '../config/index.js';
import type { Logger } from '../log.js';
import type { MetaRepository } from '../store/index.js';
import { createBatchPoster } from './batch-poster.js';
import { type Cursor, chunksOf, createCursorStore } from './cursor-store.js';
import { type MailMessage, toMailMessage } from './message.js';

type WatchConfig = NonNullable<MailConfig['watch']>;

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
  readonly meta: MetaRepository;
  readonly log: Logger;
  /** Retry and reconnect back-off bounds (tests shorten them). */
  readonly backoff?: BackoffBounds;
}

/**
 * The mail watch flow (DESIGN §11): IMAP IDLE on one mailbox, each new message parsed and
 * posted to `/hooks/mail` in the preset's payload shape. The cursor advances only after a
 * 2xx, and each batch carries an Idempotency-Key, so a restart neither skips nor repeats.
 */
export function createMailWatcher(options: MailWatcherOptions) {
  const { watch, account } = options;
  const log = options.log.child({ component: 'mail-watch', account, mailbox: watch.mailbox });
  const backoff = options.backoff ?? { minMs: 1000, maxMs: 30_000 };
  const stopper = new AbortController();
  let client: ImapFlow | undefined;
  let wake: (() => void) | undefined;
  let running: Promise<void> | undefined;
  const status: { connected: boolean; uidValidity?: string; lastUid?: number; delivered: number; lastError?: string } =
    {
      connected: false,
      delivered: 0,
    };
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
      cursors.markPending(cursor, { firstUid: chunk[0] as number, lastUid: chunk[chunk.length - 1] as number });
      const messages: MailMessage[] = [];
      let newest = cursor.lastDate;
      for await (const msg of imap.fetch(
        chunk.join(','),
        { uid: true, source: true, flags: true, internalDate: true },
        { uid: true },
      )) {
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
      const lastUid = chunk[chunk.length - 1] as number;
      if (messages.length > 0)
        await poster.post({ uidValidity: cursor.uidValidity, firstUid: chunk[0] as number, lastUid, messages });
      cursors.markDelivered(cursor, lastUid, newest);
      status.lastUid = lastUid;
      status.delivered += messages.length;
      if (messages.length > 0) log.info({ messages: messages.length, lastUid }, 'mail delivered to the hook');
    }
  }

  async function session(): Promise<void> {
    const imap = new ImapFlow({
      host: watch.imap.host,
      port: watch.imap.port ?? (watch.imap.secure === false ? 143 : 993),
      secure: watch.imap.secure ?? true,
      auth: { user: watch.imap.user, pass: watch.imap.password },
      logger: false,
      emitLogs: false,
    });
    client = imap;
    const closed = new Promise<void>((resolve) => imap.once('close', () => resolve()));
    imap.on('error', (err: Error) => {
      status.lastError = err.message;
    });
    await imap.connect();
    const mailbox = await imap.mailboxOpen(watch.mailbox);
    status.connected = true;
    const cursor = cursors.load(String(mailbox.uidValidity), Number(mailbox.uidNext));
    status.uidValidity = cursor.uidValidity;
    status.lastUid = cursor.lastUid;
    log.info({ uidValidity: cursor.uidValidity, lastUid: cursor.lastUid }, 'mail watch connected');
    imap.on('exists', () => wake?.());
    while (!stopper.signal.aborted && imap.usable) {
      await drain(imap, cursor);
      if (cursor.since !== undefined && !stopper.signal.aborted) cursors.markCaughtUp(cursor);
      status.lastError = undefined;
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

export type MailWatcher = ReturnType<typeof createMailWatcher>;
