import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createCursorStore } from '../../../src/mail/cursor-store.js';
import { drainMailbox, watchLoop } from '../../../src/mail/watch-loop.js';
import { createStore, sqliteBackend } from '../../../src/store/sqlite/index.js';
import { rfc822 } from '../../helpers/dovecot.js';
import { scriptedImap } from '../../helpers/mail-imap.js';
import { ACCOUNT, type LogLine, openInbox, watchConfig, watchState } from '../../helpers/mail-state.js';
import { cleanups, dovecot, mailTestsRun, receiver } from '../../helpers/mail-watch.js';

/** A message of `parts` text parts: more than 1,000 and mailparser refuses it. */
function manyParts(parts: number): string {
  const body = Array.from({ length: parts }, (_, i) => ['--p', 'Content-Type: text/plain', '', `part ${i}`]).flat();
  return [
    'From: Bulk <bulk@example.org>',
    'To: me@example.com',
    'Subject: Too many parts',
    'Date: Sun, 22 Nov 2026 10:00:00 +0000',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="p"',
    '',
    ...body,
    '--p--',
    '',
  ].join('\r\n');
}

const subjects = (hook: Awaited<ReturnType<typeof receiver>>) =>
  hook.accepted.flatMap((a) => a.body.messages.map((m) => m.subject));

