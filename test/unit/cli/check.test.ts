import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { makeTempDir } from '../../helpers/hookd-process.js';

const TOKEN = 'hook-token-0123456789abcdef';

let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir();
});
afterEach(() => temp.cleanup());

async function check(text: string, env: NodeJS.ProcessEnv = {}) {
  const file = join(temp.dir, 'hookd.json5');
  writeFileSync(file, text);
  return runCli(['check', '--config', file], { cwd: temp.dir, env });
}

const hooks = (extra: string) => `{ hooks: { enabled: true, token: '${TOKEN}', ${extra} } }`;

describe('hookd check', () => {
  it('accepts a valid commented JSON5 config', async () => {
    const result = await check(`// a comment\n${hooks('path: "/in"')}`);
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    expect(result.out).toContain('configuration OK');
  });

  const mistakes: [string, string, RegExp][] = [
    [
      'hooks enabled without a token',
      '{ hooks: { enabled: true } }',
      /hooks\.token: required when hooks\.enabled is true/,
    ],
    ['a hooks.path of /', hooks('path: "/"'), /hooks\.path: expected a path such as \/hooks, not \//],
    ['a hooks.path of ///', hooks('path: "///"'), /hooks\.path: expected a path such as \/hooks/],
    [
      'a hook token equal to the gateway token',
      `{ gateway: { auth: { token: '${TOKEN}' } }, hooks: { enabled: true, token: '${TOKEN}' } }`,
      /hooks\.token: must differ from gateway\.auth\.token/,
    ],
    ['an unknown preset', hooks('presets: ["gmail"]'), /hooks\.presets\[0\]: expected one of "mail"/],
    [
      'a bad duration',
      `{ agents: { defaults: { heartbeat: { every: '10 minutes' } } } }`,
      /agents\.defaults\.heartbeat\.every: expected a duration such as 45s, 10m, 1h, or 0 to turn it off, got "10 minutes"/,
    ],
    [
      'a malformed model ref',
      `{ agents: { defaults: { model: 'gpt4' } } }`,
      /agents\.defaults\.model: expected a model reference of the form provider\/model, got "gpt4"/,
    ],
    [
      'a model of an unknown provider',
      `{ agents: { defaults: { model: 'nowhere/x' } } }`,
      /agents\.defaults\.model: unknown model provider "nowhere"/,
    ],
    ['an unknown top-level key', `{ hook: {} }`, /hook: unknown key/],
    ['an unknown nested key', hooks('tokn: "x"'), /hooks\.tokn: unknown key/],
    ['a port of the wrong type', `{ server: { port: '80' } }`, /server\.port: expected integer, got string/],
    ['a port out of range', `{ server: { port: 70000 } }`, /server\.port: expected a value that must be <= 65535/],
    [
      'a short hook token',
      `{ hooks: { enabled: true, token: 'short' } }`,
      /hooks\.token: expected a token of at least 16 characters/,
    ],
    ['a JSON5 syntax error', `{ hooks: { enabled: true, } `, /- 1:29: syntax error: invalid end of input$/m],
    [
      'a missing environment variable',
      `{ hooks: { enabled: true, token: '\${HOOK_TOKEN_UNSET}' } }`,
      /hooks\.token: environment variable HOOK_TOKEN_UNSET is not set/,
    ],
    [
      'a mapping missing its transform module',
      hooks('mappings: [{ transform: {} }]'),
      /hooks\.mappings\[0\]\.transform\.module: required/,
    ],
    [
      'a mapping on a built-in path',
      hooks('mappings: [{ match: { path: "wake" } }]'),
      /hooks\.mappings\[0\]\.match\.path: wake and agent are built-in/,
    ],
    [
      'an unknown provider api',
      `{ models: { providers: { local: { baseUrl: 'http://x', api: 'grpc' } } } }`,
      /models\.providers\.local\.api: expected one of "openai-chat"/,
    ],
    [
      'a bad storage mode',
      `{ storage: { synchronous: 'off' } }`,
      /storage\.synchronous: expected one of "normal", "full"/,
    ],
    [
      'an allowlist entry that is no model ref',
      `{ agents: { defaults: { models: ['builtin/echo', 'nope'] } } }`,
      /agents\.defaults\.models\[1\]/,
    ],
  ];

  it.each(mistakes)('refuses %s, naming the key path and what was expected', async (_name, text, expected) => {
    const result = await check(text);
    expect(result.code).not.toBe(0);
    expect(result.err).toMatch(expected);
    expect(result.err).toContain(join(temp.dir, 'hookd.json5'));
  });

  it('reports every problem of a config at once', async () => {
    const result = await check(`{ server: { port: -1 }, hooks: { enabled: true, path: '/' , bogus: 1 } }`);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/server\.port/);
    expect(result.err).toMatch(/hooks\.bogus: unknown key/);
  });

  it('expands ${NAME} from the environment', async () => {
    const result = await check(`{ hooks: { enabled: true, token: '\${HOOK_TOKEN}' } }`, { HOOK_TOKEN: TOKEN });
    expect(result.code).toBe(0);
  });

  it('exits non-zero when the file does not exist', async () => {
    const result = await runCli(['check', '--config', join(temp.dir, 'missing.json5')], { cwd: temp.dir });
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/cannot read the config file: ENOENT/);
  });
});
