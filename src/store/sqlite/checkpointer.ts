import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/**
 * Copies the WAL back into the database file from a worker thread, with its own connection.
 * A checkpoint ends in an fsync of the database file; run by the writing connection (SQLite's
 * default, every 1000 pages), it stalls every request in flight for milliseconds (it set
 * `/hooks/wake`'s p99 at 17 ms against 7 ms without it). PASSIVE mode never blocks the writer;
 * the writer keeps a large auto-checkpoint as a safety net for when this thread falls behind.
 *
 * Under steady writes the WAL never restarts by itself: SQLite starts it over only when a write
 * finds every frame copied back, and there is always a newer commit than the last copy. It grew
 * to the writer's safety net (256 MB), whose checkpoint then held the event loop for 100–300 ms
 * every few seconds, and every frame went to fresh file space. So once the WAL holds
 * `restartPages`, this thread copies again until what is left is a few commits' worth, and
 * tells the writer, whose own checkpoint of that tail (1–20 ms) lets its next commit start the
 * WAL over at its beginning.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 5000');
const pageBytes = db.pragma('page_size', { simple: true });
const restartPages = workerData.restartBytes / pageBytes;
// A pass that copied less than 1 MiB left only a tail of a few commits.
const tailPages = 1048576 / pageBytes;
let failed = false;
const timer = setInterval(() => {
  try {
    let pass = db.pragma('wal_checkpoint(PASSIVE)')[0];
    if (pass.log >= restartPages) {
      // Each pass copies what was committed during the one before: a few passes leave a tail.
      for (let i = 0; i < 6; i++) {
        const before = pass.log;
        pass = db.pragma('wal_checkpoint(PASSIVE)')[0];
        if (pass.log - before < tailPages) break;
      }
      parentPort.postMessage({ tail: true });
    }
    failed = false;
  } catch (err) {
    if (!failed) parentPort.postMessage({ error: String(err && err.message || err) });
    failed = true;
  }
}, workerData.everyMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/** WAL bytes after which the writing connection checkpoints itself. */
export const WRITER_AUTOCHECKPOINT_BYTES = 256 * 1024 * 1024;
/** WAL bytes after which the WAL is started over (see above). */
export const RESTART_BYTES = 32 * 1024 * 1024;

export interface Checkpointer {
  /** Stops the thread and closes its connection. */
  stop(): Promise<void>;
}

/** Starts the checkpoint thread on its own connection to the database at `path`. */
export function startCheckpointer(options: {
  path: string;
  everyMs?: number;
  onError?: (message: string) => void;
  /** WAL bytes from which the WAL is started over (default RESTART_BYTES). */
  restartBytes?: number;
  /**
   * The writing connection: it copies the last few commits itself once this thread has caught
   * up, so that its next commit starts the WAL over.
   */
  writer?: Database.Database;
}): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      path: options.path,
      driver,
      everyMs: options.everyMs ?? 200,
      restartBytes: options.writer ? (options.restartBytes ?? RESTART_BYTES) : Number.POSITIVE_INFINITY,
    },
  });
  worker.unref();
  worker.on('message', (m: { error?: string; tail?: boolean }) => {
    if (m.error) options.onError?.(m.error);
    if (m.tail && options.writer?.open) copyTail(options.writer, options.onError);
  });
  worker.on('error', (err) => options.onError?.(err.message));
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    async stop() {
      // Held open until the thread has closed its connection (unref'd, its exit alone would
      // not keep the process alive, and a pending top-level await would end it with code 13).
      worker.ref();
      worker.postMessage('stop');
      // A checkpoint in progress finishes first; one stuck on a slow disk is not waited for.
      const stuck = setTimeout(() => void worker.terminate(), 2000);
      await exited;
      clearTimeout(stuck);
    },
  };
}

/** The writer's checkpoint of the WAL's last frames (between two commits: never inside one). */
function copyTail(writer: Database.Database, onError?: (message: string) => void): void {
  try {
    // PASSIVE: when this thread is copying at the same moment, it answers busy at once; the
    // WAL then restarts at a later round.
    writer.pragma('wal_checkpoint(PASSIVE)');
  } catch (err) {
    onError?.((err as Error).message);
  }
}
