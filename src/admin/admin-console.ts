import type { FastifyInstance } from 'fastify';
import type { ActionOptions } from '../actions/index.js';
import { hookdError } from '../errors.js';
import { type CompiledMapping, describeEventType, type MappingEngine } from '../mapping/index.js';
import type { AdminQueries } from '../runtime/index.js';
import type { BreakerView, FixtureView, MappingView, OverviewView } from '../views.js';
import { dryRun } from './dry-run.js';
import { createFolderFixtures, type FolderFixtures } from './folder-fixtures.js';
import { createPresetFixtures, type PresetFixtures } from './preset-fixtures.js';

/** What the console's own API needs (docs/runtime.md#request-log-and-replay): the live engine, and the gauges. */
export interface ConsoleApiOptions {
  readonly queries: AdminQueries;
  readonly hooksPath: string;
  readonly actionOptions: ActionOptions;
  readonly mappings?: MappingEngine;
  /** `<transformsDir>/fixtures`: the config folder's own cases, offered beside a preset's. */
  readonly fixturesDir?: string;
  readonly queueDepth?: () => number;
  /** This node's circuit breakers (docs/runtime.md#circuit-breakers). */
  readonly breakers?: () => readonly BreakerView[];
  /** Transform latency since start, served as the metrics give it. */
  readonly transformLatency?: () => Promise<OverviewView['transforms']>;
}

/** What the playground posts: a hook name, the body as pasted, and headers. */
interface TryBody {
  path?: unknown;
  body?: unknown;
  headers?: unknown;
}

const PLAYGROUND_MAX_BYTES = 1024 * 1024;

/** The console's read models and the playground, behind the admin guard. */
export function consoleApiRoutes(app: FastifyInstance, options: ConsoleApiOptions): void {
  const { queries, mappings } = options;
  // Made again when a reload of the config brings other mappings (docs/configuration.md#reloading-the-configuration).
  let compiled: readonly CompiledMapping[] | undefined;
  let made: { presets: PresetFixtures; cases: FolderFixtures } | undefined;
  const fixturesOf = () => {
    if (!made || compiled !== mappings?.mappings) {
      compiled = mappings?.mappings;
      made = {
        presets: createPresetFixtures(compiled ?? []),
        cases: createFolderFixtures(options.fixturesDir, compiled ?? []),
      };
    }
    return made;
  };
  app.get(
    '/api/mappings',
    async (): Promise<{ mappings: MappingView[] }> => ({
      mappings: (mappings?.mappings ?? []).map((m) => mappingView(m, fixturesOf())),
    }),
  );
  app.get<{ Params: { name: string; fixture: string } }>(
    '/api/presets/:name/fixtures/:fixture',
    async (request): Promise<FixtureView> => fixturesOf().presets.get(request.params.name, request.params.fixture),
  );
  app.get<{ Params: { id: string; fixture: string } }>(
    '/api/mappings/:id/fixtures/:fixture',
    async (request): Promise<FixtureView> => fixturesOf().cases.get(request.params.id, request.params.fixture),
  );
  // The playground: the same path as `hookd try` (parse, schema, templates, the sandboxed
  // transform); nothing is stored or dispatched.
  app.post('/api/try', { bodyLimit: PLAYGROUND_MAX_BYTES + 4096 }, async (request) => {
    const input = (request.body ?? {}) as TryBody;
    if (typeof input.path !== 'string' || !/^[A-Za-z0-9._~-][A-Za-z0-9._~/-]{0,200}$/.test(input.path))
      throw hookdError('INVALID_FIELD', { field: 'path', expected: 'a hook name such as github' });
    if (typeof input.body !== 'string')
      throw hookdError('INVALID_FIELD', { field: 'body', expected: 'the body as text' });
    const headers: Record<string, string> = {};
    if (input.headers !== undefined) {
      if (typeof input.headers !== 'object' || input.headers === null || Array.isArray(input.headers))
        throw hookdError('INVALID_FIELD', { field: 'headers', expected: 'an object of header names to values' });
      for (const [name, value] of Object.entries(input.headers)) {
        if (typeof value !== 'string')
          throw hookdError('INVALID_FIELD', { field: `headers.${name}`, expected: 'a string' });
        headers[name.toLowerCase()] = value;
      }
    }
    headers['content-type'] ??= 'application/json';
    const subPath = input.path.replace(/^\/+|\/+$/g, '');
    const context = {
      hooksPath: options.hooksPath,
      actionOptions: options.actionOptions,
      ...(mappings ? { mappings } : {}),
    };
    return dryRun({ subPath, raw: Buffer.from(input.body), headers, query: {} }, context);
  });
  app.get('/api/sessions', async () => queries.sessions(200));
  app.get<{ Params: { runId: string } }>('/api/runs/:runId/transcript', async (request) => {
    const transcript = await queries.transcript(request.params.runId);
    if (!transcript) throw hookdError('NOT_FOUND', { resource: 'run', id: request.params.runId });
    return transcript;
  });
  app.get(
    '/api/overview',
    async (): Promise<OverviewView> => ({
      ...(await queries.overview()),
      queueDepth: options.queueDepth?.() ?? null,
      transforms: (await options.transformLatency?.()) ?? null,
      breakers: options.breakers?.().filter((b) => b.state !== 'closed') ?? [],
    }),
  );
}

/** A mapping as the console lists it, with the fixtures the playground offers for it. */
function mappingView(
  m: CompiledMapping,
  { presets, cases }: { presets: PresetFixtures; cases: FolderFixtures },
): MappingView {
  const eventType = describeEventType(m.eventType, m.transform !== undefined);
  const offered = [...((m.preset && presets.list(m.preset.name)) ?? []), ...cases.list(m)];
  return {
    id: m.id,
    configPath: m.configPath,
    ...(m.matchPath === undefined ? {} : { path: m.matchPath }),
    ...(m.matchSource === undefined ? {} : { source: m.matchSource }),
    ...(m.matchHeaders
      ? { headers: m.matchHeaders.map(([name, values]) => `${name}: ${[...values].join(' | ')}`) }
      : {}),
    ...(m.transform ? { transform: m.transform.module } : {}),
    ...(m.verify ? { verify: m.verify.scheme } : {}),
    ...(m.forEach ? { forEach: m.forEach } : {}),
    schema: m.checkPayload !== undefined,
    ...(eventType ? { eventType } : {}),
    ...(m.preset ? { preset: m.preset.name } : {}),
    ...(offered.length > 0 ? { fixtures: offered } : {}),
  };
}
