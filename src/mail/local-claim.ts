import type { MetaStore } from '../store/index.js';
import type { MailWatcher } from './watcher.js';

/** Where a SQLite file keeps which process watches a mailbox. */
const keyOf = (account: string, mailbox: string) => `mail:watcher:${account}:${mailbox}`;

/** Whether process `pid` is running (one of another user's is too: `EPERM`). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Claims the mailbox for this process on one SQLite file (docs/mail.md#running-it): `hookd serve`
 * and `hookd mail watch` on the same file would each post its mail under batches cut their own
 * way, and run messages twice. Resolves with the pid of a running process that holds it, else
 * undefined once it is this one's. On PostgreSQL the `mail` lease does this across nodes.
 */
export async function claimMailbox(
  meta: MetaStore,
  account: string,
  mailbox: string,
  pid = process.pid,
): Promise<number | undefined> {
  const key = keyOf(account, mailbox);
  const held = await meta.get<{ pid?: unknown }>(key);
  const holder = typeof held?.pid === 'number' ? held.pid : 0;
  if (holder > 0 && holder !== pid && running(holder)) return holder;
  await meta.set(key, { pid });
  return undefined;
}

/** Gives the mailbox up, if this process holds it. */
export async function releaseMailbox(meta: MetaStore, account: string, mailbox: string, pid = process.pid) {
  const key = keyOf(account, mailbox);
  const held = await meta.get<{ pid?: unknown }>(key);
  if (held?.pid === pid) await meta.set(key, { pid: 0 });
}

/**
 * Starts the watcher `make` makes once this process has claimed the mailbox on its SQLite file,
 * and gives the mailbox up when it stops; undefined, `held` told the pid, while another process
 * watches it (`hookd serve` beside `hookd mail watch`).
 */
export async function startClaimed(
  meta: MetaStore,
  where: { readonly account: string; readonly mailbox: string },
  make: () => MailWatcher,
  held: (pid: number) => void,
): Promise<Pick<MailWatcher, 'status' | 'stop'> | undefined> {
  const { account, mailbox } = where;
  const holder = await claimMailbox(meta, account, mailbox);
  if (holder !== undefined) {
    held(holder);
    return undefined;
  }
  const watcher = make();
  watcher.start();
  return {
    status: () => watcher.status(),
    stop: async () => {
      await watcher.stop();
      await releaseMailbox(meta, account, mailbox);
    },
  };
}
