import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ActionOptions } from '../actions/index.js';
import { dryRun } from '../admin/index.js';
import type { Config } from '../config/index.js';
import { type HookdError, hookdError, isHookdError } from '../errors.js';
import { toHookdError } from '../ingress/index.js';
import { createLogger } from '../log.js';
import type { MappingEngine } from '../mapping/index.js';
import { compileRoutes } from '../routes.js';
import { resolveConfig } from './config-source.js';
import type { CliIo } from './io.js';

export interface TryOptions {
  config?: string;
  payload: string;
  header: string[];
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
  const headers: Record<string, string> = {};
  for (const entry of options.header) {
    const at = entry.indexOf(':');
    if (at <= 0) throw hookdError('CLI_USAGE', { option: '--header', expected: 'K:V', got: entry });
    headers[entry.slice(0, at).trim().toLowerCase()] = entry.slice(at + 1).trim();
  }
  const query: Record<string, string> = {};
  for (const entry of options.query) {
    const at = entry.indexOf('=');
    if (at <= 0) throw hookdError('CLI_USAGE', { option: '--query', expected: 'K=V', got: entry });
    query[entry.slice(0, at)] = entry.slice(at + 1);
  }
  const subPath = name.replace(/^\/+|\/+$/g, '');
  // `-` is standard input, as with curl's `-d @-`.
  const raw = readFileSync(options.payload === '-' ? 0 : resolve(io.cwd, options.payload));
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
    if (options.json) io.out(JSON.stringify({ ok: false, status: e.statusCode, error: structured(e) }, null, 2));
    else io.err(human(e));
    return 1;
  }
}

/** `{ code, message, location?, frames?, codeFrame? }`: a failed transform keeps where its author's code threw. */
function structured(e: HookdError): Record<string, unknown> {
  const error = { code: e.code, message: e.message };
  if (!isHookdError(e, 'TRANSFORM_FAILED')) return error;
  const { location, frames, codeFrame } = e.params;
  return {
    ...error,
    ...(location ? { location } : {}),
    ...(frames ? { frames } : {}),
    ...(codeFrame ? { codeFrame } : {}),
  };
}

/** The message with the code and status, then the author's frames and the code frame of a failed transform. */
function human(e: HookdError): string {
  const lines = [`hookd: ${e.message} (${e.code}, HTTP ${e.statusCode})`];
  if (isHookdError(e, 'TRANSFORM_FAILED')) {
    for (const frame of e.params.frames ?? []) lines.push(`    ${frame}`);
    if (e.params.codeFrame) lines.push('', e.params.codeFrame);
  }
  return lines.join('\n');
}
