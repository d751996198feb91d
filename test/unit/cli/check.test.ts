import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PATHED } from '../../../src/cli/check.js';
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
    [
      'an unknown preset',
      hooks('presets: ["gmail"]'),
      /hooks\.presets\[0\]: unknown preset "gmail" \(did you mean "mail"\?\); known: alertmanager, github, [a-z, -]+/,
    ],
    [
      'a preset option typo',
      hooks('presets: [{ name: "mail", sesionKey: "hook:mail" }]'),
      /hookd\.json5:1:\d+: error: hooks\.presets\[0\]\.sesionKey: unknown option of the mail preset \(did you mean "sessionKey"\?\)/,
    ],
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
    [
      'a JSON5 syntax error',
      `{ hooks: { enabled: true, } `,
      /hookd\.json5:1:29: error: syntax error: invalid end of input$/m,
    ],
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
      'a channel of an unknown kind',
      `{ channels: { ops: { kind: 'slak', botToken: 'x' } } }`,
      /hookd\.json5:1:\d+: error: channels\.ops\.kind: expected one of chatnet, .*got "slak" \(did you mean "slack"\?\)/,
    ],
    [
      'a mapping naming a channel that is not configured',
      `{ channels: { ops: { kind: 'discord', webhookUrl: 'https://d.example/api/webhooks/1/x' } }, ${hooks('mappings: [{ match: { path: "a" }, messageTemplate: "x", channel: "opz" }]').slice(2)}`,
      /hooks\.mappings\[0\]\.channel: expected one of last, ops, got "opz"/,
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

  it('finds six independent mistakes in one run, each at its line and column, with did-you-mean', async () => {
    mkdirSync(join(temp.dir, 'transforms'));
    writeFileSync(join(temp.dir, 'transforms/broken.ts'), 'export default function (x: number {\n  return x;\n}\n');
    const text = [
      '{',
      "  server: { port: 'eighty' },",
      "  log: { level: 'inf' },",
      "  agents: { defaults: { model: 'nowhere/x' } },",
      '  hooks: {',
      `    enabled: true, token: '${TOKEN}',`,
      '    mapings: [],',
      '    mappings: [',
      "      { match: { path: 'a' }, messageTemplate: 'push to {{repository.full_name} by {{sender.login}}' },",
      "      { match: { path: 'b' }, transform: { module: 'broken.ts' } },",
      '    ],',
      '  },',
      '}',
    ].join('\n');
    const result = await check(text);
    expect(result.code).toBe(1);
    const lines = result.err.split('\n').filter((line) => line.includes('error:'));
    // Sorted by place: the config file's lines first, then the transform's file.
    expect(lines).toEqual([
      'hookd.json5:2:13: error: server.port: expected integer, got string',
      expect.stringMatching(/^hookd\.json5:3:10: error: log\.level: expected one of .* \(did you mean "info"\?\)$/),
      'hookd.json5:4:25: error: agents.defaults.model: unknown model provider "nowhere"',
      'hookd.json5:7:5: error: hooks.mapings: unknown key (did you mean "mappings"?)',
      expect.stringMatching(
        // At the faulty tag itself: the template's 9th character, in the file's line 9.
        /^hookd\.json5:9:57: error: hooks\.mappings\[0\]\.messageTemplate: template error: unbalanced braces/,
      ),
      expect.stringMatching(/^transforms\/broken\.ts:1:\d+: error: hooks\.mappings\[1\]\.transform\.module: /),
    ]);
    expect(result.err).toContain('6 problem(s)');

    const json = await runCli(['check', '--config', join(temp.dir, 'hookd.json5'), '--json'], { cwd: temp.dir });
    expect(json.code).toBe(1);
    const parsed = JSON.parse(json.out) as { ok: boolean; findings: { path: string; line: number }[] };
    expect(parsed.ok).toBe(false);
    expect(parsed.findings.map((f) => [f.path, f.line])).toEqual([
      ['server.port', 2],
      ['log.level', 3],
      ['agents.defaults.model', 4],
      ['hooks.mapings', 7],
      ['hooks.mappings[0].messageTemplate', 9],
      ['hooks.mappings[1].transform.module', 1],
    ]);
  });

  it('reports six mistakes of six kinds in one run, in text and JSON, a mapping refused by the schema included', async () => {
    mkdirSync(join(temp.dir, 'transforms'));
    writeFileSync(join(temp.dir, 'transforms/meterly.ts'), 'export default () => undefined;\n');
    writeFileSync(join(temp.dir, 'transforms/broken.ts'), 'export default function (x: number {\n  return x;\n}\n');
    const text = [
      '{',
      "  agents: { defaults: { model: 'nowhere/x' } },",
      '  hooks: {',
      `    enabled: true, token: '${TOKEN}',`,
      '    mapings: [],',
      '    mappings: [',
      "      { match: { path: 'a' }, deliver: 'yes', messageTemplate: 'push to {repository.full_name}' },",
      "      { match: { path: 'b' }, transform: { module: 'meterli.ts' } },",
      "      { match: { path: 'c' }, transform: { module: 'broken.ts' } },",
      '    ],',
      '  },',
      '}',
    ].join('\n');
    const result = await check(text);
    expect(result.code).toBe(1);
    expect(result.err.split('\n').filter((line) => line.includes('error:'))).toEqual([
      // A reference to nothing, an unknown key, a value of the wrong type (schema) and, in the same
      // mapping, a single-brace template (lint); a module that is not there (with the nearest name),
      // and one that does not compile.
      'hookd.json5:2:25: error: agents.defaults.model: unknown model provider "nowhere"',
      'hookd.json5:5:5: error: hooks.mapings: unknown key (did you mean "mappings"?)',
      'hookd.json5:7:31: error: hooks.mappings[0].deliver: expected boolean, got string',
      expect.stringMatching(
        /^hookd\.json5:7:73: error: hooks\.mappings\[0\]\.messageTemplate: template error: single braces at 8: \{repository\.full_name\} renders as it is/,
      ),
      `hookd.json5:8:44: error: hooks.mappings[1].transform.module: no such file: ${join(temp.dir, 'transforms/meterli.ts')} (did you mean "meterly.ts"?)`,
      expect.stringMatching(/^transforms\/broken\.ts:1:\d+: error: hooks\.mappings\[2\]\.transform\.module: /),
    ]);
    expect(result.err).toContain('6 problem(s)');

    const json = await runCli(['check', '--config', join(temp.dir, 'hookd.json5'), '--json'], { cwd: temp.dir });
    expect(json.code).toBe(1);
    const parsed = JSON.parse(json.out) as { ok: boolean; findings: { path: string; line: number }[] };
    expect(parsed.ok).toBe(false);
    expect(parsed.findings.map((f) => [f.path, f.line])).toEqual([
      ['agents.defaults.model', 2],
      ['hooks.mapings', 5],
      ['hooks.mappings[0].deliver', 7],
      ['hooks.mappings[0].messageTemplate', 7],
      ['hooks.mappings[1].transform.module', 8],
      ['hooks.mappings[2].transform.module', 1],
    ]);
  });

  it('runs the later checks past a value of the wrong type that the cross-key rules read (hooks.path: 7)', async () => {
    const result = await check(
      `{ hooks: { enabled: true, token: '${TOKEN}', path: 7, mappings: [{ match: { path: 'a' }, textTemplate: '{{a}' }] } }`,
    );
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/hooks\.path: expected string, got number/);
    expect(result.err).toMatch(/hooks\.mappings\[0\]\.textTemplate: template error/);
    expect(result.err).toContain('2 problem(s)');
  });

  it("warns of a template name the mapping's schema does not declare, and stays OK", async () => {
    const schema = {
      type: 'object',
      properties: {
        repository: { type: 'object', properties: { full_name: { type: 'string' } } },
        commits: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' } } } },
      },
    };
    const mapping = {
      match: { path: 'gh' },
      schema,
      messageTemplate:
        '{{repository.ful_name}} {{repository.full_name}} {{commits.0.id}} {{commits.0.sha}} {{headers.x-a}} {{anything}}',
    };
    const result = await check(hooks(`mappings: [${JSON.stringify(mapping)}]`));
    expect(result.code).toBe(0);
    expect(result.out).toContain(
      "warning: hooks.mappings[0].messageTemplate: {{repository.ful_name}} is not in the mapping's schema (it would render empty)",
    );
    expect(result.out).toContain(
      "warning: hooks.mappings[0].messageTemplate: {{commits.0.sha}} is not in the mapping's schema",
    );
    expect(result.out).toContain(
      "warning: hooks.mappings[0].messageTemplate: {{anything}} is not in the mapping's schema",
    );
    expect(result.out.match(/warning:/g)).toHaveLength(3);
  });

  it('warns when a configured mail watcher cannot run, and stays OK', async () => {
    const result = await check(
      "{ hooks: { enabled: false, presets: ['mail'], mail: { account: 'me@example.com', watch: { imap: { host: 'h', user: 'u', password: 'p' } } } } }",
    );
    expect(result.code).toBe(0);
    expect(result.out).toMatch(
      /warning: hooks\.mail\.watch: the mail watcher does not start while hooks\.enabled is false/,
    );
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

describe('the path of a problem', () => {
  it('is read from `path: message`, and a long word without one is refused at once, not in exponential time', () => {
    expect(PATHED.exec('hooks.presets[1] (github).secret: z')?.slice(1)).toEqual([
      'hooks.presets[1] (github).secret',
      'z',
    ]);
    expect(PATHED.exec('(root): y')?.slice(1)).toEqual(['(root)', 'y']);
    // 40 letters took hours when a name could be split anywhere.
    expect(PATHED.exec(`${'a'.repeat(40)}!`)).toBeNull();
  });
});
