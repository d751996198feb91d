import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { loadConfig } from '../config/index.js';
import { hookdError } from '../errors.js';
import { createLogger } from '../log.js';
import { availablePresets, builtInPresets, loadPreset, type Preset } from '../mapping/index.js';
import { compileRoutes } from '../routes.js';
import { signatureSchemes } from '../schemes/index.js';
import { resolveConfig } from './config-source.js';
import { diffActions, replayDelivery } from './fixtures.js';
import type { CliIo } from './io.js';

/** The secret fixtures are signed with: a fixture records the payload, not the sender's secret. */
const FIXTURE_SECRET = 'hookd-fixture-secret';

/** A recorded delivery: what the source sends, and the actions it must become (null: nothing, 204). */
interface Fixture {
  readonly description?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body: unknown;
  /** Options of the `hooks.presets` entry for this fixture (e.g. `notifyResolved`). */
  readonly options?: Readonly<Record<string, unknown>>;
  readonly expect: readonly Record<string, unknown>[] | null;
}

/** What one fixture became against what it should: empty when they agree. */
export interface FixtureResult {
  readonly fixture: string;
  readonly diff: readonly string[];
  /** The event type its delivery was labelled with (docs/mappings.md#event-types). */
  readonly eventType?: string;
}

/**
 * Replays every fixture of `preset` through the mapping engine as the gateway would take it:
 * signed with FIXTURE_SECRET when the preset verifies a scheme (and the signature checked),
 * the body parsed by its content type, then compared with `expect` key by key.
 */
export async function testPreset(preset: Preset): Promise<FixtureResult[]> {
  const results: FixtureResult[] = [];
  for (const { name, text } of preset.fixtures) {
    let fixture: Fixture;
    try {
      fixture = JSON.parse(text) as Fixture;
    } catch (err) {
      results.push({ fixture: name, diff: [`not JSON: ${(err as Error).message}`] });
      continue;
    }
    results.push({ fixture: name, ...(await replay(preset, fixture)) });
  }
  return results;
}

async function replay(preset: Preset, fixture: Fixture): Promise<Omit<FixtureResult, 'fixture'>> {
  const entry = { name: preset.name, ...(preset.verify ? { secret: FIXTURE_SECRET } : {}), ...fixture.options };
  // A plugin is enabled from its folder; a built-in's name runs the built-in.
  const plugins = builtInPresets().has(preset.name) ? [] : [preset.dir];
  const config = loadConfig({
    data: { hooks: { enabled: true, token: 'fixture-hook-token-0123456789', plugins, presets: [entry] } },
    env: {},
  });
  const { mappings, transforms } = await compileRoutes(config, createLogger({ level: 'silent' }));
  try {
    const raw = Buffer.from(typeof fixture.body === 'string' ? fixture.body : JSON.stringify(fixture.body));
    const subPath = mappings.mappings[0]?.matchPath ?? preset.name;
    const replayed = await replayDelivery(mappings, subPath, {
      ...(fixture.headers ? { headers: fixture.headers } : {}),
      raw,
    });
    if (!replayed.ok) return { diff: [replayed.problem] };
    const { eventType } = replayed;
    return { diff: diffActions(fixture.expect, replayed.actions), ...(eventType === undefined ? {} : { eventType }) };
  } finally {
    transforms.close();
  }
}

/** A built-in preset by name, or a preset folder by its path (`./acme`, `/opt/presets/acme`). */
function presetNamed(name: string, cwd = process.cwd()): Preset {
  if (name.startsWith('.') || isAbsolute(name)) return loadPreset(resolve(cwd, name));
  const preset = builtInPresets().get(name);
  if (!preset)
    throw hookdError('NOT_FOUND', {
      resource: 'preset',
      id: name,
      hint: `built in: ${[...builtInPresets().keys()].join(', ')}`,
    });
  return preset;
}

/** `hookd presets show NAME`: its README, options and mappings. */
export async function presetsShowCommand(name: string, io: CliIo): Promise<number> {
  const preset = presetNamed(name);
  if (preset.readme) io.out(preset.readme.trimEnd());
  io.out('');
  io.out(`options: ${JSON.stringify(preset.options ?? {}, null, 2)}`);
  if (preset.verify) io.out(`verify: ${preset.verify.scheme} (the secret in option "${preset.verify.secretOption}")`);
  io.out(`mappings: ${JSON.stringify(preset.mappings, null, 2)}`);
  return 0;
}

