import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { row } from '../../../src/cli/table.js';
import { runCli } from '../../helpers/cli.js';
import { makeTempDir } from '../../helpers/hookd-process.js';

/**
 * What a sender wrote, in the operator's terminal (docs/security.md): a refused request's path
 * holds anything a URL can (`%0A` is a new line), a run's name or session key whatever its
 * template took from a payload, a try's error whatever a destination answered. Each stays on its
 * line, so that none prints a record that never was.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const FAKE_ROW = '\n2026-11-29 05:13:00  deploy-ok  github  push  202';

const request = {
  id: '01a225b7-f079-4c5e-9d8e-000000000001',
  receivedAt: '2026-11-29T05:12:21.000Z',
  path: `y${FAKE_ROW}`,
  url: '/hooks/y',
  status: 401,
  code: 'UNAUTHORIZED',
  durationMs: 1,
  eventIds: [],
  runIds: [],
  reason: 'a missing or wrong token',
};

const run = {
  runId: 'r-1',
  name: `deploy${FAKE_ROW}`,
  sessionKey: 'hook:gh\nstatus   succeeded',
  status: 'error',
  model: 'fake/m',
  attempts: [{ at: '2026-11-29T05:12:22.000Z', kind: 'model', n: 1, outcome: 'error', error: 'boom\tthen\r\nmore' }],
  createdAt: '2026-11-29T05:12:21.000Z',
  delivery: { status: 'failed', channel: 'ops', reason: 'refused\n2026-11-29 05:13:00  r-2  succeeded' },
};

/** An admin API answering one page of requests and of runs, and the run `r-1`. */
async function adminApi(): Promise<string> {
  const pages: Record<string, object> = {
    '/api/requests': { requests: [request], nextCursor: null },
    '/api/runs': { runs: [run], nextCursor: null },
    '/api/runs/r-1': run,
  };
  const server = createServer((req, res) => {
    const page = pages[new URL(req.url ?? '/', 'http://x').pathname];
    res.writeHead(page ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(page ?? { error: 'no', code: 'NOT_FOUND' }));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  cleanups.push(() => new Promise((done) => server.close(done)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function cli(args: string[]) {
  const temp = makeTempDir();
  cleanups.push(temp.cleanup);
  const answer = await runCli([...args, '--url', await adminApi()], {
    cwd: temp.dir,
    env: { HOOKD_GATEWAY_TOKEN: 'gw-token' },
  });
  expect(answer.code, answer.err).toBe(0);
  return answer.out.trimEnd().split('\n');
}

describe("a sender's text in the terminal", () => {
  it('keeps a refused request on its row in `hookd requests`', async () => {
    const lines = await cli(['requests']);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain('y\\u000a2026-11-29 05:13:00  deploy-ok');
    expect(lines.some((line) => line.startsWith('2026-11-29 05:13:00'))).toBe(false);
  });

  it('keeps a run on its row in `hookd runs`, and each fact of `hookd runs <id>` on its line', async () => {
    const list = await cli(['runs']);
    expect(list).toHaveLength(2);
    expect(list[1]).toContain('deploy\\u000a2026-11-29');
    const shown = await cli(['runs', 'r-1']);
    expect(shown.filter((line) => /^status\s/.test(line))).toEqual(['status   error']);
    expect(shown).toContain('session  hook:gh\\u000astatus   succeeded');
    expect(shown.find((line) => line.includes('model try 1 failed'))).toContain('boom\\u0009then');
    expect(shown.find((line) => line.startsWith('delivery'))).toContain('refused\\u000a2026-11-29 05:13:00  r-2');
    expect(shown.some((line) => line.startsWith('2026-11-29 05:13:00'))).toBe(false);
  });

  it('keeps each cell of a followed row on its line', () => {
    expect(row(['a\nb', 'c\td', 'e\r\nf'], [4, 4])).toBe('a\\u000ab  c\\u0009d  e\\u000d\\u000af');
  });
});
