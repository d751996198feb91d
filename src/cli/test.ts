import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { hookdError } from '../errors.js';
import { createLogger } from '../log.js';
import type { CompiledMapping } from '../mapping/index.js';
import { compileRoutes } from '../routes.js';
import { resolveConfig } from './config-source.js';
import { diffActions, type Expected, replayDelivery } from './fixtures.js';
import type { CliIo } from './io.js';

/** A case of `hookd test`: `<transformsDir>/fixtures/<mapping>/<case>.json` (docs/transforms.md#testing-with-fixtures). */
interface Case {
  readonly description?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly payload: unknown;
  readonly expect?: Expected;
}

export interface TestOptions {
  readonly config?: string;
  readonly update?: boolean;
}

/** A fixture folder's mapping: the one with that id, else the one whose `match.path` it is. */
const mappingNamed = (mappings: readonly CompiledMapping[], name: string) =>
  mappings.find((m) => m.id === name) ?? mappings.find((m) => m.matchPath === name);

/** The mapping folders to run: those named, or every folder under fixtures/. */
function foldersOf(fixtures: string, names: readonly string[]): string[] {
  const present = existsSync(fixtures)
    ? readdirSync(fixtures, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort()
    : [];
  return names.length > 0 ? [...names] : present;
}

/** One case run: its diff (empty when it passes), or what it recorded with --update. */
async function runCase(
  routes: Awaited<ReturnType<typeof compileRoutes>>,
  subPath: string,
  file: string,
  update: boolean,
): Promise<{ lines: string[]; updated?: boolean }> {
  let fixture: Case;
  try {
    fixture = JSON.parse(readFileSync(file, 'utf8')) as Case;
  } catch (err) {
    return { lines: [`cannot read the case: ${(err as Error).message}`] };
  }
  if (fixture === null || typeof fixture !== 'object' || !('payload' in fixture)) {
    return { lines: ['expected an object with "payload" (and "headers", "expect")'] };
  }
  const headers = { 'content-type': 'application/json', ...fixture.headers };
  const raw = Buffer.from(JSON.stringify(fixture.payload));
  const replayed = await replayDelivery(routes.mappings, subPath, { headers, raw });
  if (!replayed.ok) return { lines: [replayed.problem] };
  if (update) {
    writeFileSync(file, `${JSON.stringify({ ...fixture, expect: replayed.actions }, null, 2)}\n`);
    return { lines: [], updated: true };
  }
  if (fixture.expect === undefined) return { lines: ['no "expect": hookd test --update records what comes out'] };
  return { lines: diffActions(fixture.expect, replayed.actions) };
}

/**
 * `hookd test [mapping…] [--update]`: every fixture of the config's folder through its mapping,
 * as the gateway would take it; one line per case, non-zero on any failure or when nothing ran.
 */
export async function testCommand(names: readonly string[], options: TestOptions, io: CliIo): Promise<number> {
  const { config } = resolveConfig(options.config, io, { createSecrets: false });
  const fixtures = join(config.hooks.transformsDir, 'fixtures');
  const shown = relative(io.cwd, fixtures) || '.';
  const routes = await compileRoutes(config, createLogger({ level: 'silent' }));
  let passed = 0;
  let failed = 0;
  try {
    for (const folder of foldersOf(fixtures, names)) {
      const mapping = mappingNamed(routes.mappings.mappings, folder);
      if (!mapping) {
        failed++;
        io.out(`FAIL ${folder}: no mapping has this id or match.path`);
        continue;
      }
      const dir = join(fixtures, folder);
      const cases = existsSync(dir)
        ? readdirSync(dir)
            .filter((f) => f.endsWith('.json'))
            .sort()
        : [];
      if (cases.length === 0) {
        failed++;
        io.out(`FAIL ${folder}: no cases in ${shown}/${folder}/`);
        continue;
      }
      for (const name of cases) {
        const result = await runCase(routes, mapping.matchPath ?? folder, join(dir, name), options.update === true);
        const ok = result.lines.length === 0;
        if (ok) passed++;
        else failed++;
        io.out(`${ok ? (result.updated ? 'upd ' : 'ok  ') : 'FAIL'} ${folder}/${name}`);
        for (const line of result.lines) io.out(`    ${line}`);
      }
    }
  } finally {
    routes.transforms.close();
  }
  if (passed + failed === 0) throw hookdError('NOT_FOUND', { resource: 'fixtures', hint: `none under ${shown}/` });
  io.out(`hookd: ${passed} of ${passed + failed} case(s) ${options.update ? 'recorded' : 'passed'}`);
  return failed > 0 ? 1 : 0;
}
