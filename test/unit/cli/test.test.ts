import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { makeTempDir } from '../../helpers/hookd-process.js';

let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir();
  mkdirSync(join(temp.dir, 'transforms'));
  writeFileSync(
    join(temp.dir, 'hookd.json5'),
    JSON.stringify({
      hooks: {
        enabled: true,
        token: 'test-hook-token-0123456789',
        mappings: [
          { id: 'alerts', match: { path: 'alerts' }, transform: { module: 'alerts.ts' } },
          {
            // Keyed by its path: no id.
            match: { path: 'signed' },
            verify: { scheme: 'hmac', secret: '${SIGNED_SECRET}', header: 'x-signature' },
            action: 'wake',
            textTemplate: 'signed {{what}}',
          },
        ],
      },
    }),
  );
  writeFileSync(join(temp.dir, '.env'), 'SIGNED_SECRET=from-the-env-file\n');
  writeFileSync(
    join(temp.dir, 'transforms/alerts.ts'),
    "export default ({ payload }: { payload: { level: string } }) => {\n  if (payload.level === 'boom') throw new Error('the transform broke');\n  return payload.level === 'info' ? null : { kind: 'wake', text: `alert ${payload.level}`, mode: 'now' };\n};\n",
  );
  fixture('alerts', 'critical', { payload: { level: 'critical' }, expect: [{ kind: 'wake', text: 'alert critical' }] });
  fixture('alerts', 'info', { payload: { level: 'info' }, expect: null });
  fixture('signed', 'one', { payload: { what: 'it' }, expect: { kind: 'wake', text: 'signed it' } });
});
afterEach(() => temp.cleanup());

function fixture(mapping: string, name: string, body: object): string {
  const dir = join(temp.dir, 'transforms/fixtures', mapping);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.json`), JSON.stringify(body));
  return join(dir, `${name}.json`);
}

const test = (args: string[] = []) => runCli(['test', ...args], { cwd: temp.dir });

describe('hookd test (docs/transforms.md#testing-with-fixtures)', () => {
  it("passes every case, a signed mapping's signed with its own secret, one line each", async () => {
    const { code, out } = await test();
    expect(out.split('\n').filter((line) => /^(ok|FAIL)/.test(line))).toEqual([
      'ok   alerts/critical.json',
      'ok   alerts/info.json',
      'ok   signed/one.json',
    ]);
    expect(out).toContain('hookd: 3 of 3 case(s) passed');
    expect(code).toBe(0);
  });

  it('fails a case whose output differs, showing the field, and exits non-zero', async () => {
    fixture('alerts', 'critical', { payload: { level: 'critical' }, expect: [{ kind: 'wake', text: 'alert minor' }] });
    const { code, out } = await test(['alerts']);
    expect(out).toContain(
      'FAIL alerts/critical.json\n    action 0 text:\n    - expected "alert minor"\n    + got      "alert critical"',
    );
    expect(out).toContain('hookd: 1 of 2 case(s) passed');
    expect(out).not.toContain('signed/');
    expect(code).toBe(1);
  });

  it("prints a failing transform's own error", async () => {
    fixture('alerts', 'boom', { payload: { level: 'boom' }, expect: null });
    const { code, out } = await test();
    expect(out).toMatch(/FAIL alerts\/boom\.json\n {4}answered 500 TRANSFORM_FAILED: .*the transform broke/);
    expect(code).toBe(1);
  });

  it('--update records what each case becomes, and the next run passes', async () => {
    const file = fixture('alerts', 'new', { description: 'kept', payload: { level: 'major' } });
    expect((await test(['alerts'])).out).toContain('FAIL alerts/new.json\n    no "expect"');
    const updated = await test(['--update', 'alerts']);
    expect(updated.out).toContain('upd  alerts/new.json');
    const written = JSON.parse(readFileSync(file, 'utf8'));
    expect(written).toMatchObject({ description: 'kept', payload: { level: 'major' } });
    expect(written.expect).toEqual([expect.objectContaining({ kind: 'wake', text: 'alert major', mode: 'now' })]);
    expect((await test()).code).toBe(0);
  });

  it('fails a fixture folder that names no mapping, and a run with no fixtures at all', async () => {
    fixture('nothing-here', 'a', { payload: {}, expect: null });
    const { code, out } = await test();
    expect(out).toContain('FAIL nothing-here: no mapping has this id or match.path');
    expect(code).toBe(1);
    const empty = makeTempDir();
    try {
      writeFileSync(
        join(empty.dir, 'hookd.json5'),
        JSON.stringify({ hooks: { enabled: true, token: 'x'.repeat(24) } }),
      );
      const none = await runCli(['test'], { cwd: empty.dir });
      expect(none.err).toContain('no fixtures (none under transforms/fixtures/)');
      expect(none.code).toBe(1);
    } finally {
      empty.cleanup();
    }
  });
});