/** `hookd presets test [NAME|DIR…]`: replays every fixture; non-zero with a readable diff on any mismatch. */
export async function presetsTestCommand(names: readonly string[], io: CliIo): Promise<number> {
  const presets = names.length > 0 ? names.map((name) => presetNamed(name, io.cwd)) : [...builtInPresets().values()];
  let failed = 0;
  for (const preset of presets) {
    const results = await testPreset(preset);
    const bad = results.filter((r) => r.diff.length > 0);
    failed += bad.length;
    io.out(
      `${bad.length === 0 ? 'ok  ' : 'FAIL'} ${preset.name}: ${results.length - bad.length} of ${results.length} fixture(s)`,
    );
    for (const r of bad) io.out(`  ${r.fixture}:\n${r.diff.map((line) => `    ${line}`).join('\n')}`);
  }
  return failed > 0 ? 1 : 0;
}

/** `hookd presets list [--config FILE]`: the built-in presets, and the config's plugins. */
export async function presetsListCommand(config: string | undefined, io: CliIo): Promise<number> {
  const { config: loaded } = resolveConfig(config, io, { createSecrets: false });
  const { presets, problems } = availablePresets(loaded);
  for (const preset of presets.values()) {
    const from = builtInPresets().has(preset.name) ? 'built in' : preset.dir;
    io.out(`${preset.name.padEnd(20)} ${preset.version.padEnd(8)} ${preset.description} (${from})`);
  }
  for (const problem of problems) io.err(`hookd: ${problem}`);
  return problems.length > 0 ? 1 : 0;
}

/** `hookd presets new NAME`: a preset folder in the current folder that passes `presets test`. */
export async function presetsNewCommand(name: string, io: CliIo): Promise<number> {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(name)) {
    throw hookdError('CLI_USAGE', { option: 'NAME', expected: 'lower-case letters, digits and dashes', got: name });
  }
  const dir = resolve(io.cwd, name);
  if (existsSync(dir))
    throw hookdError('CLI_USAGE', { option: 'NAME', expected: 'a folder that does not exist yet', got: dir });
  mkdirSync(join(dir, 'fixtures'), { recursive: true });
  const title = name.charAt(0).toUpperCase() + name.slice(1);
  const files: Record<string, string> = {
    'preset.json5': `// The ${name} preset: see README.md, and docs/presets.md for the format.
{
  name: '${name}',
  description: '${title} webhooks: one agent run per event',
  version: '0.1.0',
  // When the sender signs its deliveries, its scheme (${signatureSchemes.map((s) => s.name).join(', ')}):
  // verify: { scheme: '…', secretOption: 'secret' },
  mappings: [{ id: '${name}', action: 'agent', name: '${title}', transform: { module: 'transform.ts' } }],
}
`,
    'transform.ts': `// The ${name} preset's transform: runs sandboxed like any transform (no Node APIs).
interface Request {
  payload: { event?: string; id?: string };
  headers: Record<string, string>;
  options?: Record<string, unknown>;
}

export default function ${name.replace(/-(.)/g, (_, c: string) => c.toUpperCase()).replace(/^\\d/, '_$&')}({ payload }: Request) {
  if (!payload?.event) return null; // nothing worth a run: 204
  return { message: \`${title} sent \${payload.event} (\${payload.id ?? 'no id'}).\`, sessionKey: \`hook:${name}:\${payload.id ?? 'events'}\` };
}
`,
    'fixtures/example.json': `${JSON.stringify(
      {
        description: 'An example delivery; replace it with ones recorded from the source',
        headers: { 'content-type': 'application/json' },
        body: { event: 'example.created', id: 'ex_1' },
        expect: [
          {
            kind: 'agent',
            name: title,
            sessionKey: `hook:${name}:ex_1`,
            message: `${title} sent example.created (ex_1).`,
          },
        ],
      },
      null,
      2,
    )}\n`,
    'README.md': `# ${name}\n\nWhat ${title} sends, how to point it at \`https://<your host>/hooks/${name}\`, and what comes out.\n`,
  };
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  io.out(`hookd: wrote ${dir}; check it with: hookd presets test ./${name}`);
  return 0;
}
