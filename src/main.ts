import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { type ActionOptions, createModelCatalog } from './actions/index.js';
import { buildApp } from './app.js';
import { createChannels } from './channels/index.js';
import { type Config, configInvalid } from './config/index.js';
import type { Logger } from './log.js';
import type { MailWatcher } from './mail/index.js';
import { compileMappings, createMappingEngine, type MappingEngine } from './mapping/index.js';
import { createMetrics } from './metrics.js';
import { createModelRouter } from './providers/index.js';
import { createRuntime, type ModelRouter, type Runtime } from './runtime/index.js';
import {
  type Checkpointer,
  createStore,
  readOrCreateSecret,
  type Store,
  startCheckpointer,
  WRITER_AUTOCHECKPOINT_PAGES,
} from './store/index.js';
import { createTransformHost, type TransformHost } from './transforms/index.js';

export interface Gateway {
  readonly app: FastifyInstance;
  readonly store: Store;
  readonly runtime: Runtime;
  /** `http://host:port` as bound. */
  readonly url: string;
  readonly gatewayToken: string;
  close(): Promise<void>;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

export interface Routes {
  readonly actionOptions: ActionOptions;
  readonly mappings: MappingEngine;
  readonly transforms: TransformHost;
}

/** Compiles every mapping, template and transform (throws CONFIG_INVALID with paths and file:line:col). */
export async function compileRoutes(
  config: Config,
  log: Logger,
  options: { watch?: boolean; observe?: (mapping: string, seconds: number) => void } = {},
): Promise<Routes> {
  const actionOptions = {
    models: createModelCatalog(config),
    chatnetConfigured: config.channels.chatnet !== undefined,
  };
  const compiled = compileMappings(config, actionOptions.models);
  const transforms = await createTransformHost({
    config,
    mappings: compiled,
    log,
    watch: options.watch ?? false,
    ...(options.observe ? { observe: options.observe } : {}),
  });
  return {
    actionOptions,
    transforms,
    mappings: createMappingEngine({ config, mappings: compiled, actionOptions, transforms }),
  };
}

/** Composition root: store → runtime → app → listen. The caller owns signals. */
export async function startGateway(
  config: Config,
  log: Logger,
  options: { models?: ModelRouter; mailWatch?: boolean } = {},
): Promise<Gateway> {
  const gatewayToken =
    config.gateway.auth.token ?? readOrCreateSecret(join(dirname(config.storage.path), 'gateway-token')).value;
  if (config.hooks.token !== undefined && config.hooks.token === gatewayToken) {
    throw configInvalid(['hooks.token: must differ from gateway.auth.token (use a dedicated hook token)'], config.file);
  }
  const metrics = createMetrics();
  const { actionOptions, mappings, transforms } = await compileRoutes(config, log, {
    watch: true,
    observe: (mapping, seconds) => metrics.transformSeconds.observe({ mapping }, seconds),
  });
  const started: { store?: Store; app?: FastifyInstance; checkpointer?: Checkpointer } = {};
  try {
    const onDisk = config.storage.path !== ':memory:';
    const store = createStore({
      path: config.storage.path,
      synchronous: config.storage.synchronous,
      ...(onDisk ? { autocheckpointPages: WRITER_AUTOCHECKPOINT_PAGES } : {}),
    });
    started.store = store;
    const runtime = createRuntime({
      config,
      store,
      log,
      onDelivery: (outcome) => metrics.deliveries.inc({ status: outcome.status }),
      // The adapters the runtime's ports are plugged into.
      models: options.models ?? createModelRouter(config),
      mappingLimits: new Map(
        mappings.mappings.flatMap((m) => (m.maxConcurrent === undefined ? [] : [[m.id, m.maxConcurrent] as const])),
      ),
      channels: createChannels(config),
    });
    metrics.attach({ queueDepth: () => runtime.queueDepth, runsByStatus: () => store.runs.countByStatus() });
    let watcher: MailWatcher | undefined;
    const app = await buildApp({
      mappings,
      metrics,
      config,
      log,
      sink: runtime.sink,
      actionOptions,
      gatewayToken,
      queries: { ...runtime.queries, mailStatus: () => watcher?.status() },
    });
    started.app = app;
    if (!LOOPBACK.test(config.server.host)) {
      log.warn(
        { host: config.server.host },
        'listening beyond loopback: keep hook endpoints behind a private network or a trusted reverse proxy',
      );
    }
    await app.listen({ host: config.server.host, port: config.server.port });
    // Started once listening: a thread's start is not on the way to the first answer.
    const checkpointer = onDisk
      ? startCheckpointer({
          path: config.storage.path,
          onError: (message) => log.error({ error: message }, 'background WAL checkpoint failed'),
        })
      : undefined;
    started.checkpointer = checkpointer;
    runtime.start();
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.server.port;
    const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
    const url = `http://${host}:${port}`;
    log.info({ url, hooksPath: config.hooks.enabled ? config.hooks.path : null }, 'hookd listening');
    const mail = config.hooks.mail;
    if (mail?.watch && options.mailWatch !== false && config.hooks.token) {
      // imapflow and mailparser cost about 300 ms to load: only a gateway that watches mail pays.
      const { createMailWatcher } = await import('./mail/index.js');
      watcher = createMailWatcher({
        account: mail.account ?? mail.watch.imap.user,
        watch: mail.watch,
        hookUrl: mail.watch.hookUrl ?? `${url}${config.hooks.path}/mail`,
        hookToken: config.hooks.token,
        meta: store.meta,
        log,
      });
      watcher.start();
    }
    let closed = false;
    return {
      app,
      store,
      runtime,
      url,
      gatewayToken,
      async close() {
        if (closed) return;
        closed = true;
        await watcher?.stop();
        await app.close();
        await runtime.stop();
        transforms.close();
        await checkpointer?.stop();
        store.close();
      },
    };
  } catch (err) {
    // Whatever started is stopped, so that a failed start exits instead of lingering.
    await started.app?.close().catch(() => undefined);
    transforms.close();
    await started.checkpointer?.stop();
    started.store?.close();
    throw err;
  }
}
