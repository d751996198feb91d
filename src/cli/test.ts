import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { hookdError, isHookdError } from '../errors.js';
import { createLogger } from '../log.js';
import type { CompiledMapping } from '../mapping/index.js';
import { compileRoutes } from '../routes.js';
import { resolveConfig } from './config-source.js';
import { errorDetails, type SchemaProblemView, structuredError } from './error-report.js';
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
  /** Print `{ ok, passed, failed, cases }` as JSON instead of lines. */
  readonly json?: boolean;
}

/** One case's outcome: what `--json` prints of it, and the lines people read under its FAIL. */
interface CaseResult {
  readonly mapping: string;
  readonly case: string;
  readonly file: string;
  readonly ok: boolean;
  readonly updated?: boolean;
  /** Where what came out differs from `expect`. */
  readonly diff?: readonly string[];
  /** The error the delivery was answered with, instead of actions. */
  readonly error?: Record<string, unknown>;
  readonly lines: readonly string[];
}

type Routes = Awaited<ReturnType<typeof compileRoutes>>;

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

/** Reads a case, or says why it cannot be run. */
function readCase(file: string): Case | string {
  let fixture: Case;
  try {
    fixture = JSON.parse(readFileSync(file, 'utf8')) as Case;
  } catch (err) {
    return `cannot read the case: ${(err as Error).message}`;
  }
  if (fixture === null || typeof fixture !== 'object' || !('payload' in fixture))
    return 'expected an object with "payload" (and "headers", "expect")';
  return fixture;
}

/** One case run: passed, its diff, its error (located, with every schema problem), or what --update recorded. */
async function runCase(
  routes: Routes,
  mapping: CompiledMapping,
  subPath: string,
  file: string,
  update: boolean,
): Promise<Omit<CaseResult, 'mapping' | 'case' | 'file'>> {
  const fixture = readCase(file);
  if (typeof fixture === 'string') return { ok: false, lines: [fixture] };
  const headers = { 'content-type': 'application/json', ...fixture.headers };
  const raw = Buffer.from(JSON.stringify(fixture.payload));
  const replayed = await replayDelivery(routes.mappings, subPath, { headers, raw });
  if (!replayed.ok) {
    const e = replayed.error;
    if (!e) return { ok: false, lines: [replayed.problem] };
    // A live request is answered with the schema's first problem; a test shows every one.
    const problems: readonly SchemaProblemView[] | undefined = isHookdError(e, 'PAYLOAD_INVALID')
      ? mapping.payloadProblems?.(fixture.payload)
      : undefined;
    const error = { status: e.statusCode, ...structuredError(e, problems) };
    return { ok: false, error, lines: [replayed.problem, ...errorDetails(e, problems)] };
  }
  if (update) {
    writeFileSync(file, `${JSON.stringify({ ...fixture, expect: replayed.actions }, null, 2)}\n`);
    return { ok: true, updated: true, lines: [] };
  }
  if (fixture.expect === undefined)
    return { ok: false, lines: ['no "expect": hookd test --update records what comes out'] };
  const diff = diffActions(fixture.expect, replayed.actions);
  return { ok: diff.length === 0, ...(diff.length > 0 ? { diff } : {}), lines: diff };
}

/** Every case of the folders asked for; a folder without its mapping or without cases is one failure. */
async function runFolders(routes: Routes, fixtures: string, names: readonly string[], update: boolean, cwd: string) {
  const results: CaseResult[] = [];
  for (const folder of foldersOf(fixtures, names)) {
    const dir = join(fixtures, folder);
    const mapping = mappingNamed(routes.mappings.mappings, folder);
    const cases = existsSync(dir)
      ? readdirSync(dir)
          .filter((f) => f.endsWith('.json'))
          .sort()
      : [];
    const whole = { mapping: folder, case: '', file: dir, ok: false };
    if (!mapping) results.push({ ...whole, lines: ['no mapping has this id or match.path'] });
    else if (cases.length === 0) results.push({ ...whole, lines: [`no cases in ${relative(cwd, dir) || '.'}/`] });
    else
      for (const name of cases) {
        const file = join(dir, name);
        const result = await runCase(routes, mapping, mapping.matchPath ?? folder, file, update);
        results.push({ mapping: folder, case: name, file, ...result });
      }
  }
  return results;
}

/** `FAIL example/warning.json` and the lines under it; `ok`, `upd`; a folder's own failure on one line. */
function printCase(r: CaseResult, io: CliIo): void {
  const mark = r.ok ? (r.updated ? 'upd ' : 'ok  ') : 'FAIL';
  if (r.case === '') {
    io.out(`${mark} ${r.mapping}: ${r.lines.join('; ')}`);
    return;
  }
  io.out(`${mark} ${r.mapping}/${r.case}`);
  for (const line of r.lines) io.out(line === '' ? '' : `    ${line}`);
}

/**
 * `hookd test [mapping…] [--update] [--json]`: every fixture of the config's folder through its
 * mapping, as the gateway would take it; one line per case with what failed under it (a diff,
 * the error with a transform's frames and code frame, every schema problem); non-zero on any
 * failure or when nothing ran.
 */
export async function testCommand(names: readonly string[], options: TestOptions, io: CliIo): Promise<number> {
  const { config } = resolveConfig(options.config, io, { createSecrets: false });
  const fixtures = join(config.hooks.transformsDir, 'fixtures');
  const shown = relative(io.cwd, fixtures) || '.';
  const routes = await compileRoutes(config, createLogger({ level: 'silent' }));
  let results: CaseResult[];
  try {
    results = await runFolders(routes, fixtures, names, options.update === true, io.cwd);
  } finally {
    routes.transforms.close();
  }
  if (results.length === 0) throw hookdError('NOT_FOUND', { resource: 'fixtures', hint: `none under ${shown}/` });
  const passed = results.filter((r) => r.ok).length;
  const failed = results.length - passed;
  if (options.json) {
    const cases = results.map(({ lines, file, ...r }) => ({ ...r, file: relative(io.cwd, file) || file }));
    io.out(JSON.stringify({ ok: failed === 0, passed, failed, cases }, null, 2));
  } else {
    for (const r of results) printCase(r, io);
    io.out(`hookd: ${passed} of ${results.length} case(s) ${options.update ? 'recorded' : 'passed'}`);
  }
  return failed > 0 ? 1 : 0;
}
