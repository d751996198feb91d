import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { printConfigProblems } from '../../../src/cli/findings.js';
import { runCli } from '../../helpers/cli.js';
import { makeTempDir } from '../../helpers/hookd-process.js';

/**
 * The CLI reads the generated gateway token (data/gateway-token) as the gateway does
 * (docs/security.md): a regular file, never through a symbolic link (another file's text would
 * go out as the token) nor from a FIFO (the command hung).
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** An admin API that answers an empty page of runs to the token `gw-token`, and lists the tokens it was sent. */
async function adminApi() {
  const sent: string[] = [];
  const server = createServer((req, res) => {
    sent.push(req.headers.authorization ?? '');
    const ok = req.headers.authorization === 'Bearer gw-token';
    res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
    res.end(JSON.stringify(ok ? { runs: [], nextCursor: null } : { error: 'no', code: 'UNAUTHORIZED' }));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  cleanups.push(() => new Promise((done) => server.close(done)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sent };
}

/** A folder whose data/gateway-token `place` makes, and `hookd runs` run in it against the admin API. */
async function runsWith(place: (file: string, dir: string) => void) {
  const temp = makeTempDir();
  cleanups.push(temp.cleanup);
  mkdirSync(join(temp.dir, 'data'));
  place(join(temp.dir, 'data/gateway-token'), temp.dir);
  const api = await adminApi();
  const answer = await runCli(['runs', '--url', api.url], { cwd: temp.dir, env: {} });
  return { ...answer, sent: api.sent };
}

describe('the gateway token file, as the CLI reads it', () => {
  it('sends the token of a regular file', async () => {
    const { code, sent } = await runsWith((file) => writeFileSync(file, 'gw-token\n', { mode: 0o600 }));
    expect(code).toBe(0);
    expect(sent).toEqual(['Bearer gw-token']);
  });

  it('refuses a symbolic link, naming the file, and sends nothing', async () => {
    const { code, err, sent } = await runsWith((file, dir) => {
      writeFileSync(join(dir, 'elsewhere'), 'another file of the operator\n');
      symlinkSync(join(dir, 'elsewhere'), file);
    });
    expect(code).not.toBe(0);
    expect(err).toMatch(/^hookd: .*data\/gateway-token is a symbolic link$/m);
    // The data folder's file, not the configuration, is what is wrong.
    expect(err).not.toMatch(/problem\(s\) in the configuration/);
    expect(sent).toEqual([]);
  });

  it('refuses a FIFO at once instead of waiting on it', async () => {
    const { code, err, sent } = await runsWith((file) => execFileSync('mkfifo', [file]));
    expect(code).not.toBe(0);
    expect(err).toMatch(/^hookd: .*data\/gateway-token is a FIFO, not a regular file$/m);
    expect(err).not.toMatch(/problem\(s\) in the configuration/);
    expect(sent).toEqual([]);
  });

  it('reports a problem in a FIFO without reading it (the report of a FIFO token file hung `serve`)', () => {
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    const fifo = join(temp.dir, 'hookd.json5');
    execFileSync('mkfifo', [fifo]);
    const err: string[] = [];
    printConfigProblems([`${fifo} is a FIFO, not a regular file`], fifo, {
      out: () => {},
      err: (l) => err.push(l),
      env: {},
      cwd: temp.dir,
    });
    expect(err.at(-1)).toMatch(/1 problem\(s\) in the configuration/);
  });
});
