import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { makeTempDir, ROOT } from '../../helpers/hookd-process.js';

let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir();
});
afterEach(() => temp.cleanup());

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

  it('names every template variable the payload does not have', async () => {
    const file = writeTryConfig();
    const payload = join(temp.dir, 'p.json');
    writeFileSync(payload, JSON.stringify({ repository: { ful_name: 'typo/in-payload' } }));
    const result = await runCli(
      ['try', 'github', '--payload', payload, '--header', 'X-GitHub-Event: push', '--config', file],
      {
        cwd: temp.dir,
      },
    );
    expect(result.code).toBe(0);
    expect(result.err.trim().split('\n')).toEqual([
      'hookd: warning: hooks.mappings[0].messageTemplate: {{repository.full_name}} resolves to nothing in this payload (renders empty)',
      'hookd: warning: hooks.mappings[0].messageTemplate: {{head_commit.message}} resolves to nothing in this payload (renders empty)',
      'hookd: warning: hooks.mappings[0].messageTemplate: {{query.note}} resolves to nothing in this payload (renders empty)',
      'hookd: warning: hooks.mappings[0].sessionKey: {{repository.full_name}} resolves to nothing in this payload (renders empty)',
    ]);
    expect(JSON.parse(result.out).unresolved).toHaveLength(4);
  });

  it('exits non-zero with the error the endpoint would give', async () => {
    const file = writeTryConfig();
    const payload = join(temp.dir, 'p.json');
    writeFileSync(payload, '{"x":1}');
    const none = await runCli(['try', 'nothing', '--payload', payload, '--config', file], { cwd: temp.dir });
    expect(none.code).toBe(1);
    expect(none.err).toBe('hookd: no mapping for hook: nothing (NO_MAPPING, HTTP 404)\n');
    const json = await runCli(['try', 'nothing', '--payload', payload, '--config', file, '--json'], { cwd: temp.dir });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.out)).toEqual({
      ok: false,
      status: 404,
      error: { code: 'NO_MAPPING', message: 'no mapping for hook: nothing' },
    });
    const wake = await runCli(['try', 'wake', '--payload', payload, '--config', file, '--json'], { cwd: temp.dir });
    expect(JSON.parse(wake.out)).toMatchObject({ status: 400, error: { code: 'TEXT_REQUIRED' } });
  });
});
