import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, expect } from 'vitest';
import type { AlertsView } from '../../src/alert-views.js';
import { loadConfig } from '../../src/config/index.js';
import { type Gateway, startGateway } from '../../src/main.js';
import type { RunView } from '../../src/views.js';
import { createManualClock, type ManualClock } from './clock.js';
import { type FakeChat, startFakeChat } from './fake-chat.js';
import { type FakeModel, type FakeReply, isHeartbeat, startFakeModel } from './fake-model.js';
import { makeTempDir } from './hookd-process.js';
import { type Answer, call, until } from './http.js';

/**
 * A gateway in this process on a manual clock, with alerts on: its chat service and model are
 * real servers on port 0 (docs/operations.md#alerts).
 */

export const HOOK_TOKEN = 'alerts-hook-token-0123456789';
export const GATEWAY_TOKEN = 'alerts-gateway-token-0123456789';
/** What the broken transform throws with: the payload's own text, which no alert may carry. */
export const SECRET = 'sk_live_51HsEcReTvAlUe';
export const GITHUB_SECRET = 'gh-webhook-secret';

const BROKEN = `export default function ({ payload }: { payload: { card: string } }) {
  throw new Error('cannot charge card ' + payload.card);
}
`;

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

export interface World {
  /** The running gateway (a new one after `restart`). */
  readonly gateway: Gateway;
  /** Stops the gateway and starts it again on the same store, clock and servers. */
  restart(): Promise<void>;
  readonly clock: ManualClock;
  readonly chat: FakeChat;
  readonly model: FakeModel;
  /** The warn and error lines the gateway logged. */
  readonly logs: Record<string, unknown>[];
  /** The texts of the alert messages the chat received, in order. */
  alertTexts(): string[];
  /** Waits until the chat received `n` alert messages, and answers their texts. */
  alertsSent(n: number): Promise<string[]>;
  /** POSTs a hook request with the hook token. */
  hook(path: string, json: unknown, headers?: Record<string, string>): Promise<Answer>;
  /** GETs an admin API path. */
  admin(path: string): Promise<Answer>;
  alerts(query?: string): Promise<AlertsView>;
  run(runId: string): Promise<RunView>;
}

/** Starts the world; `alerts` and `config` are merged into the gateway's configuration. */
export async function world(
  options: { alerts?: object; config?: Record<string, unknown>; reply?: () => FakeReply } = {},
): Promise<World> {
  const chat = await startFakeChat();
  cleanups.push(() => chat.close());
  const reply = options.reply ?? (() => 'the reply');
  const model = await startFakeModel((r) => (isHeartbeat(r) ? 'HEARTBEAT_OK' : reply()));
  cleanups.push(() => model.close());
  const clock = createManualClock();
  const data = makeTempDir();
  cleanups.push(data.cleanup);
  mkdirSync(join(data.dir, 'transforms'));
  writeFileSync(join(data.dir, 'transforms/broken.ts'), BROKEN);
  const logs: Record<string, unknown>[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => logs.push(JSON.parse(line)) });
  const config = loadConfig({
    data: {
      server: { host: '127.0.0.1', port: 0 },
      storage: { path: join(data.dir, 'hookd.db') },
      gateway: { auth: { token: GATEWAY_TOKEN } },
      hooks: {
        enabled: true,
        token: HOOK_TOKEN,
        transformsDir: join(data.dir, 'transforms'),
        mappings: [
          { id: 'billing', match: { path: 'billing' }, transform: { module: 'broken.ts' } },
          {
            id: 'typed',
            match: { path: 'typed' },
            schema: { type: 'object', required: ['n'], properties: { n: { type: 'number' } } },
            action: 'wake',
            textTemplate: 'typed {{n}}',
          },
          {
            id: 'gh',
            match: { path: 'gh' },
            verify: { scheme: 'github', secret: GITHUB_SECRET },
            action: 'wake',
            textTemplate: 'push',
          },
        ],
        ...(options.alerts ? { alerts: options.alerts } : {}),
      },
      agents: { defaults: { model: 'fake/m', heartbeat: { every: '0' } } },
      models: { providers: { fake: { baseUrl: model.url, apiKey: 'sk-model-key', api: 'openai-chat' } } },
      channels: { chatnet: { apiBase: chat.url, botToken: 'bot-alerts-token', defaultTo: '42' } },
      ...options.config,
    },
    env: {},
  });
  let gateway = await startGateway(config, log, { clock, mailWatch: false });
  cleanups.push(() => gateway.close());
  const alertTexts = () => chat.sent.map((m) => m.text).filter((t) => /^hookd (alert|recovered):/.test(t));
  const admin = (path: string) =>
    call(`${gateway.url}${path}`, { method: 'GET', headers: { authorization: `Bearer ${GATEWAY_TOKEN}` } });
  return {
    get gateway() {
      return gateway;
    },
    async restart() {
      await gateway.close();
      gateway = await startGateway(config, log, { clock, mailWatch: false });
    },
    clock,
    chat,
    model,
    logs,
    alertTexts,
    alertsSent: (n) => until(async () => (alertTexts().length >= n ? alertTexts() : undefined), `${n} alert(s)`),
    hook: (path, json, headers = { authorization: `Bearer ${HOOK_TOKEN}` }) =>
      call(`${gateway.url}/hooks/${path}`, { headers, json }),
    admin,
    alerts: async (query = '') => (await admin(`/api/alerts${query}`)).body as unknown as AlertsView,
    run: async (runId) => (await admin(`/api/runs/${runId}`)).body as unknown as RunView,
  };
}

/** Sends `n` requests to `path`, each answered `status`; answers their request ids. */
export async function burst(w: World, path: string, n: number, json: unknown, status: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const answer = await w.hook(path, json);
    expect(answer.status).toBe(status);
    ids.push(answer.headers['x-request-id'] as string);
  }
  return ids;
}
