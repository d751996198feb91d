import { basename } from 'node:path';
import { hookdError } from '../errors.js';
import type { CompiledMapping, PresetFixture } from '../mapping/index.js';
import type { FixtureItem, FixtureView } from '../views.js';

/**
 * The recorded fixtures of the presets in force, for the console's playground
 * (docs/runtime.md#admin-api): the texts the preset's loader read from its folder when it
 * loaded (never read again: a file swapped for a symlink later is not followed), found by
 * name, never by a path from a request.
 */
export interface PresetFixtures {
  /** A preset's fixtures, by name and description; undefined for an unknown preset. */
  list(preset: string): readonly FixtureItem[] | undefined;
  /** One fixture's headers and body; 400 for a name that is not one, 404 for an unknown one. */
  get(preset: string, name: string): FixtureView;
}

interface Fixture extends FixtureView {
  readonly name: string;
  readonly description?: string;
}

/** The fixtures of the presets whose mappings are in force, parsed once when first asked for. */
export function createPresetFixtures(mappings: readonly CompiledMapping[]): PresetFixtures {
  const files = new Map<string, readonly PresetFixture[]>();
  for (const m of mappings) if (m.preset) files.set(m.preset.name, m.preset.fixtures);
  const read = new Map<string, readonly Fixture[]>();
  const fixturesOf = (preset: string): readonly Fixture[] | undefined => {
    const found = read.get(preset);
    if (found) return found;
    const listed = files.get(preset);
    if (!listed) return undefined;
    const fixtures = listed.flatMap((file) => fixtureIn(file) ?? []);
    read.set(preset, fixtures);
    return fixtures;
  };
  return {
    list: (preset) =>
      fixturesOf(preset)?.map(({ name, description }) => ({
        name,
        ...(description ? { description } : {}),
        kind: 'preset' as const,
      })),
    get(preset, name) {
      if (!isName(preset))
        throw hookdError('INVALID_FIELD', { field: 'name', expected: "a preset's name, such as github" });
      if (!isName(name))
        throw hookdError('INVALID_FIELD', { field: 'fixture', expected: "a fixture's name, such as push" });
      const fixtures = fixturesOf(preset);
      if (!fixtures) throw hookdError('NOT_FOUND', { resource: 'preset', id: preset, hint: 'in force here' });
      const fixture = fixtures.find((f) => f.name === name);
      if (!fixture) {
        const known = fixtures.map((f) => f.name).join(', ');
        throw hookdError('NOT_FOUND', { resource: 'fixture', id: name, hint: `${preset} has: ${known || 'none'}` });
      }
      return { headers: fixture.headers, body: fixture.body };
    },
  };
}

/** A fixture as the playground takes it; undefined when it is not a fixture. */
function fixtureIn(file: PresetFixture): Fixture | undefined {
  try {
    const data = JSON.parse(file.text) as { description?: unknown; headers?: unknown; body?: unknown };
    if (data === null || typeof data !== 'object' || !('body' in data)) return undefined;
    const headers = Object.fromEntries(
      Object.entries(isObject(data.headers) ? data.headers : {}).filter(([, v]) => typeof v === 'string'),
    ) as Record<string, string>;
    const description = typeof data.description === 'string' ? { description: data.description } : {};
    return { name: basename(file.name, '.json'), ...description, headers, body: data.body };
  } catch {
    // A fixture that is not JSON: `hookd presets test` says so; the playground leaves it out.
    return undefined;
  }
}

/** A name, never a path: no `/`, `\\` or `..` (they are looked up by name among listed files anyway). */
export const isName = (text: string) => !/[/\\]|\.\./.test(text);

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
