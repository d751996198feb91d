import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { makeTempDir } from '../../helpers/hookd-process.js';

/**
 * `hookd runs` against an admin API whose filtered pages look at a stretch of runs at a time
 * (docs/runtime.md#admin-api): a page may hold none and still name an older one.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const item = (runId: string) => ({
  runId,
  sessionKey: `hook:${runId}`,
  status: 'error',
  model: 'fake/m',
  attempts: [],
  createdAt: '2026-11-27T10:00:00.000Z',
});

describe('hookd runs with a filter', () => {
  it('follows the pages until it has its limit or the oldest, and names no page as empty on the way', async () => {
    const asked: string[] = [];
    const pages: Record<string, object> = {
      '': { runs: [], nextCursor: '16' },
      '16': { runs: [item('r-9')], nextCursor: '6' },
      '6': { runs: [item('r-2'), item('r-1')], nextCursor: '2' },
      '2': { runs: [], nextCursor: null },
    };
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      asked.push(`${url.pathname}?${url.searchParams}`);
      const page = req.headers.authorization === 'Bearer gw-token' && pages[url.searchParams.get('cursor') ?? ''];
      res.writeHead(page ? 200 : 401, { 'content-type': 'application/json' });
      res.end(JSON.stringify(page || { error: 'no', code: 'UNAUTHORIZED' }));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    cleanups.push(() => new Promise((done) => server.close(done)));
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const env = { HOOKD_GATEWAY_TOKEN: 'gw-token' };

    const json = await runCli(['runs', '--status', 'failed', '--limit', '3', '--json', '--url', url], {
      cwd: temp.dir,
      env,
    });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out)).toMatchObject({ runs: [{ runId: 'r-9' }, { runId: 'r-2' }, { runId: 'r-1' }] });
    expect(JSON.parse(json.out).nextCursor).toBe('2');
    expect(asked).toEqual([
      '/api/runs?status=failed&limit=3',
      '/api/runs?status=failed&limit=3&cursor=16',
      '/api/runs?status=failed&limit=2&cursor=6',
    ]);

    asked.length = 0;
    const table = await runCli(['runs', '--mapping', 'gh', '--limit', '10', '--url', url], { cwd: temp.dir, env });
    expect(table.code).toBe(0);
    expect(table.out).toContain('r-9');
    expect(table.out).toContain('r-1');
    expect(asked).toHaveLength(4);
  });
});
