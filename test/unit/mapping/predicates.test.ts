// The mapping predicates and payload schemas of docs/presets.md.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type HookdError, isHookdError } from '../../../src/errors.js';
import { engine, request } from '../../helpers/mapping.js';

describe('match.headers (docs/presets.md)', () => {
  const e = engine({
    mappings: [
      {
        id: 'gh-code',
        match: { path: 'github', headers: { 'X-GitHub-Event': 'push|pull_request' } },
        messageTemplate: 'code',
      },
      { id: 'gh-rest', match: { path: 'github' }, messageTemplate: 'rest' },
    ],
  });

  it('matches a header by name in any case, against alternatives separated by |', () => {
    expect(e.resolve('github', {}, { 'x-github-event': 'push' })?.id).toBe('gh-code');
    expect(e.resolve('github', {}, { 'x-github-event': 'pull_request' })?.id).toBe('gh-code');
    expect(e.resolve('github', {}, { 'x-github-event': ['issues', 'push'] })?.id).toBe('gh-code');
    expect(e.resolve('github', {}, { 'x-github-event': 'issues' })?.id).toBe('gh-rest');
    expect(e.resolve('github', {}, {})?.id).toBe('gh-rest');
  });
});

describe('payload schemas (docs/presets.md)', () => {
  const schema = {
    type: 'object',
    required: ['repository'],
    properties: { repository: { type: 'object', properties: { full_name: { type: 'string' } } } },
  };

  it('answers 400 PAYLOAD_INVALID with the JSON pointer before any template renders', async () => {
    const e = engine({
      mappings: [{ match: { path: 'gh' }, schema, messageTemplate: 'push to {{repository.full_name}}' }],
    });
    const ok = await e.route(request('gh', { repository: { full_name: 'acme/site' } }));
    expect(ok.kind === 'actions' && ok.actions[0]).toMatchObject({ message: 'push to acme/site' });
    for (const [payload, message] of [
      [
        { repository: { full_name: 5 } },
        "the payload does not match the mapping's schema at /repository/full_name: must be string",
      ],
      [{}, "the payload does not match the mapping's schema: must have required property 'repository'"],
    ] as const) {
      const err = await e.route(request('gh', payload)).catch((caught: unknown) => caught);
      expect(isHookdError(err, 'PAYLOAD_INVALID')).toBe(true);
      expect((err as HookdError).statusCode).toBe(400);
      expect((err as HookdError).message).toBe(message);
    }
  });

  it('reads a .ts schema as data, never running it, and refuses one that holds anything else', () => {
    const temp = mkdtempSync(join(tmpdir(), 'hookd-schema-'));
    try {
      writeFileSync(
        join(temp, 'ok.schema.ts'),
        "// a comment\nexport default { type: 'object', required: ['id'] } as const;\n",
      );
      writeFileSync(join(temp, 'code.schema.ts'), "const s = { type: 'object' };\nexport default s;\n");
      const ok = engine({
        mappings: [{ match: { path: 'p' }, schema: join(temp, 'ok.schema.ts'), messageTemplate: 'x' }],
      });
      expect(ok.mappings[0]?.checkPayload?.({})).toEqual({ pointer: '', problem: "must have required property 'id'" });
      expect(() =>
        engine({ mappings: [{ match: { path: 'p' }, schema: join(temp, 'code.schema.ts'), messageTemplate: 'x' }] }),
      ).toThrow(/hooks\.mappings\[0\]\.schema: a \.ts schema holds only `export default \{ … \} as const`/);
    } finally {
      rmSync(temp, { recursive: true, force: true });
    }
  });

  it('reads a schema file relative to the config folder, and refuses one that is no JSON Schema', () => {
    const fromFile = engine(
      { mappings: [{ match: { path: 'p' }, schema: 'test/fixtures/github-push.schema.json', messageTemplate: 'x' }] },
      {},
    );
    expect(fromFile.mappings[0]?.checkPayload?.({ ref: 1 })).toEqual({ pointer: '/ref', problem: 'must be string' });
    expect(() =>
      engine({ mappings: [{ match: { path: 'p' }, schema: { type: 'nonsense' }, messageTemplate: 'x' }] }),
    ).toThrow(/hooks\.mappings\[0\]\.schema: not a valid JSON Schema/);
  });
});
