import type { ActionOptions } from '../actions/index.js';
import { dryRun } from '../admin/index.js';
import type { Config } from '../config/index.js';
import { hookdError, isHookdError } from '../errors.js';
import { toHookdError } from '../ingress/index.js';
import { createLogger } from '../log.js';
import type { MappingEngine } from '../mapping/index.js';
import { compileRoutes } from '../routes.js';
import { resolveConfig } from './config-source.js';
import { type DeliveryOptions, readDelivery } from './delivery-input.js';
import { errorDetails, errorHeadline, type SchemaProblemView, structuredError } from './error-report.js';
import type { CliIo } from './io.js';

export interface TryOptions extends DeliveryOptions {
  config?: string;
  query: string[];
  /** Print an error as JSON on stdout (the actions are JSON either way). */
  json?: boolean;
}

/** `hookd try <name>`: dry-runs the mapping engine and prints the resulting actions; dispatches nothing. */
export async function tryCommand(name: string, options: TryOptions, io: CliIo): Promise<number> {
  const { config } = resolveConfig(options.config, io, { createSecrets: false });
  const log = createLogger({
    level: config.log.level === 'info' ? 'warn' : config.log.level,
    destination: process.stderr,
  });
  const { actionOptions, mappings, transforms } = await compileRoutes(config, log);
  try {
    return await dryRunCommand(name, options, io, { config, actionOptions, mappings });
  } finally {
    transforms.close();
  }
}

async function dryRunCommand(
  name: string,
  options: TryOptions,
  io: CliIo,
  { config, actionOptions, mappings }: { config: Config; actionOptions: ActionOptions; mappings: MappingEngine },
): Promise<number> {
  const { raw, headers } = readDelivery(options, io);
  const query: Record<string, string> = {};
  for (const entry of options.query) {
    const at = entry.indexOf('=');
    if (at <= 0) throw hookdError('CLI_USAGE', { option: '--query', expected: 'K=V', got: entry });
    query[entry.slice(0, at)] = entry.slice(at + 1);
  }
  const subPath = name.replace(/^\/+|\/+$/g, '');
  try {
    const outcome = await dryRun(
      { subPath, raw, headers, query },
      { hooksPath: config.hooks.path, actionOptions, mappings },
    );
    for (const line of outcome.unresolved ?? [])
      io.err(`hookd: warning: ${line} resolves to nothing in this payload (renders empty)`);
    io.out(JSON.stringify(outcome, null, 2));
    return 0;
  } catch (err) {
    const e = toHookdError(err);
    const problems = isHookdError(e, 'PAYLOAD_INVALID') ? schemaProblems(mappings, subPath, raw, headers) : undefined;
    if (options.json)
      io.out(JSON.stringify({ ok: false, status: e.statusCode, error: structuredError(e, problems) }, null, 2));
    else io.err(`hookd: ${[errorHeadline(e), ...errorDetails(e, problems)].join('\n')}`);
    return 1;
  }
}

/** Every problem the mapping's schema finds in a JSON body (a live request is answered with the first). */
function schemaProblems(
  mappings: MappingEngine,
  subPath: string,
  raw: Buffer,
  headers: Record<string, string>,
): readonly SchemaProblemView[] | undefined {
  let payload: unknown;
  try {
    payload = JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
  return mappings.resolve(subPath, payload, headers)?.payloadProblems?.(payload);
}
