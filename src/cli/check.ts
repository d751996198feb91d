import { type Config, configWarnings, inspectConfig } from '../config/index.js';
import { isHookdError } from '../errors.js';
import { createLogger } from '../log.js';
import { compileRoutes } from '../routes.js';
import { configFileOf, envFor } from './config-source.js';
import { byPlace, createLocator, formatFinding } from './findings.js';
import type { CliIo } from './io.js';

export { PATHED } from './findings.js';

/**
 * `hookd check [--config FILE] [--json]`: every problem of the config in one pass (syntax,
 * environment, schema, cross-key rules, mappings, templates, transforms), each located;
 * non-zero when any is an error.
 */
export async function checkCommand(options: { config?: string; json?: boolean }, io: CliIo): Promise<number> {
  const file = configFileOf(options.config, io);
  const report = inspectConfig(
    file === undefined
      ? {
          data: { hooks: { enabled: true, token: 'x'.repeat(43) }, storage: { path: 'data/hookd.db' } },
          baseDir: io.cwd,
          env: io.env,
        }
      : { file, env: envFor(file, io) },
  );
  const { findingOf } = createLocator(file, report.text);
  const findings = report.problems.map((p) => findingOf(p, 'error'));
  let mappings = 0;
  if (report.config) {
    const later = await laterProblems(report.config, findings.length > 0);
    mappings = later.mappings;
    // What the compiler says of a value the schema refused (or of what holds it) is said already.
    const refused = findings.map((f) => f.path).filter((path) => path !== '');
    const nested = (inner: string, outer: string) =>
      inner === outer || inner.startsWith(`${outer}.`) || inner.startsWith(`${outer}[`);
    const saidAlready = (path: string) => refused.some((r) => nested(path, r) || (path !== '' && nested(r, path)));
    for (const problem of later.problems) {
      const finding = findingOf(problem, 'error');
      if (!saidAlready(finding.path)) findings.push(finding);
    }
    for (const w of [...configWarnings(report.config), ...later.warnings]) {
      findings.push(findingOf(w, 'warning'));
    }
    // The database `serve` would use, when it is PostgreSQL: reachable, the login, the schema.
    const { storage } = report.config;
    if (storage.kind === 'postgres' && storage.url) {
      const diagnosis = await (await import('../store/postgres/index.js')).diagnosePostgres(
        storage.url,
        storage.poolSize,
      );
      for (const p of diagnosis.problems) findings.push(findingOf(p, 'error'));
      for (const w of diagnosis.warnings) findings.push(findingOf(w, 'warning'));
    }
  }
  const mask = secretMask(report.config?.storage.url);
  for (const [i, f] of findings.entries()) findings[i] = { ...f, message: mask(f.message) };
  findings.sort(byPlace(file));
  const errors = findings.filter((f) => f.severity === 'error').length;
  const where = file ? ` (${file})` : ' (embedded default)';
  if (options.json) {
    io.out(JSON.stringify({ ok: errors === 0, file: file ?? null, mappings, findings }, null, 2));
  } else {
    for (const f of findings) (f.severity === 'error' ? io.err : io.out)(formatFinding(f, io.cwd));
    if (errors > 0) io.err(`hookd: ${errors} problem(s) in the configuration${where}`);
    else io.out(`hookd: configuration OK${where}, ${mappings} mapping(s)`);
  }
  return errors > 0 ? 1 : 0;
}

/**
 * Replaces every secret of `storage.url` (its password, `?password=`, `?sslpassword=`, raw or
 * decoded) with `***`: whatever a message quotes (a driver's error, a schema value), `check`
 * never prints them.
 */
function secretMask(url: string | undefined): (text: string) => string {
  const secrets = new Set<string>();
  const add = (value: string | null | undefined) => {
    if (!value) return;
    secrets.add(value);
    try {
      secrets.add(decodeURIComponent(value));
      secrets.add(decodeURIComponent(value.replace(/\+/g, ' ')));
    } catch {
      // Not percent-encoded text: the raw value is masked.
    }
    secrets.add(encodeURIComponent(value));
  };
  if (url) {
    add(/^[a-z][a-z0-9+.-]*:\/\/[^:/?#@]*:([^@/?#]*)@/i.exec(url)?.[1]);
    for (const [, value] of url.matchAll(/[?&](?:ssl)?password=([^&#]*)/gi)) add(value);
  }
  // Longest first, so that a secret inside another is not left half shown.
  const ordered = [...secrets].filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
  return (text) => ordered.reduce((out, secret) => out.split(secret).join('***'), text);
}

/** The mappings', templates' and transforms' problems (a config whose schema failed may not compile at all). */
async function laterProblems(
  config: Config,
  refusedBefore: boolean,
): Promise<{ problems: readonly string[]; warnings: readonly string[]; mappings: number }> {
  try {
    const { mappings, transforms } = await compileRoutes(config, createLogger({ level: 'silent' }));
    transforms.close();
    const warnings = mappings.mappings.flatMap((m) => m.warnings);
    return { problems: [], warnings, mappings: mappings.mappings.length };
  } catch (err) {
    if (isHookdError(err, 'CONFIG_INVALID')) return { problems: err.params.problems, warnings: [], mappings: 0 };
    // Values the schema refused can make compiling fail in other ways; they are reported already.
    if (refusedBefore) return { problems: [], warnings: [], mappings: 0 };
    throw err;
  }
}
