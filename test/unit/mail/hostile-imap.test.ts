import { describe, expect, it } from 'vitest';
import { watchLoop } from '../../../src/mail/watch-loop.js';
import { envelopeOf, type ImapCommand, pump, scriptedImap } from '../../helpers/mail-imap.js';
import { type LogLine, watchConfig, watchState } from '../../helpers/mail-state.js';
import { cleanups, receiver } from '../../helpers/mail-watch.js';

/**
 * The watcher against an IMAP server that does what Dovecot never does (docs/mail.md,
 * docs/security.md): the watcher runs inside `hookd serve`, so nothing such a server sends may
 * end the process, hold it for ever, lose mail unsaid or put a secret in the log.
 */

const PASSWORD = 'S3cret-IMAP-pass';

/** A mailbox of 3 messages (UIDNEXT 4) whose server lets `answer` take any command first. */
const hostileImap = (answer: (command: ImapCommand) => boolean) => scriptedImap({ exists: 3, uidNext: 4, answer });

/** The watch loop against `imap`, posting to a receiver; its state, log lines and receiver. */
async function watching(imap: { port: number }, extra: { stepDeadlineMs?: number; maxMessageBytes?: number } = {}) {
  const hook = await receiver();
  const lines: LogLine[] = [];
  const watch = watchConfig({ port: imap.port, user: 'me', password: PASSWORD });
  const { state, stop } = watchState(watch, hook.url, lines, extra);
  const loop = watchLoop(state);
  cleanups.push(async () => {
    stop();
    await loop;
  });
  return { state, lines, hook };
}

describe('the mail watcher against a hostile IMAP server', () => {
  it('refuses a search answer of 24 MB on one line (400 MB ended the process), and reconnects', async () => {
    const imap = await hostileImap(({ tag, verb, socket }) => {
      if (verb !== 'UID SEARCH') return false;
      void pump(socket, '* SEARCH', ' 5', 24 * 1024 * 1024, `\r\n${tag} OK done\r\n`);
      return true;
    });
    const { state } = await watching(imap);
    await expect.poll(() => state.status.lastError, { timeout: 30_000 }).toMatch(/^search failed: /);
    // Nothing of it was taken as UIDs to fetch.
    expect(imap.commands.some((c) => /^UID FETCH /i.test(c))).toBe(false);
  });

  it('gives a step up that the server keeps busy and never answers, saying which', async () => {
    const imap = await hostileImap(({ verb, socket, write }) => {
      if (verb !== 'UID SEARCH') return false;
      const busy = setInterval(() => (socket.destroyed ? clearInterval(busy) : write('* OK still searching')), 50);
      return true;
    });
    const { state } = await watching(imap, { stepDeadlineMs: 500 });
    await expect
      .poll(() => state.status.lastError, { timeout: 15_000 })
      .toMatch(/^search failed: the IMAP server's answer cannot be used: it did not answer the search within 0\.5 s/);
  });

  it('posts a message the server listed and then sent no source for as a placeholder, and says so', async () => {
    const imap = await hostileImap(({ tag, verb, line, write }) => {
      if (verb === 'UID SEARCH') write('* SEARCH 4 5');
      else if (verb === 'UID FETCH' && /BODY/i.test(line)) {
        const source = 'Subject: msg 5\r\n\r\nhello\r\n';
        write(`* 2 FETCH (UID 5 BODY[] {${source.length}}\r\n${source})`);
      } else if (verb === 'UID FETCH') {
        write(envelopeOf(4));
        write(envelopeOf(5));
      } else return false;
      write(`${tag} OK done`);
      return true;
    });
    const { state, lines, hook } = await watching(imap);
    await expect.poll(() => state.status.lastUid, { timeout: 15_000 }).toBe(5);
    const posted = hook.accepted.flatMap((a) => a.body.messages);
    expect(posted.map((m) => m.id)).toEqual(['1700-4', '1700-5']);
    expect(posted[0]?.body).toMatch(/the server sent no source/);
    expect(lines).toContainEqual(
      expect.objectContaining({ uid: 4, msg: 'mail message without a source answer; posting a placeholder' }),
    );
  });

  it('does not parse a source larger than the size the server announced: a placeholder says so', async () => {
    const imap = await hostileImap(({ tag, verb, line, write }) => {
      if (verb === 'UID SEARCH') write('* SEARCH 4');
      else if (verb === 'UID FETCH' && /BODY/i.test(line)) {
        const source = `Subject: msg 4\r\n\r\n${'x'.repeat(4096)}\r\n`;
        write(`* 1 FETCH (UID 4 BODY[] {${source.length}}\r\n${source})`);
      } else if (verb === 'UID FETCH') write(envelopeOf(4));
      else return false;
      write(`${tag} OK done`);
      return true;
    });
    const { state, hook } = await watching(imap, { maxMessageBytes: 1024 });
    await expect.poll(() => state.status.lastUid, { timeout: 15_000 }).toBe(4);
    const [posted] = hook.accepted.flatMap((a) => a.body.messages);
    expect(posted?.body).toMatch(/it is larger than the 1\.0 KB hookd downloads/);
    // The size stated is the size the server sent (4,116 bytes), not the 20 bytes it announced.
    expect(posted?.body).toMatch(/UID 4, 4\.0 KB\.\]$/);
    expect(posted?.body).not.toMatch(/xxxx/);
  });

  it('masks the password a server quotes back in its refusal of the login', async () => {
    const imap = await hostileImap(({ tag, verb, line, write }) => {
      if (verb !== 'LOGIN') return false;
      write(`${tag} BAD Error in IMAP command LOGIN: ${line.slice(line.indexOf(' ') + 1)}`);
      return true;
    });
    const { state, lines } = await watching(imap);
    await expect.poll(() => state.status.lastError, { timeout: 15_000 }).toMatch(/\[REDACTED\]/);
    await expect.poll(() => lines.length).toBeGreaterThan(0);
    expect(JSON.stringify(lines) + JSON.stringify(state.status)).not.toContain(PASSWORD);
  });
});
