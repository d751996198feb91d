import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { makeTempDir, ROOT } from '../../helpers/hookd-process.js';

let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir();
});
afterEach(() => temp.cleanup());

const COMMENTED = `// hookd — production config
{
  server: { port: 8787 }, // loopback only
  hooks: {
    enabled: true,
    /* the token comes from the environment */
    token: '\${HOOK_TOKEN}',
  },
}
`;
const env = { HOOK_TOKEN: 'hook-token-from-env-0123' };

describe('hookd mail setup', () => {
  it('writes hooks.mail and the preset, keeps comments, and is a no-op the second time', async () => {
    const file = join(temp.dir, 'hookd.json5');
    writeFileSync(file, COMMENTED);
    const setup = () =>
      runCli(
        [
          'mail',
          'setup',
          '--account',
          'me@example.com',
          '--model',
          'builtin/echo',
          '--thinking',
          'low',
          '--config',
          file,
        ],
        { cwd: temp.dir, env },
      );
    const first = await setup();
    expect(first.err).toBe('');
    expect(first.code).toBe(0);
    const written = readFileSync(file, 'utf8');
    for (const comment of [
      '// hookd — production config',
      '// loopback only',
      '/* the token comes from the environment */',
    ]) {
      expect(written).toContain(comment);
    }
    expect(written).toContain("token: '${HOOK_TOKEN}'");
    expect(written).toMatch(/mail: \{ account: "me@example.com", model: "builtin\/echo", thinking: "low" \}/);
    expect(written).toMatch(/presets: \["mail"\]/);

    const second = await setup();
    expect(second.code).toBe(0);
    expect(second.out).toMatch(/nothing changed/);
    expect(readFileSync(file, 'utf8')).toBe(written);

    const check = await runCli(['check', '--config', file], { cwd: temp.dir, env });
    expect(check.code).toBe(0);
    expect(check.out).toMatch(/1 mapping\(s\)/);
  });

  it('refuses a model the config does not know, leaving the file untouched', async () => {
    const file = join(temp.dir, 'hookd.json5');
    writeFileSync(file, COMMENTED);
    const result = await runCli(['mail', 'setup', '--account', 'a@b', '--model', 'nowhere/x', '--config', file], {
      cwd: temp.dir,
      env,
    });
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/hooks\.mail\.model: unknown model provider "nowhere"/);
    expect(readFileSync(file, 'utf8')).toBe(COMMENTED);
  });
});

describe('hookd try', () => {
  function writeTryConfig() {
    const file = join(temp.dir, 'hookd.json5');
    writeFileSync(
      file,
      JSON.stringify({
        hooks: {
          enabled: true,
          token: 'hook-token-0123456789abcd',
          mappings: [
            {
              match: { path: 'github' },
              name: 'GitHub',
              sessionKey: 'hook:github:{{repository.full_name}}',
              messageTemplate:
                '{{headers.x-github-event}} to {{repository.full_name}}: {{head_commit.message}} ({{query.note}})',
            },
          ],
        },
        storage: { path: join(temp.dir, 'data/hookd.db') },
      }),
    );
    return file;
  }

  it('prints the action a fixture becomes and dispatches nothing', async () => {
    const file = writeTryConfig();
    const result = await runCli(
      [
        'try',
        'github',
        '--payload',
        join(ROOT, 'test/fixtures/github-push.json'),
        '--header',
        'X-GitHub-Event: push',
        '--query',
        'note=dry',
        '--config',
        file,
      ],
      { cwd: temp.dir },
    );
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.out);
    expect(printed).toMatchObject({
      ok: true,
      mapping: 'hooks.mappings[0]',
      actions: [
        {
          kind: 'agent',
          name: 'GitHub',
          sessionKey: 'hook:github:acme/site',
          message: 'push to acme/site: Fix <nav> & footer (dry)',
        },
      ],
    });
    expect(existsSync(join(temp.dir, 'data'))).toBe(false);
  });

  it('exits non-zero with the error the endpoint would give', async () => {
    const file = writeTryConfig();
    const payload = join(temp.dir, 'p.json');
    writeFileSync(payload, '{"x":1}');
    const none = await runCli(['try', 'nothing', '--payload', payload, '--config', file], { cwd: temp.dir });
    expect(none.code).toBe(1);
    expect(JSON.parse(none.err)).toEqual({
      ok: false,
      code: 'NO_MAPPING',
      error: 'no mapping for hook: nothing',
      status: 404,
    });
    const wake = await runCli(['try', 'wake', '--payload', payload, '--config', file], { cwd: temp.dir });
    expect(JSON.parse(wake.err)).toMatchObject({ code: 'TEXT_REQUIRED', status: 400 });
  });
});

describe('hookd mail setup with IMAP flags', () => {
  it('writes the watch settings with the password as an environment reference, and hookd check accepts them', async () => {
    const file = join(temp.dir, 'hookd.json5');
    writeFileSync(file, COMMENTED);
    const args = [
      'mail',
      'setup',
      '--account',
      'me@example.com',
      '--imap-host',
      'imap.example.com',
      '--imap-password-env',
      'MY_IMAP_PASS',
      '--mailbox',
      'Alerts',
      '--config',
      file,
    ];
    const result = await runCli(args, { cwd: temp.dir, env });
    expect(result.err).toBe('');
    const written = readFileSync(file, 'utf8');
    expect(written).toMatch(
      /imap: \{ host: "imap\.example\.com", port: 993, secure: true, user: "me@example\.com", password: "\$\{MY_IMAP_PASS\}" \}/,
    );
    expect(written).toMatch(/mailbox: "Alerts"/);
    expect(written).not.toContain('imap-secret');
    const check = await runCli(['check', '--config', file], {
      cwd: temp.dir,
      env: { ...env, MY_IMAP_PASS: 'imap-secret' },
    });
    expect(check.err).toBe('');
    expect(check.code).toBe(0);
    const again = await runCli(args, { cwd: temp.dir, env });
    expect(again.out).toMatch(/nothing changed/);
  });
});
