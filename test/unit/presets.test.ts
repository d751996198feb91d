import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { testPreset } from '../../src/cli/presets.js';
import { builtInPresets, loadPreset } from '../../src/mapping/presets.js';
import { runCli } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/hookd-process.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const fn of cleanups.splice(0)) fn();
});

// One contract over every built-in preset's recorded fixtures (docs/presets.md): a new preset
// needs a folder, not new test code.
describe.each([...builtInPresets().values()].map((p) => [p.name, p] as const))('the %s preset', (_name, preset) => {
  it('has a README and at least three recorded fixtures', () => {
    expect(existsSync(join(preset.dir, 'README.md'))).toBe(true);
    expect(preset.fixtures.length).toBeGreaterThanOrEqual(3);
  });

  it('turns every fixture into exactly the actions it expects', async () => {
    const results = await testPreset(preset);
    expect(results.filter((r) => r.diff.length > 0)).toEqual([]);
  });

  // docs/presets.md#event-types: the label the request log keeps, read as the manifest declares.
  it('labels every fixture with the event type its manifest declares', async () => {
    const rule = preset.eventType;
    if (preset.name === 'mail') expect(rule).toBeUndefined();
    else expect(rule).toBeDefined();
    const labels = new Map((await testPreset(preset)).map((r) => [r.fixture, r.eventType]));
    for (const { name, text } of preset.fixtures) {
      const fixture = JSON.parse(text) as { headers?: Record<string, string>; body: unknown };
      const declared = rule && declaredIn(rule, fixture);
      expect({ name, label: labels.get(name) }).toEqual({ name, label: declared });
      // Only the mail preset and Slack's URL check (the gateway labels it) are without one.
      if (preset.name !== 'mail' && name !== 'fixtures/url-verification.json') expect(declared).toBeTypeOf('string');
    }
  });
});

/** What a rule reads from a fixture as recorded, read here by hand: a header (any case) or a dotted path. */
function declaredIn(
  rule: { header?: string; path?: string },
  fixture: { headers?: Record<string, string>; body: unknown },
): string | undefined {
  if (rule.header)
    return Object.entries(fixture.headers ?? {}).find(([name]) => name.toLowerCase() === rule.header)?.[1];
  const found = (rule.path ?? '')
    .split('.')
    .reduce<unknown>((node, key) => (node as Record<string, unknown>)?.[key], fixture.body);
  return typeof found === 'string' ? found : undefined;
}

describe('the built-in presets name the event types their senders send', () => {
  it.each([
    ['github', 'push.json', 'push'],
    ['github', 'push-form-encoded.json', 'push'],
    ['github', 'ping.json', 'ping'],
    ['gitlab', 'merge-request-opened.json', 'Merge Request Hook'],
    ['stripe', 'payment-intent-succeeded.json', 'payment_intent.succeeded'],
    ['slack', 'app-mention.json', 'app_mention'],
    ['alertmanager', 'resolved-notified.json', 'resolved'],
    ['grafana', 'firing.json', 'firing'],
    ['standard-webhooks', 'invoice-paid.json', 'invoice.paid'],
  ])('%s/fixtures/%s is %s', async (name, fixture, label) => {
    const preset = builtInPresets().get(name);
    if (!preset) throw new Error(`no ${name} preset`);
    const results = await testPreset(preset);
    expect(results.find((r) => r.fixture === `fixtures/${fixture}`)?.eventType).toBe(label);
  });
});

describe('hookd presets', () => {
  it('test fails with a readable diff when a fixture is changed', async () => {
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    const mail = builtInPresets().get('mail');
    if (!mail) throw new Error('no mail preset');
    cpSync(mail.dir, join(temp.dir, 'mail'), { recursive: true });
    const file = join(temp.dir, 'mail/fixtures/two-messages.json');
    const fixture = JSON.parse(readFileSync(file, 'utf8'));
    fixture.expect[1].sessionKey = 'hook:mail:changed';
    writeFileSync(file, JSON.stringify(fixture));
    const results = await testPreset(loadPreset(join(temp.dir, 'mail')));
    expect(results.find((r) => r.fixture === 'fixtures/two-messages.json')?.diff).toEqual([
      'action 1 sessionKey:\n    - expected "hook:mail:changed"\n    + got      "hook:mail:m2"',
    ]);
  });

  it('new scaffolds a folder that passes presets test', async () => {
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    const made = await runCli(['presets', 'new', 'acme-ci'], { cwd: temp.dir });
    expect(made.code).toBe(0);
    const tested = await runCli(['presets', 'test', './acme-ci'], { cwd: temp.dir });
    expect(tested.out).toBe('ok   acme-ci: 1 of 1 fixture(s)\n');
    expect(tested.code).toBe(0);
    const again = await runCli(['presets', 'new', 'acme-ci'], { cwd: temp.dir });
    expect(again.code).toBe(1);
    const bad = await runCli(['presets', 'new', 'Acme CI'], { cwd: temp.dir });
    expect(bad.err).toMatch(/NAME expects lower-case letters, digits and dashes/);
  });

  it('list, show and test run from the CLI', async () => {
    const list = await runCli(['presets', 'list'], { cwd: process.cwd() });
    expect(list.out).toMatch(/^mail\s+1\.0\.0\s+New mail/m);
    const show = await runCli(['presets', 'show', 'mail'], { cwd: process.cwd() });
    expect(show.out).toContain('# mail');
    expect(show.out).toContain('"forEach": "messages"');
    const test = await runCli(['presets', 'test'], { cwd: process.cwd() });
    expect(test.code).toBe(0);
    expect(test.out).toMatch(/^ok {3}mail: 3 of 3 fixture\(s\)$/m);
    const unknown = await runCli(['presets', 'show', 'gmail'], { cwd: process.cwd() });
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/no preset gmail \(built in: [a-z, -]*\bmail\b/);
  });
});
