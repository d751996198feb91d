import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { makeTempDir } from '../../helpers/hookd-process.js';

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
    // In the file's own style: its quotes, its indentation, one key per line.
    expect(written).toBe(`// hookd — production config
{
  server: { port: 8787 }, // loopback only
  hooks: {
    enabled: true,
    /* the token comes from the environment */
    token: '\${HOOK_TOKEN}',
    mail: {
      account: 'me@example.com',
      model: 'builtin/echo',
      thinking: 'low',
    },
    presets: ['mail'],
  },
}
`);

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

  it('takes two tokens that are ${NAME}s not set here as different, and compares them once both resolve', async () => {
    const file = join(temp.dir, 'hookd.json5');
    const twoTokens = `{
  gateway: { auth: { token: '\${GATEWAY_TOKEN}' } },
  hooks: { enabled: true, token: '\${HOOK_TOKEN}' },
}
`;
    const setup = (environment: NodeJS.ProcessEnv) => {
      writeFileSync(file, twoTokens);
      return runCli(['mail', 'setup', '--account', 'me@example.com', '--config', file], {
        cwd: temp.dir,
        env: environment,
      });
    };
    for (const environment of [{}, { HOOK_TOKEN: 'hook-token-from-env-0123' }]) {
      const result = await setup(environment);
      expect(result.err).toBe('');
      expect(result.code).toBe(0);
      expect(readFileSync(file, 'utf8')).toContain("presets: ['mail']");
    }
    const same = 'one-token-for-both-0123456789';
    const equal = await setup({ HOOK_TOKEN: same, GATEWAY_TOKEN: same });
    expect(equal.code).toBe(1);
    expect(equal.err).toMatch(/hooks\.token: must differ from gateway\.auth\.token/);
    expect(equal.err).not.toContain(same);
    expect(readFileSync(file, 'utf8')).toBe(twoTokens);
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
    expect(written).toContain(`    mail: {
      account: 'me@example.com',
      watch: {
        imap: {
          host: 'imap.example.com',
          port: 993,
          secure: true,
          user: 'me@example.com',
          password: '\${MY_IMAP_PASS}',
        },
        mailbox: 'Alerts',
      },
    },`);
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

describe('hookd mail setup on a file as people write them', () => {
  it('keeps each comment on its line, and turns hooks on with a token reference when they are off, saying so', async () => {
    const file = join(temp.dir, 'hookd.json5');
    writeFileSync(
      file,
      `{
\tserver: { port: 8787 },
\thooks: {
\t\tpath: '/in' // where senders post
\t},
}
`,
    );
    const result = await runCli(['mail', 'setup', '--account', 'me@example.com', '--config', file], {
      cwd: temp.dir,
      env: {},
    });
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/hooks were off: set hooks\.enabled to true/);
    expect(result.out).toMatch(/set hooks\.token to '\$\{HOOKD_HOOK_TOKEN\}'/);
    expect(readFileSync(file, 'utf8')).toBe(`{
\tserver: { port: 8787 },
\thooks: {
\t\tpath: '/in', // where senders post
\t\tmail: {
\t\t\taccount: 'me@example.com',
\t\t},
\t\tpresets: ['mail'],
\t\tenabled: true,
\t\ttoken: '\${HOOKD_HOOK_TOKEN}'
\t},
}
`);
    const check = await runCli(['check', '--config', file], {
      cwd: temp.dir,
      env: { HOOKD_HOOK_TOKEN: 'x'.repeat(24) },
    });
    expect(check.code).toBe(0);
  });

  it('keeps a JSON file JSON: quoted keys, double quotes, no trailing commas', async () => {
    const file = join(temp.dir, 'hookd.json');
    writeFileSync(file, '{\n  "hooks": {\n    "enabled": true,\n    "token": "hook-token-0123456789abcdef"\n  }\n}\n');
    const result = await runCli(['mail', 'setup', '--account', 'me@example.com', '--config', file], {
      cwd: temp.dir,
      env: {},
    });
    expect(result.code).toBe(0);
    const written = readFileSync(file, 'utf8');
    expect(JSON.parse(written)).toEqual({
      hooks: {
        enabled: true,
        token: 'hook-token-0123456789abcdef',
        mail: { account: 'me@example.com' },
        presets: ['mail'],
      },
    });
    expect(written).toContain('    "mail": {\n      "account": "me@example.com"\n    },');
  });
});
