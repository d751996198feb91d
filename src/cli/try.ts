import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type ActionOptions, parseAgentBody, parseWakeBody } from '../actions/index.js';
import type { Config } from '../config/index.js';
import { errorBody, hookdError } from '../errors.js';
import { classifyContentType, parseBody, toHookdError } from '../http/index.js';
import { createLogger } from '../log.js';
import { compileRoutes } from '../main.js';
import { buildView, type MappingEngine, type TemplateView, unresolvedNames } from '../mapping/index.js';
import { resolveConfig } from './config-source.js';
import type { CliIo } from './io.js';

export interface TryOptions {
  config?: string;
  payload: string;
  header: string[];
  query: string[];
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
    return await dryRun(name, options, io, { config, actionOptions, mappings });
  } finally {
    transforms.close();
  }
}

/** `path.field: {{name}}` for each name a template of the matched mapping reads and the view lacks. */
function unresolvedIn(mappings: MappingEngine, mappingId: string | undefined, view: TemplateView): string[] {
  const mapping = mappings.mappings.find((m) => m.id === mappingId);
  if (!mapping) return [];
  return mapping.templateNames.flatMap(({ field, names }) =>
    unresolvedNames(names, view).map((name) => `${mapping.configPath}.${field}: {{${name}}}`),
  );
}

async function dryRun(
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
    const kind = classifyContentType(headers['content-type']);
    if (!kind) throw hookdError('UNSUPPORTED_MEDIA_TYPE', { contentType: String(headers['content-type']) });
    const parsed = parseBody(kind, raw);
    if (!parsed.ok) throw parsed.error;
    const { payload } = parsed.body;
    if (subPath === 'wake' || subPath === 'agent') {
      const action = subPath === 'wake' ? parseWakeBody(payload) : parseAgentBody(payload, actionOptions);
      io.out(JSON.stringify({ ok: true, mapping: null, actions: [action] }, null, 2));
      return 0;
    }
    const search = new URLSearchParams(query).toString();
    const outcome = await mappings.route({
      subPath,
      payload,
      headers,
      query,
      url: `${config.hooks.path}/${subPath}${search ? `?${search}` : ''}`,
      rawBody: raw,
      payloadIsJsonOfRawBody: parsed.body.payloadIsJsonOfRawBody,
    });
    if (outcome.kind === 'none') throw hookdError('NO_MAPPING', { hook: subPath });
    const unresolved = unresolvedIn(mappings, outcome.mappingId, buildView({ payload, headers, query, path: subPath }));
    for (const line of unresolved)
      io.err(`hookd: warning: ${line} resolves to nothing in this payload (renders empty)`);
    io.out(
      JSON.stringify(
        {
          ok: true,
          mapping: outcome.mappingId,
          actions: outcome.actions,
          ...(unresolved.length ? { unresolved } : {}),
        },
        null,
        2,
      ),
    );
    return 0;
  } catch (err) {
    const e = toHookdError(err);
    io.err(JSON.stringify({ ...errorBody(e), status: e.statusCode }));
    return 1;
  }
}