describe.skipIf(!mailTestsRun)('the mail watcher and messages it cannot read, against a real Dovecot', () => {
  it('posts a placeholder for a message that cannot be parsed, logs its UID, and delivers the rest', async () => {
    // Before: mailparser's "Max allowed child nodes exceeded" failed the batch; the watcher
    // reconnected and fetched the same batch again, forever, and no mail was delivered.
    const imap = await dovecot();
    const hook = await receiver();
    const lines: LogLine[] = [];
    const { state, store } = watchState(watchConfig(imap), hook.url, lines);
    await imap.append(rfc822(1));
    await imap.append(manyParts(1001));
    await imap.append(rfc822(3));
    const { client, cursor } = await openInbox(imap, state);

    await drainMailbox(state, client, cursor);

    expect(subjects(hook)).toEqual(['Test message 1', 'Too many parts', 'Test message 3']);
    const placeholder = hook.accepted[0]?.body.messages[1];
    expect(placeholder).toMatchObject({ id: `${cursor.uidValidity}-2`, bodyTruncated: true });
    expect(placeholder?.body).toMatch(/^\[This message was not read: it could not be parsed \(Max allowed child nodes/);
    expect(placeholder?.body).toMatch(/UID 2, \d+\.\d KB\.\]$/);
    expect(lines.find((l) => l.msg === 'mail message not parsed; posting a placeholder')).toMatchObject({
      level: 40,
      uid: 2,
    });
    expect(state.status).toMatchObject({ lastUid: 3, delivered: 3 });
    expect(store.meta.get(`mail:cursor:${ACCOUNT}:INBOX`)).toMatchObject({ lastUid: 3 });
  });

  it('does not download a message over the size bound: it posts what the envelope tells', async () => {
    const imap = await dovecot();
    const hook = await receiver();
    const lines: LogLine[] = [];
    const { state } = watchState(watchConfig(imap), hook.url, lines, { maxMessageBytes: 64 * 1024 });
    await imap.append(rfc822(1, `${'x'.repeat(76)}\r\n`.repeat(3000)));
    await imap.append(rfc822(2));
    const { client, cursor } = await openInbox(imap, state);

    await drainMailbox(state, client, cursor);

    const [big, small] = hook.accepted.flatMap((a) => a.body.messages);
    expect(big).toMatchObject({
      id: `${cursor.uidValidity}-1`,
      from: '"Sender 1" <sender1@example.org>',
      to: 'me@example.com',
      subject: 'Test message 1',
      date: '2026-11-22T10:00:00.000Z',
      bodyTruncated: true,
    });
    expect(big?.body).toMatch(
      /^\[This message was not read: it is larger than the 64\.0 KB hookd downloads\. UID 1, 2\d\d\.\d KB\.\]$/,
    );
    expect(small).toMatchObject({ subject: 'Test message 2', body: 'Body of message 2.' });
    expect(lines.find((l) => l.msg === 'mail message over the size bound; posting a placeholder')).toMatchObject({
      uid: 1,
    });
  });

  it('says why a login failed and waits minutes before the next one', async () => {
    // Before: the log and lastError said only "Command failed" (or imapflow's bare message), and
    // a wrong password was tried again after 1 s, doubling to 30 s.
    const imap = await dovecot();
    const lines: LogLine[] = [];
    const { state, stop } = watchState(watchConfig({ ...imap, password: 'wrong' }), 'http://127.0.0.1:9/', lines);
    const loop = watchLoop(state);
    cleanups.push(() => {
      stop();
      return loop;
    });
    const refused = () => lines.find((l) => l.msg === 'mail watch login refused; retrying later');
    await expect.poll(refused, { timeout: 20_000 }).toBeDefined();
    stop();
    await loop;
    expect(refused()).toMatchObject({ level: 50, step: 'connect and log in', attempt: 0 });
    expect(refused()?.err).toMatch(/^connect and log in failed: .*AUTHENTICATIONFAILED/);
    expect(refused()?.retryInMs).toBeGreaterThanOrEqual(5 * 60_000);
    expect(state.status.lastError).toMatch(/AUTHENTICATIONFAILED/);
  });
});

describe('the mail watcher against a scripted IMAP server', () => {
  it('backs off when the server closes every connection once idle, and says why', async () => {
    // Before: a session that ended without an error reset the back-off, so a server that sent
    // BYE on IDLE was logged into again every second (8 logins in 7.5 s), and nothing was logged.
    const server = await scriptedImap({ uidNext: 5, exists: 4, lastUid: 4, byeOnIdle: 'Idle timeout' });
    const lines: LogLine[] = [];
    const imap = { port: server.port, user: ACCOUNT, password: 'secret' };
    const { state, stop } = watchState(watchConfig(imap), 'http://127.0.0.1:9/', lines);
    const loop = watchLoop(state);
    cleanups.push(() => {
      stop();
      return loop;
    });
    const closes = () => lines.filter((l) => l.msg === 'mail watch disconnected; reconnecting');
    await expect.poll(() => closes().length, { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
    stop();
    await loop;
    expect(
      closes()
        .slice(0, 3)
        .map((l) => [l.level, l.attempt]),
    ).toEqual([
      [40, 0],
      [40, 1],
      [40, 2],
    ]);
    expect(closes()[0]?.err).toBe('the server closed the connection: Idle timeout');
    expect(server.logins()).toBeGreaterThanOrEqual(3);
  });

  it('drains again at once when the server tells of new mail while a drain runs', async () => {
    // Before: the EXISTS woke a wait already over; the new mail waited for the poll (an hour here).
    const server = await scriptedImap({ uidNext: 5, exists: 4, lastUid: 4, mailDuringFirstSearch: true });
    const imap = { port: server.port, user: ACCOUNT, password: 'secret' };
    const { state, stop } = watchState(watchConfig(imap), 'http://127.0.0.1:9/');
    const loop = watchLoop(state);
    cleanups.push(() => {
      stop();
      return loop;
    });
    const searches = () => server.commands.filter((c) => /^UID SEARCH/i.test(c)).length;
    await expect.poll(searches, { timeout: 15_000 }).toBe(2);
    stop();
    await loop;
  });

  it('takes one past the last UID when the server sends no UIDNEXT, so old mail is not sent', async () => {
    // Before: the missing UIDNEXT made the cursor's lastUid NaN, saved as null; the next
    // session searched from UID 1 and posted the whole mailbox.
    const server = await scriptedImap({ exists: 3, lastUid: 42 });
    const lines: LogLine[] = [];
    const imap = { port: server.port, user: ACCOUNT, password: 'secret' };
    const { state, stop, store } = watchState(watchConfig(imap), 'http://127.0.0.1:9/', lines);
    const loop = watchLoop(state);
    cleanups.push(() => {
      stop();
      return loop;
    });
    await expect.poll(() => server.commands.some((c) => /^UID SEARCH/i.test(c)), { timeout: 15_000 }).toBe(true);
    stop();
    await loop;
    expect(store.meta.get(`mail:cursor:${ACCOUNT}:INBOX`)).toMatchObject({ uidValidity: '1700', lastUid: 42 });
    expect(server.commands.find((c) => /^UID SEARCH/i.test(c))).toMatch(/^UID SEARCH UID 43:\*$/i);
    expect(lines.find((l) => l.msg === 'mail watch connected')).toMatchObject({ lastUid: 42 });
  });
});

describe('a saved mail cursor that is not one', () => {
  const log = pino({ level: 'silent' });
  function cursorsOver(saved: unknown) {
    const store = createStore({ path: ':memory:', synchronous: 'normal' });
    cleanups.push(() => store.close());
    if (saved !== undefined) store.meta.set(`mail:cursor:${ACCOUNT}:INBOX`, saved);
    return createCursorStore({ meta: sqliteBackend(store).meta, account: ACCOUNT, mailbox: 'INBOX', log });
  }

  it('re-syncs mail newer than its last date instead of searching from UID 1 as if all were new', async () => {
    const cursors = cursorsOver({ uidValidity: '1700', lastUid: null, lastDate: 5000 });
    expect(await cursors.load('1700', 43)).toEqual({ uidValidity: '1700', lastUid: 0, lastDate: 5000, since: 5000 });
  });

  it('starts at the end of the mailbox when not even its date is known', async () => {
    for (const saved of [{ lastUid: 3 }, 'garbage', { uidValidity: '1700', lastUid: 3, lastDate: 'x' }]) {
      const cursor = await cursorsOver(saved).load('1700', 43);
      expect(cursor).toMatchObject({ uidValidity: '1700', lastUid: 42 });
      expect(cursor.since).toBeUndefined();
    }
  });

  it('refuses a UIDNEXT that is not a UID', async () => {
    await expect(cursorsOver(undefined).load('1700', Number.NaN)).rejects.toThrow(/UIDNEXT NaN/);
  });
});

describe.skipIf(!mailTestsRun)(
  'a batch left pending whose first message was deleted since, against a real Dovecot',
  () => {
    it('is posted again under its own key, not one that would start its messages twice', async () => {
      const imap = await dovecot();
      const hook = await receiver();
      const { state } = watchState(watchConfig(imap), hook.url);
      for (const n of [1, 2, 3]) await imap.append(rfc822(n));
      const { client, cursor } = await openInbox(imap, state);
      // A crash after the batch 1-3 was marked pending (and maybe posted), then UID 1 deleted.
      await state.cursors.markPending(cursor, { firstUid: 1, lastUid: 3 });
      await client.messageDelete('1', { uid: true });

      await drainMailbox(state, client, cursor);

      // Before: `…:2-3`, a key the hook had not seen, so messages 2 and 3 ran twice.
      expect(hook.accepted.map((a) => a.key)).toEqual([`mail:${ACCOUNT}:INBOX:${cursor.uidValidity}:1-3`]);
      expect(subjects(hook)).toEqual(['Test message 2', 'Test message 3']);
      expect(state.status.lastUid).toBe(3);
    });
  },
);
