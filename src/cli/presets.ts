import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { loadConfig } from '../config/index.js';
import { hookdError } from '../errors.js';
import { classifyContentType, parseBody, signDelivery, toHookdError, verifySignature } from '../http/index.js';
import { createLogger } from '../log.js';
import { compileRoutes } from '../main.js';
import { builtInPresets, type Preset } from '../mapping/index.js';
import type { CliIo } from './io.js';

/** The secret fixtures are signed with: a fixture records the payload, not the sender's secret. */
export const FIXTURE_SECRET = 'hookd-fixture-secret';

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
}

/**
 * Replays every fixture of `preset` through the mapping engine as the gateway would take it:
 * signed with FIXTURE_SECRET when the preset verifies a scheme (and the signature checked),
 * the body parsed by its content type, then compared with `expect` key by key.
 */
export async function testPreset(preset: Preset): Promise<FixtureResult[]> {
  const results: FixtureResult[] = [];
  for (const file of preset.fixtures) {
    const fixture = JSON.parse(readFileSync(file, 'utf8')) as Fixture;
    const name = file.slice(preset.dir.length + 1);
    results.push({ fixture: name, diff: await replay(preset, fixture) });
  }
  return results;
}

async function replay(preset: Preset, fixture: Fixture): Promise<string[]> {
  const entry = { name: preset.name, ...(preset.verify ? { secret: FIXTURE_SECRET } : {}), ...fixture.options };
  const config = loadConfig({
    data: { hooks: { enabled: true, token: 'fixture-hook-token-0123456789', presets: [entry] } },
    env: {},
  });
  const { mappings, transforms } = await compileRoutes(config, createLogger({ level: 'silent' }));
  try {
    const raw = Buffer.from(typeof fixture.body === 'string' ? fixture.body : JSON.stringify(fixture.body));
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(fixture.headers ?? {})) headers[key.toLowerCase()] = value;
    const subPath = mappings.mappings[0]?.matchPath ?? preset.name;
    const verifier = mappings.verifiersFor(subPath)[0]?.verify;
    if (verifier) {
      // The delivery id the fixture recorded, so that what the id shows is the same every run.
      const id = headers['webhook-id'] ?? headers['svix-id'] ?? headers['x-github-delivery'];
      Object.assign(headers, signDelivery(verifier, raw, undefined, id));
      const verified = verifySignature(verifier, headers, raw);
      if (!verified.ok) return [`the signature the fixture was signed with does not verify: ${verified.reason}`];
    }
    let actual: unknown[] | null;
    try {
      const kind = classifyContentType(headers['content-type']);
      if (!kind) throw hookdError('UNSUPPORTED_MEDIA_TYPE', { contentType: String(headers['content-type']) });
      const parsed = parseBody(kind, raw);
      if (!parsed.ok) throw parsed.error;
      const outcome = await mappings.route({
        subPath,
        payload: parsed.body.payload,
        headers,
        query: {},
        url: `/hooks/${subPath}`,
        rawBody: raw,
        payloadIsJsonOfRawBody: parsed.body.payloadIsJsonOfRawBody,
      });
      actual = outcome.kind === 'none' || outcome.actions.length === 0 ? null : [...outcome.actions];
    } catch (err) {
      const e = toHookdError(err);
      return [`answered ${e.statusCode} ${e.code}: ${e.message}`];
    }
    return diffActions(fixture.expect, actual);
  } finally {
    transforms.close();
  }
}

/** `expect` against what came out: each expected action's keys must equal the actual ones. */
function diffActions(expected: Fixture['expect'], actual: readonly unknown[] | null): string[] {
  const show = (value: unknown) => JSON.stringify(value);
  if (expected === null || actual === null) {
    return expected === actual ? [] : [`expected ${show(expected)}, got ${show(actual)}`];
  }
  const diff: string[] = [];
  if (expected.length !== actual.length) diff.push(`expected ${expected.length} action(s), got ${actual.length}`);
  expected.forEach((want, i) => {
    const got = (actual[i] ?? {}) as Record<string, unknown>;
    for (const [key, value] of Object.entries(want)) {
      if (!isDeepStrictEqual(got[key], value)) {
        diff.push(`action ${i} ${key}:\n    - expected ${show(value)}\n    + got      ${show(got[key])}`);
      }
    }
  });
  return diff;
}

/** `hookd presets list`: every built-in preset, its version and what it does. */
export async function presetsListCommand(io: CliIo): Promise<number> {
  for (const preset of builtInPresets().values()) {
    io.out(`${preset.name.padEnd(20)} ${preset.version.padEnd(8)} ${preset.description}`);
  }
  return 0;
}

function presetNamed(name: string): Preset {
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
  io.out(readFileSync(`${preset.dir}/README.md`, 'utf8').trimEnd());
  io.out('');
  io.out(`options: ${JSON.stringify(preset.options ?? {}, null, 2)}`);
  if (preset.verify) io.out(`verify: ${preset.verify.scheme} (the secret in option "${preset.verify.secretOption}")`);
  io.out(`mappings: ${JSON.stringify(preset.mappings, null, 2)}`);
  return 0;
}

/** `hookd presets test [NAME…]`: replays every fixture; non-zero with a readable diff on any mismatch. */
export async function presetsTestCommand(names: readonly string[], io: CliIo): Promise<number> {
  const presets = names.length > 0 ? names.map(presetNamed) : [...builtInPresets().values()];
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
