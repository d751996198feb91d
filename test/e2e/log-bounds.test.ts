import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Pool } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { type HookdProcess, makeTempDir, startHookd } from '../helpers/hookd-process.js';

/**
 * The request log under floods (docs/operations.md#retention, docs/runtime.md#request-log-and-replay):
 * a token holder's flood stays within `hooks.log.maxBytes`, and a flood of bad tokens adds a
 * bounded number of records.
 */

const HOOK_TOKEN = 'bounds-hook-token-0123456789';
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function gateway(log: object): Promise<{ hookd: HookdProcess; db: string; pool: Pool }> {
  const temp = makeTempDir();
  cleanups.push(temp.cleanup);
  mkdirSync(join(temp.dir, 'transforms'));
  writeFileSync(join(temp.dir, 'transforms/fails.ts'), `export default () => { throw new Error('down'); };\n`);
  const hookd = await startHookd({
    dir: temp.dir,
    config: {
      hooks: {
        enabled: true,
        token: HOOK_TOKEN,
        transformsDir: 'transforms',
        log,
        mappings: [{ id: 'fails', match: { path: 'fails' }, transform: { module: 'fails.ts' } }],
      },
      agents: { defaults: { heartbeat: { every: '0' } } },
    },
  });
  cleanups.push(() => hookd.stop());
  const pool = new Pool(hookd.url, { connections: 8, pipelining: 1 });
  cleanups.push(() => pool.close());
  return { hookd, db: join(temp.dir, 'data/hookd.db'), pool };
}

/** Sends `next()`'s requests on `connections` connections until `stop()` says so; answers how many bodies' bytes went out. */
async function flood(
  pool: Pool,
  next: (i: number) => { path: string; headers: Record<string, string>; body: string },
  stop: (sent: number) => boolean,
  connections = 8,
): Promise<{ requests: number; bytes: number }> {
  let requests = 0;
  let bytes = 0;
  const worker = async () => {
    while (!stop(requests)) {
      const { path, headers, body } = next(requests++);
      bytes += body.length;
      const res = await pool.request({ method: 'POST', path, headers, body });
      await res.body.dump();
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  return { requests, bytes };
}

describe('the request log under a flood', () => {
  it("keeps a token holder's flood within hooks.log.maxBytes, the database file included", async () => {
    // A flood once grew the file 1.5 GB in 20 s (1.5 times today's default bound of 1 GiB).
    // Scaled: 1,300 bodies of 64 KiB and 200 KiB (logged cut, and kept whole by failures) as
    // fast as 8 connections go, against a 16 MiB bound: 167 MiB, ten times the bound, whatever
    // the machine's speed (a flood sized by time sent 68 MiB on a loaded machine).
    const maxBytes = 16 * 1024 * 1024;
    const requests = 1300;
    const { db, pool } = await gateway({ maxBytes });
    const auth = { authorization: `Bearer ${HOOK_TOKEN}`, 'content-type': 'application/json' };
    const logged = JSON.stringify({ text: '', pad: 'x'.repeat(64 * 1024) });
    const failing = JSON.stringify({ pad: 'y'.repeat(200 * 1024) });
    const reader = new Database(db, { readonly: true });
    cleanups.push(() => reader.close());
    const pages = () => (reader.pragma('page_count', { simple: true }) as number) * 4096;
    let largest = 0;
    const sampler = setInterval(() => {
      largest = Math.max(largest, pages());
    }, 100);
    const sent = await flood(
      pool,
      (i) =>
        i % 2
          ? { path: '/hooks/wake', headers: auth, body: logged }
          : { path: '/hooks/fails', headers: auth, body: failing },
      (n) => n >= requests,
    );
    clearInterval(sampler);
    expect(sent.requests).toBe(requests);
    expect(sent.bytes).toBeGreaterThan(10 * maxBytes);
    // The last pass finishes after the last request; the file's pages are then within the bound.
    const settled = async () => {
      const deadline = Date.now() + 10_000;
      while (pages() > maxBytes && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      return pages();
    };
    expect(await settled()).toBeLessThanOrEqual(maxBytes);
    // While it lasted, a little above it at most: what arrives while a pass cuts (a few MiB a turn here).
    expect(largest).toBeLessThanOrEqual(maxBytes * 1.25);
    const kept = reader.prepare('SELECT COUNT(*) AS n FROM requests').get() as { n: number };
    const failures = reader.prepare('SELECT COUNT(*) AS n FROM failed_requests').get() as { n: number };
    expect(kept.n).toBeGreaterThan(10);
    expect(failures.n).toBeGreaterThan(2);
    process.stdout.write(
      `flood: ${sent.requests} requests, ${(sent.bytes / 1048576).toFixed(0)} MiB of bodies; database at most ${(largest / 1048576).toFixed(2)} MiB during it, ${(pages() / 1048576).toFixed(2)} MiB after (file ${(statSync(db).size / 1048576).toFixed(2)} MiB); bound ${maxBytes / 1048576} MiB\n`,
    );
  }, 120_000);

  it('adds at most refusedPerMinute + 1 records a minute for 20,000 bad-token requests, and counts every one', async () => {
    const { hookd, db, pool } = await gateway({});
    const started = Date.now();
    const body = JSON.stringify({ text: 'never stored' });
    const headers = { authorization: 'Bearer not-the-token-0123456789', 'content-type': 'application/json' };
    const sent = await flood(
      pool,
      () => ({ path: '/hooks/wake', headers, body }),
      (n) => n >= 20_000,
      16,
    );
    const minutes = Math.floor(Date.now() / 60_000) - Math.floor(started / 60_000) + 1;
    // Stopping writes what the refused log holds: the last minute's count included.
    await hookd.stop();
    const reader = new Database(db, { readonly: true });
    cleanups.push(() => reader.close());
    const rows = reader.prepare('SELECT status, more_refused, body, headers FROM requests').all() as {
      status: number;
      more_refused: number | null;
      body: Buffer;
      headers: string;
    }[];
    expect(sent.requests).toBe(20_000);
    expect(rows.length).toBeLessThanOrEqual(61 * minutes);
    const counted = rows.reduce((sum, row) => sum + (row.more_refused ?? 1), 0);
    expect(counted).toBe(20_000);
    expect(rows.every((row) => row.body.length === 0 && !row.headers.includes('not-the-token'))).toBe(true);
    process.stdout.write(`refused flood: 20,000 requests → ${rows.length} records over ${minutes} minute(s)\n`);
  }, 120_000);
});
