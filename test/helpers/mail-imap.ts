// A scripted IMAP server on a loopback port, for what Dovecot will not do on request: leave
// UIDNEXT out of SELECT, send BYE to every client that enters IDLE, or (through `answer`) answer
// a search never, with 24 MB on one line, leave a message out of a FETCH, quote a password back.

import type { AddressInfo } from 'node:net';
import { createServer, type Socket } from 'node:net';
import { cleanups } from './mail-watch.js';

export interface ScriptedImapOptions {
  /** UIDNEXT in SELECT's answer; left out when undefined. */
  readonly uidNext?: number;
  /** Messages in the mailbox (EXISTS) and the UID of the last one (for `FETCH * (UID)`). */
  readonly exists?: number;
  readonly lastUid?: number;
  /** Sent as `* BYE <byeOnIdle>` to a client that enters IDLE, then the connection is closed. */
  readonly byeOnIdle?: string;
  /** A message arrives while the first UID SEARCH runs: `* <exists + 1> EXISTS` with its answer. */
  readonly mailDuringFirstSearch?: boolean;
  /** Takes any command first; returns true when it answered it itself. */
  readonly answer?: (command: ImapCommand) => boolean;
}

/** One command as `answer` sees it: its tag, its verb (`UID SEARCH`, `LOGIN`), the whole line. */
export interface ImapCommand {
  readonly tag: string;
  readonly verb: string;
  readonly line: string;
  readonly socket: Socket;
  /** Writes one line and its CRLF. */
  write(text: string): void;
}

export interface ScriptedImap {
  readonly port: number;
  /** Every command received, without its tag (`LOGIN …`, `SELECT "INBOX"`). */
  readonly commands: string[];
  readonly logins: () => number;
}

/** Connections that have searched once. */
const searched = new WeakSet<Socket>();

/** Answers one tagged command line; untagged lines first, then the tagged completion. */
function answer(line: string, options: ScriptedImapOptions, socket: Socket): void {
  const [tag = '', ...rest] = line.split(' ');
  const command = rest.join(' ');
  const verb = (rest[0] ?? '').toUpperCase();
  const sub = (rest[1] ?? '').toUpperCase();
  const write = (text: string) => socket.write(`${text}\r\n`);
  const named = verb === 'UID' ? `UID ${sub}` : verb;
  if (options.answer?.({ tag, verb: named, line, socket, write })) return;
  if (verb === 'CAPABILITY') write('* CAPABILITY IMAP4rev1 IDLE');
  if (verb === 'SELECT' || verb === 'EXAMINE') {
    write('* FLAGS (\\Seen \\Answered)');
    write(`* ${options.exists ?? 0} EXISTS`);
    write('* OK [UIDVALIDITY 1700] UIDs valid');
    if (options.uidNext !== undefined) write(`* OK [UIDNEXT ${options.uidNext}] Predicted next UID`);
    return void write(`${tag} OK [READ-WRITE] Select completed`);
  }
  if (verb === 'FETCH' && options.lastUid !== undefined)
    write(`* ${options.exists ?? 1} FETCH (UID ${options.lastUid})`);
  if (verb === 'UID' && sub === 'SEARCH') {
    if (options.mailDuringFirstSearch && !searched.has(socket)) write(`* ${(options.exists ?? 0) + 1} EXISTS`);
    searched.add(socket);
    write('* SEARCH');
  }
  if (verb === 'IDLE') {
    write('+ idling');
    if (options.byeOnIdle !== undefined) {
      write(`* BYE ${options.byeOnIdle}`);
      socket.end();
    }
    return;
  }
  if (verb === 'LOGOUT') {
    write('* BYE Logging out');
    write(`${tag} OK Logout completed`);
    return void socket.end();
  }
  write(`${tag} OK ${command.split(' ')[0]} completed`);
}

/** Starts the server; it is closed after the test. */
export async function scriptedImap(options: ScriptedImapOptions): Promise<ScriptedImap> {
  const commands: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.write('* OK [CAPABILITY IMAP4rev1 IDLE] scripted server ready\r\n');
    let buffered = '';
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('latin1');
      for (let end = buffered.indexOf('\r\n'); end >= 0; end = buffered.indexOf('\r\n')) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (line === 'DONE' || line === '') continue;
        commands.push(line.slice(line.indexOf(' ') + 1));
        answer(line, options, socket);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    port: (server.address() as AddressInfo).port,
    commands,
    logins: () => commands.filter((c) => /^(LOGIN|AUTHENTICATE)\b/i.test(c)).length,
  };
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
