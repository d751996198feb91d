// An IMAP server that plays by the rules only where the test does not step in: it greets,
// takes any login, selects INBOX (UIDVALIDITY 1700, UIDNEXT 4), idles and logs out; `answer`
// may take any command first (docs/mail.md). For what Dovecot will not do: answer forever,
// echo a password, send a line of 24 MB, leave a message out of a FETCH.

import type { AddressInfo } from 'node:net';
import { createServer, type Socket } from 'node:net';
import { cleanups } from './mail-watch.js';

/** One command as the test sees it: its tag, its verb (`UID SEARCH`, `LOGIN`), the whole line. */
export interface ImapCommand {
  readonly tag: string;
  readonly verb: string;
  readonly line: string;
  readonly socket: Socket;
  /** Writes one line and its CRLF. */
  write(text: string): void;
}

/** Starts the server; `answer` returns true when it answered the command itself. */
export async function hostileImap(answer: (command: ImapCommand) => boolean) {
  const sockets = new Set<Socket>();
  const commands: string[] = [];
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    const write = (text: string) => socket.write(`${text}\r\n`);
    write('* OK [CAPABILITY IMAP4rev1 IDLE] hostile ready');
    let buffer = '';
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('latin1');
      for (let end = buffer.indexOf('\r\n'); end >= 0; end = buffer.indexOf('\r\n')) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (line === '' || line === 'DONE') continue;
        commands.push(line);
        const [tag = '', first = '', second = ''] = line.split(' ');
        const verb = first.toUpperCase() === 'UID' ? `UID ${second.toUpperCase()}` : first.toUpperCase();
        if (answer({ tag, verb, line, socket, write })) continue;
        if (verb === 'CAPABILITY') write('* CAPABILITY IMAP4rev1 IDLE');
        if (verb === 'SELECT' || verb === 'EXAMINE') {
          for (const text of ['* 3 EXISTS', '* OK [UIDVALIDITY 1700] ok', '* OK [UIDNEXT 4] ok']) write(text);
          write(`${tag} OK [READ-WRITE] selected`);
        } else if (verb === 'IDLE') write('+ idling');
        else if (verb === 'LOGOUT') {
          write('* BYE bye');
          write(`${tag} OK bye`);
          socket.end();
        } else write(`${tag} OK done`);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { port: (server.address() as AddressInfo).port, commands };
}

/** A FETCH answer of message UID `uid`'s size, flags, date and envelope (subject `msg <uid>`). */
export const envelopeOf = (uid: number) =>
  `* ${uid - 3} FETCH (UID ${uid} RFC822.SIZE 20 FLAGS () INTERNALDATE "22-Nov-2026 10:00:00 +0000" ENVELOPE (NIL "msg ${uid}" NIL NIL NIL NIL NIL NIL NIL NIL))`;

/** Writes `head`, then `unit` repeated to about `bytes`, then `tail`, at the socket's pace. */
export async function pump(socket: Socket, head: string, unit: string, bytes: number, tail: string): Promise<void> {
  socket.write(head);
  const chunk = Buffer.from(unit.repeat(Math.floor((1 << 20) / unit.length)));
  for (let sent = 0; sent < bytes && !socket.destroyed; sent += chunk.length)
    if (!socket.write(chunk)) await new Promise((resolve) => socket.once('drain', resolve));
  if (!socket.destroyed) socket.write(tail);
}
