import { createServer } from 'node:net';
import { ImapFlow } from 'imapflow';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createBatchPoster } from '../../../src/mail/batch-poster.js';
import { createCursorStore } from '../../../src/mail/cursor-store.js';
import { drainMailbox, type WatchConfig, type WatchState, watchLoop } from '../../../src/mail/watch-loop.js';
import { createStore, sqliteBackend } from '../../../src/store/sqlite/index.js';
import { type Dovecot, rfc822 } from '../../helpers/dovecot.js';
import { cleanups, dovecot, mailTestsRun, receiver, TOKEN } from '../../helpers/mail-watch.js';

const ACCOUNT = 'me@example.com';

function watchConfig(imap: { port: number; user: string; password: string }, extra: Partial<WatchConfig> = {}) {
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

/** A watcher's shared state over an in-memory store, posting to `hookUrl`; `lines` gets its log lines. */
function watchState(watch: WatchConfig, hookUrl: string, lines: { msg: string; attempt?: number }[] = []) {
  const store = createStore({ path: ':memory:', synchronous: 'normal' });
  cleanups.push(() => store.close());
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const stopper = new AbortController();
  cleanups.push(() => stopper.abort());
  const status = { connected: false, delivered: 0 } as WatchState['status'];
  const backoff = { minMs: 1, maxMs: 5 };
  const state: WatchState = {
    watch,
    log,
    backoff,
    signal: stopper.signal,
    status,
    cursors: createCursorStore({ meta: sqliteBackend(store).meta, account: ACCOUNT, mailbox: watch.mailbox, log }),
    poster: createBatchPoster({
      account: ACCOUNT,
      mailbox: watch.mailbox,
      hookUrl,
      hookToken: TOKEN,
      backoff,
      signal: stopper.signal,
      log,
      onError: (message) => {
        status.lastError = message;
      },
    }),
  };
  return { state, stopper, store };
}

/**
 * A logged-in client with INBOX open (after the test's appends: a session learns of mail appended
 * by another one only as the server tells it), and the cursor of a first run on an empty mailbox.
 */
async function openInbox(imap: Dovecot, state: WatchState) {
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

const rangeOf = (key: string) => key.split(':').at(-1);

describe.skipIf(!mailTestsRun)('the mail watch loop against a real Dovecot', () => {
  it('drains the mail after the cursor in batches of batchSize, in UID order, and saves the cursor', async () => {
    const imap = await dovecot();
    const hook = await receiver();
    const { state, store } = watchState(watchConfig(imap, { batchSize: 2 }), hook.url);
    for (const n of [1, 2, 3, 4, 5]) await imap.append(rfc822(n));
    const { client, cursor } = await openInbox(imap, state);

    await drainMailbox(state, client, cursor);

    expect(hook.accepted.map((a) => rangeOf(a.key))).toEqual(['1-2', '3-4', '5-5']);
    expect(hook.accepted.flatMap((a) => a.body.messages.map((m) => m.subject))).toEqual(
      [1, 2, 3, 4, 5].map((n) => `Test message ${n}`),
    );
    expect(state.status).toMatchObject({ lastUid: 5, delivered: 5 });
    const saved = store.meta.get(`mail:cursor:${ACCOUNT}:INBOX`) as { lastUid: number; pending?: unknown };
    expect(saved.lastUid).toBe(5);
    expect(saved.pending).toBeUndefined();
  });

  it('posts a batch left pending by a crash cut as before, then the rest', async () => {
    const imap = await dovecot();
    const hook = await receiver();
    const { state } = watchState(watchConfig(imap, { batchSize: 2 }), hook.url);
    for (const n of [1, 2, 3, 4]) await imap.append(rfc822(n));
    const { client, cursor } = await openInbox(imap, state);
    await state.cursors.markPending(cursor, { firstUid: 1, lastUid: 3 });

    await drainMailbox(state, client, cursor);

    expect(hook.accepted.map((a) => rangeOf(a.key))).toEqual(['1-3', '4-4']);
  });

  it('after a UIDVALIDITY change, skips mail not newer than the last seen yet moves the cursor past it', async () => {
    const imap = await dovecot();
    const hook = await receiver();
    const { state } = watchState(watchConfig(imap), hook.url);
    await imap.append(rfc822(1));
    await imap.append(rfc822(2));
    const { client, cursor } = await openInbox(imap, state);
    const lastSeen = Date.now() + 86_400_000;
    cursor.since = lastSeen;
    cursor.lastDate = lastSeen;

    await drainMailbox(state, client, cursor);

    expect(hook.accepted).toEqual([]);
    expect(state.status).toMatchObject({ lastUid: 2, delivered: 0 });
    expect(cursor).toMatchObject({ lastUid: 2, lastDate: lastSeen });
  });

  it('delivers new mail as the server tells of it, long before the poll interval', async () => {
    const imap = await dovecot();
    const hook = await receiver();
    const lines: { msg: string }[] = [];
    const { state, stopper } = watchState(watchConfig(imap, { pollIntervalSeconds: 3600 }), hook.url, lines);
    const loop = watchLoop(state);
    cleanups.push(() => loop);
    await expect.poll(() => lines.some((l) => l.msg === 'mail watch connected'), { timeout: 15_000 }).toBe(true);
    expect(state.status.connected).toBe(true);

    await imap.append(rfc822(1));

    await expect.poll(() => hook.ids().length, { timeout: 15_000 }).toBe(1);
    stopper.abort();
    state.wake?.();
    state.client?.close();
    await loop;
    expect(state.status).toMatchObject({ connected: false, delivered: 1 });
  });

  it('reconnects with back-off while the server refuses, saying why, until stopped', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as { port: number };
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const lines: { msg: string; attempt?: number }[] = [];
    const imap = { port, user: ACCOUNT, password: 'unused' };
    const { state, stopper } = watchState(watchConfig(imap), 'http://127.0.0.1:9/hooks/mail', lines);

    const loop = watchLoop(state);
    const reconnects = () => lines.filter((l) => l.msg === 'mail watch disconnected; reconnecting');
    await expect.poll(() => reconnects().length, { timeout: 15_000 }).toBeGreaterThanOrEqual(3);
    stopper.abort();
    await loop;

    expect(
      reconnects()
        .slice(0, 3)
        .map((l) => l.attempt),
    ).toEqual([0, 1, 2]);
    expect(state.status.lastError).toMatch(/ECONNREFUSED/);
    expect(state.status.connected).toBe(false);
  });
});
