import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { claimMailbox, releaseMailbox } from '../../../src/mail/index.js';
import { createStore, type Store, sqliteBackend } from '../../../src/store/sqlite/index.js';

let store: Store | undefined;
afterEach(() => store?.close());

/** The pid of a process that has ended. */
async function endedPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((done) => child.once('exit', done));
  return child.pid as number;
}

describe('the mailbox on one SQLite file', () => {
  it('is watched by one process: another running one is named, one that ended is taken over', async () => {
    // Before: hookd serve and hookd mail watch on one file both watched it, each cutting its
    // own batches under its own keys, and messages ran twice.
    store = createStore({ path: ':memory:', synchronous: 'normal' });
    const { meta } = sqliteBackend(store);
    expect(await claimMailbox(meta, 'me@example.com', 'INBOX', process.ppid)).toBeUndefined();
    expect(await claimMailbox(meta, 'me@example.com', 'INBOX')).toBe(process.ppid);
    // Another mailbox is its own.
    expect(await claimMailbox(meta, 'me@example.com', 'Work')).toBeUndefined();
    // This process stops: the mailbox is free.
    await releaseMailbox(meta, 'me@example.com', 'INBOX', process.ppid);
    expect(await claimMailbox(meta, 'me@example.com', 'INBOX')).toBeUndefined();
    // Held by a process killed since (kill -9 releases nothing): taken over.
    await meta.set('mail:watcher:me@example.com:INBOX', { pid: await endedPid() });
    expect(await claimMailbox(meta, 'me@example.com', 'INBOX')).toBeUndefined();
    expect(await meta.get('mail:watcher:me@example.com:INBOX')).toEqual({ pid: process.pid });
  });
});
