import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { hookdError } from '../errors.js';
import type { CompiledMapping } from '../mapping/index.js';
import { readRegularFile } from '../read-file.js';
import type { FixtureItem, FixtureView } from '../views.js';
import { isName } from './preset-fixtures.js';

/**
 * The config folder's own fixtures, for the console's playground (docs/console.md#pages): the
 * cases `hookd test` runs, `<transformsDir>/fixtures/<mapping id or match.path>/<case>.json`
 * (`{ headers?, payload, expect }`). Read when asked, so that a case written a moment ago is
 * offered; found by name among the folder's files, never by a path from a request.
 */
export interface FolderFixtures {
  /** A mapping's cases, by name and description. */
  list(mapping: CompiledMapping): readonly FixtureItem[];
  /** One case's headers and payload (as the body); 400 for a name that is not one, 404 for an unknown one. */
  get(mappingId: string, name: string): FixtureView;
}

/** A case the playground could not post (`POST /api/try` takes 1 MiB) is not offered. */
const MAX_FIXTURE_BYTES = 1024 * 1024;

interface Case {
  readonly description?: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly payload: unknown;
}

/** The cases under `fixturesDir` (none when it is undefined or missing) of `mappings`. */
export function createFolderFixtures(
  fixturesDir: string | undefined,
  mappings: readonly CompiledMapping[],
): FolderFixtures {
  /** The mapping's folder: named by its id, else by its match.path (as `hookd test` finds it). */
  const folderOf = (m: CompiledMapping) => {
    if (fixturesDir === undefined) return undefined;
    const names = [m.id, m.matchPath].filter((n): n is string => n !== undefined && n !== '' && isName(n));
    return names.map((n) => join(fixturesDir, n)).find((dir) => existsSync(dir) && statSync(dir).isDirectory());
  };
  const casesOf = (m: CompiledMapping): { name: string; file: string }[] => {
    const dir = folderOf(m);
    if (!dir) return [];
    return readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => ({ name: basename(f, '.json'), file: join(dir, f) }));
  };
  return {
    list: (m) =>
      casesOf(m).flatMap(({ name, file }) => {
        const found = caseIn(file);
        if (!found) return [];
        return [{ name, ...(found.description ? { description: found.description } : {}), kind: 'folder' as const }];
      }),
    get(mappingId, name) {
      if (!isName(name))
        throw hookdError('INVALID_FIELD', { field: 'fixture', expected: "a fixture's name, such as warning" });
      const mapping = mappings.find((m) => m.id === mappingId);
      if (!mapping) throw hookdError('NOT_FOUND', { resource: 'mapping', id: mappingId });
      const cases = casesOf(mapping);
      const found = cases.find((c) => c.name === name);
      const read = found && caseIn(found.file);
      if (!read) {
        const known = cases.map((c) => c.name).join(', ');
        throw hookdError('NOT_FOUND', { resource: 'fixture', id: name, hint: `${mappingId} has: ${known || 'none'}` });
      }
      // A case's payload is the JSON sent (`hookd test` sends it so): a string payload is a JSON string.
      return {
        headers: read.headers,
        body: typeof read.payload === 'string' ? JSON.stringify(read.payload) : read.payload,
      };
    },
  };
}

/**
 * A case file as the playground takes it; undefined when it is too large, not a regular file (a
 * FIFO named `*.json` blocked the event loop on its read: every hook request waited) or not a case.
 */
function caseIn(file: string): Case | undefined {
  const read = readRegularFile(file, MAX_FIXTURE_BYTES);
  if (!('text' in read)) return undefined;
  try {
    const data = JSON.parse(read.text) as {
      description?: unknown;
      headers?: unknown;
      payload?: unknown;
    };
    if (data === null || typeof data !== 'object' || !('payload' in data)) return undefined;
    const given = data.headers !== null && typeof data.headers === 'object' ? data.headers : {};
    const headers = Object.fromEntries(Object.entries(given).filter(([, v]) => typeof v === 'string'));
    return {
      ...(typeof data.description === 'string' ? { description: data.description } : {}),
      headers,
      payload: data.payload,
    };
  } catch {
    // Not JSON: `hookd test` says so; the playground leaves it out.
    return undefined;
  }
}
