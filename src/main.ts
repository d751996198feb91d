import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { type BackendParts, openBackend } from './backend.js';
import { channelLimits, createChannels } from './channels/index.js';
import { type Clock, systemClock } from './clock.js';
import { type Config, configInvalid, configWarnings } from './config/index.js';
import { watchConfigFile } from './config-reload.js';
import type { Logger } from './log.js';
import type { MailWatcherStatus } from './mail/index.js';
import { createLiveMappingEngine } from './mapping/index.js';
import { createMetrics, type Metrics } from './metrics.js';
import { createModelRouter, providerLimits } from './providers/index.js';
import { compileRoutes, type Routes } from './routes.js';
import {
  createJobOwner,
  createRuntime,
  defaultLimits,
  type ModelRouter,
  type Runtime,
  type TargetLimits,
} from './runtime/index.js';
import { gatewayTokenFile, readOrCreateSecret, type StoreBackend } from './store/index.js';
import type { Store } from './store/sqlite/index.js';
import { type TransformThreads, watchTransformThreads } from './transforms/index.js';

export interface Gateway {
  readonly app: FastifyInstance;
  /** The embedded store, when the gateway runs on it (not on PostgreSQL). */
  readonly store?: Store;
  readonly runtime: Runtime;
  /** `http://host:port` as bound. */
  readonly url: string;
  readonly gatewayToken: string;
  close(): Promise<void>;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/** What a gateway has started, stopped in the order that loses nothing (ingress first, the store last). */
interface Parts extends BackendParts {
  /** The routes in force: a reload of the config replaces them. */
  routes: { current: Routes };
  configWatch?: { close(): void };
  runtime?: Runtime;
  app?: FastifyInstance;
  watcher?: RunningMailWatch;
  transformThreads?: TransformThreads;
}

async function stopParts(parts: Parts): Promise<void> {
  const steps = [
    () => parts.configWatch?.close(),
    () => parts.transformThreads?.stop(),
    () => parts.watcher?.stop(),
    () => parts.app?.close(),
    () => parts.runtime?.stop(),
    () => parts.routes.current.transforms.close(),
    () => parts.checkpointer?.stop(),
    () => parts.store?.close(),
    () => parts.clockSkew?.stop(),
    () => parts.pool?.end(),
  ];
  // Every step runs even when one fails, so that nothing is left open; the first failure is thrown.
  const failures: unknown[] = [];
  for (const step of steps)
    await Promise.resolve()
      .then(step)
      .catch((err: unknown) => failures.push(err));
  if (failures.length > 0) throw failures[0];
}

/** The gateway token: configured, else generated once and kept beside the database. */
function gatewayTokenOf(config: Config): string {
  const token = config.gateway.auth.token ?? readOrCreateSecret(gatewayTokenFile(config.storage.path)).value;
  if (config.hooks.token !== undefined && config.hooks.token === token) {
    throw configInvalid(['hooks.token: must differ from gateway.auth.token (use a dedicated hook token)'], config.file);
  }
  return token;
}

/** Listens on `server.host:port`; resolves to the bound `http://host:port`. */
async function listen(app: FastifyInstance, config: Config, log: Logger): Promise<string> {
  if (!LOOPBACK.test(config.server.host)) {
    log.warn(
      { host: config.server.host },
      'listening beyond loopback: keep hook endpoints behind a private network or a trusted reverse proxy',
    );
  }
  await app.listen({ host: config.server.host, port: config.server.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.server.port;
  const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  return `http://${host}:${port}`;
}

/** The mail watcher as the gateway holds it: its status is there while it runs on this node. */
interface RunningMailWatch {
  status(): MailWatcherStatus | undefined;
  stop(): Promise<void>;
}

/**
 * Starts the mail watcher when `hooks.mail.watch` is configured and not turned off. On a shared
 * store it runs on the one node holding the `mail` lease (docs/scale.md), and its cursor is shared,
 * so the node taking it over goes on where the last one stopped.
 */
async function startMailWatch(
  config: Config,
  url: string,
  backend: StoreBackend,
  log: Logger,
): Promise<RunningMailWatch | undefined> {
  const mail = config.hooks.mail;
  const watch = mail?.watch;
  const hookToken = config.hooks.token;
  if (!watch || !hookToken) return undefined;
  // imapflow and mailparser cost about 300 ms to load: only a gateway that watches mail pays.
  const { createMailWatcher, startClaimed } = await import('./mail/index.js');
  const account = mail?.account ?? watch.imap.user;
  const make = () =>
    createMailWatcher({
      account,
      watch,
      hookUrl: watch.hookUrl ?? `${url}${config.hooks.path}/mail`,
      hookToken,
      meta: backend.meta,
      log,
    });
  const where = { account, mailbox: watch.mailbox };
  const notice =
    'mail watch not started: another process watches this mailbox (hookd mail watch?); stop it, or serve with --no-mail-watch';
  if (!backend.share) return startClaimed(backend.meta, where, make, (pid) => log.error({ pid, ...where }, notice));
  const owner = createJobOwner({
    share: backend.share,
    name: 'mail',
    log: log.child({ component: 'mail-watch' }),
    make,
  });
  await owner.start();
  return { status: () => owner.running?.status(), stop: owner.stop };
}

/** How a gateway is started besides its config. */
export interface GatewayOptions {
  models?: ModelRouter;
  mailWatch?: boolean;
  clock?: Clock;
  /** Reads the config file again: given, the file is watched and reloaded (docs/configuration.md#reloading-the-configuration). */
  reload?: () => Config;
}

/**
 * The first routes, the engine the app holds (which a reload of the config points at new
 * mappings), the runs-at-once limits a reload keeps up to date, and how routes are compiled.
 */
async function liveRoutes(config: Config, log: Logger, metrics: ReturnType<typeof createMetrics>) {
  const compile = (using: Config) =>
    compileRoutes(using, log, {
      watch: true,
      isolate: true,
      observe: (mapping, seconds) => metrics.transformSeconds.observe({ mapping }, seconds),
      onProcessEnd: (end) => metrics.transformProcessEnds.inc({ end }),
    });
  const first = await compile(config);
  const mappings = createLiveMappingEngine(first.mappings);
  for (const warning of mappings.mappings.flatMap((m) => m.warnings)) log.warn({ warning }, 'configuration warning');
  const mappingLimits = new Map(
    mappings.mappings.flatMap((m) => (m.maxConcurrent === undefined ? [] : [[m.id, m.maxConcurrent] as const])),
  );
  return { compile, first, mappings, mappingLimits };
}

/** Composition root: store → runtime (adapters plugged into its ports) → app → listen. The caller owns signals. */
export async function startGateway(config: Config, log: Logger, options: GatewayOptions = {}): Promise<Gateway> {
  const gatewayToken = gatewayTokenOf(config);
  for (const warning of configWarnings(config)) log.warn({ warning }, 'configuration warning');
  const metrics = createMetrics();
  const live = await liveRoutes(config, log, metrics);
  const { first, mappings } = live;
  const { actionOptions } = first;
  const parts: Parts = { routes: { current: first } };
  try {
    const clock = options.clock ?? systemClock;
    const backend = await openBackend(config, parts, log, clock);
    const store = parts.store;
    // Alert links point at the console: as configured, else this gateway's own, once it listens.
    let url: string | undefined;
    const consoleUrl = () => config.hooks.alerts.consoleUrl ?? (url === undefined ? '' : `${url}/ui/`);
    const using = { clock, metrics, consoleUrl, mappingLimits: live.mappingLimits, options };
    // On a shared store each line of the runtime names its node (as its leases do: host:pid:id).
    const runtimeLog = backend.share ? log.child({ node: backend.share.node }) : log;
    const runtime = createGatewayRuntime(config, runtimeLog, backend, parts, using);
    const queries = { ...runtime.queries, mailStatus: () => parts.watcher?.status() };
    const deps = {
      mappings,
      metrics,
      config,
      log,
      sink: runtime.sink,
      actionOptions,
      gatewayToken,
      queries,
      operator: runtime,
      consoleSessions: backend.consoleSessions,
      clock,
      ...(runtime.outcomes ? { outcomes: runtime.outcomes } : {}),
    };
    const app = await buildApp(deps);
    parts.app = app;
    url = await listen(app, config, log);
    await runtime.start();
    await startWatches(config, log, live, parts, options.reload);
    log.info({ url, hooksPath: config.hooks.enabled ? config.hooks.path : null }, 'hookd listening');
    if (options.mailWatch !== false) parts.watcher = await startMailWatch(config, url, backend, runtimeLog);
    let closed: Promise<void> | undefined;
    return {
      app,
      ...(store ? { store } : {}),
      runtime,
      url,
      gatewayToken,
      close: () => (closed ??= stopParts(parts)),
    };
  } catch (err) {
    // Whatever started is stopped, so that a failed start exits instead of lingering.
    await stopParts(parts).catch(() => undefined);
    throw err;
  }
}

/** The runtime over the backend with its adapters plugged in (models, channels, limits), its gauges attached. */
function createGatewayRuntime(
  config: Config,
  log: Logger,
  backend: StoreBackend,
  parts: Parts,
  using: {
    clock: Clock;
    metrics: Metrics;
    consoleUrl: () => string;
    mappingLimits: ReadonlyMap<string, number>;
    options: GatewayOptions;
  },
): Runtime {
  const { clock, metrics } = using;
  const runtime = createRuntime({
    consoleUrl: using.consoleUrl,
    clock,
    config,
    backend,
    log,
    onDelivery: (outcome) => metrics.deliveries.inc({ status: outcome.status }),
    models: using.options.models ?? createModelRouter(config),
    channels: createChannels(config, { now: clock.now }),
    mappingLimits: using.mappingLimits,
    limits: targetLimits(config),
  });
  parts.runtime = runtime;
  metrics.attach({
    queueDepth: () => runtime.queueDepth,
    runsByStatus: () => backend.data.runs.countByStatus(),
    clockSkewMs: () => parts.clockSkew?.skewMs,
    breakers: () => runtime.breakers(),
    ...(backend.ping ? { ping: backend.ping.bind(backend) } : {}),
  });
  return runtime;
}

/** What is watched once the gateway runs: isolated-vm's threads, and the config file when it reloads. */
async function startWatches(
  config: Config,
  log: Logger,
  live: Awaited<ReturnType<typeof liveRoutes>>,
  parts: Parts,
  reload: GatewayOptions['reload'],
): Promise<void> {
  // Every thread of the gateway's own is running by now: later ones are isolated-vm's
  // (none without a transform, so nothing to watch then).
  if (live.first.transforms.size > 0) parts.transformThreads = await watchTransformThreads({ log });
  const { file } = config;
  if (reload && file !== undefined)
    parts.configWatch = watchConfigFile({
      ...live,
      config: { ...config, file },
      load: reload,
      routes: parts.routes,
      log,
    });
}

/** Each provider's and channel's `maxConcurrent` (docs/runtime.md#fault-isolation), else the defaults. */
function targetLimits(config: Config): TargetLimits {
  const providers = providerLimits(config);
  const channels = channelLimits(config);
  const fallback = defaultLimits(config.agents.defaults.maxConcurrentRuns);
  return {
    provider: (name) => providers.get(name) ?? fallback.provider(name),
    channel: (id) => channels.get(id) ?? fallback.channel(id),
  };
}
