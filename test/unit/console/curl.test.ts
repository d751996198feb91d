import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { type CurlSource, curlOf } from '../../../console/curl.js';

/**
 * "Copy as curl" (docs/console.md#copy-as-curl): the command, run by bash with `curl` standing
 * in as a function that prints its arguments, passes each header and the body byte for byte,
 * and the hook token only from its variable.
 */

/** The arguments bash hands to curl when it runs `command`. */
async function argsOf(command: string, env: Record<string, string> = {}): Promise<string[]> {
  const script = `curl() { printf '%s\\0' "$@"; }\n${command}`;
  const { stdout } = await promisify(execFile)('bash', ['-c', script], {
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  return stdout.split('\0').slice(0, -1);
}

const request = (over: Partial<CurlSource> = {}): CurlSource => ({
  url: '/hooks/note?x=1',
  headers: { host: '127.0.0.1:8787', 'content-type': 'application/json', 'x-request-id': 'abc' },
  credentials: {},
  body: '{"n":1}',
  ...over,
});

describe('Copy as curl', () => {
  it('quotes a body with quotes, dollars, backticks, new lines and a leading @ as it is', async () => {
    const body = `@file {"who": "it's $HOME \`id\` \\n"}\n"two"\tlines`;
    const args = await argsOf(curlOf(request({ body }), 'http://127.0.0.1:8787'));
    expect(args).toEqual([
      '-sS',
      '-X',
      'POST',
      'http://127.0.0.1:8787/hooks/note?x=1',
      '-H',
      'content-type: application/json',
      '--data-raw',
      body,
    ]);
  });

  it('leaves credentials out: the hook token from $HOOKD_HOOK_TOKEN, a signature and a secret as placeholders', async () => {
    const masked = {
      authorization: '[masked]',
      'x-hub-signature-256': '[masked]',
      'x-gitlab-token': '[masked]',
      cookie: '[masked]',
      'x-forwarded-for': '10.0.0.1',
      'x-github-event': "it's push",
    };
    const command = curlOf(
      request({
        headers: masked,
        credentials: Object.fromEntries(
          ['authorization', 'x-hub-signature-256', 'x-gitlab-token', 'cookie'].map((n) => [n, { verified: true }]),
        ),
      }),
      'http://h',
    );
    expect(command).not.toContain('[masked]');
    const args = await argsOf(command, { HOOKD_HOOK_TOKEN: 'the-token' });
    expect(args.filter((_, i) => args[i - 1] === '-H')).toEqual([
      'authorization: Bearer the-token',
      'x-hub-signature-256: <signature>',
      'x-gitlab-token: <secret>',
      "x-github-event: it's push",
    ]);
  });

  it('sends no body when none was kept', async () => {
    const args = await argsOf(curlOf(request({ body: '' }), 'http://h'));
    expect(args).not.toContain('--data-raw');
  });

  it('sends a body that is not text byte for byte, decoded from base64 on its standard input', async () => {
    const bytes = Buffer.from([0xff, 0xfe, 0x7b, 0x22, 0x61, 0x22, 0x3a, 0x80, 0x7d, 0x00, 0x27]);
    const command = curlOf(request({ body: bytes.toString('base64'), bodyEncoding: 'base64' }), 'http://h');
    const script = `curl() { printf '%s\\0' "$@"; cat > sent.bin; }\n${command}`;
    const dir = mkdtempSync(join(tmpdir(), 'hookd-curl-'));
    try {
      const { stdout } = await promisify(execFile)('bash', ['-c', script], { cwd: dir });
      expect(stdout.split('\0').slice(-3, -1)).toEqual(['--data-binary', '@-']);
      expect(readFileSync(join(dir, 'sent.bin'))).toEqual(bytes);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
