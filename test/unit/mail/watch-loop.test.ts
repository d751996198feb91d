import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { drainMailbox, watchLoop } from '../../../src/mail/watch-loop.js';
import { rfc822 } from '../../helpers/dovecot.js';
import { ACCOUNT, type LogLine, openInbox, watchConfig, watchState } from '../../helpers/mail-state.js';
import { cleanups, dovecot, mailTestsRun, receiver } from '../../helpers/mail-watch.js';

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
    const lines: LogLine[] = [];
    const { state, stop } = watchState(watchConfig(imap, { pollIntervalSeconds: 3600 }), hook.url, lines);
    const loop = watchLoop(state);
    cleanups.push(() => loop);
    await expect.poll(() => lines.some((l) => l.msg === 'mail watch connected'), { timeout: 15_000 }).toBe(true);
    expect(state.status.connected).toBe(true);

    await imap.append(rfc822(1));

    await expect.poll(() => hook.ids().length, { timeout: 15_000 }).toBe(1);
    // Counted once the hook's answer is read, a moment after the receiver has the post (a stop
    // between the two leaves the batch pending, posted again at the next start with its key).
    await expect.poll(() => state.status.delivered, { timeout: 15_000 }).toBe(1);
    stop();
    await loop;
    expect(state.status).toMatchObject({ connected: false, delivered: 1 });
  });

  it('reconnects with back-off while the server refuses, saying why, until stopped', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as { port: number };
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const lines: LogLine[] = [];
    const imap = { port, user: ACCOUNT, password: 'unused' };
    const { state, stop } = watchState(watchConfig(imap), 'http://127.0.0.1:9/hooks/mail', lines);

    const loop = watchLoop(state);
    const reconnects = () => lines.filter((l) => l.msg === 'mail watch disconnected; reconnecting');
    await expect.poll(() => reconnects().length, { timeout: 15_000 }).toBeGreaterThanOrEqual(3);
    stop();
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
