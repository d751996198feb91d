import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlertsView } from '../../src/alert-views.js';
import { loadConfig } from '../../src/config/index.js';
import { type Gateway, startGateway } from '../../src/main.js';
import { createManualClock, type ManualClock } from '../helpers/clock.js';
import { type FakeChat, startFakeChat } from '../helpers/fake-chat.js';
import { call, until } from '../helpers/http.js';
import { type PgCluster, postgresTestsRun, startPgCluster } from '../helpers/postgres.js';

/**
 * Alerts on PostgreSQL with two nodes (docs/operations.md#alerts): each counts what it answers,
 * and a message both decide is stored, and sent, once.
 */

const HOOK = { authorization: 'Bearer pg-alerts-hook-token-0123456789' };
let cluster: PgCluster;
let chat: FakeChat;
const closing: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  if (!postgresTestsRun) return;
  cluster = await startPgCluster();
  chat = await startFakeChat();
}, 30_000);

afterAll(async () => {
  for (const close of closing.reverse()) await close().catch(() => undefined);
  await chat?.close();
  await cluster?.stop();
});

interface Node {
  readonly gateway: Gateway;
  readonly clock: ManualClock;
  readonly lines: { msg: string; kind?: string }[];
  send(json: unknown): Promise<number>;
}

async function node(): Promise<Node> {
  const lines: { msg: string }[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const config = loadConfig({
    data: {
      server: { port: 0 },
      storage: { kind: 'postgres', url: cluster.url },
      gateway: { auth: { token: 'pg-alerts-gateway-token-0123456789' } },
      hooks: {
        enabled: true,
        token: 'pg-alerts-hook-token-0123456789',
        mappings: [
          {
            id: 'typed',
            match: { path: 'typed' },
            schema: { type: 'object', required: ['n'], properties: { n: { type: 'number' } } },
            action: 'wake',
            textTemplate: 'typed {{n}}',
          },
        ],
        alerts: { mappingFailures: { count: 3, window: '1m' } },
      },
      agents: { defaults: { heartbeat: { every: '0' } } },
      channels: { chatnet: { apiBase: chat.url, botToken: 'bot-pg-alerts', defaultTo: '42' } },
    },
    env: {},
  });
  const clock = createManualClock();
  const gateway = await startGateway(config, log, { clock, mailWatch: false });
  closing.push(() => gateway.close());
  return {
    gateway,
    clock,
    lines,
    send: async (json) => (await call(`${gateway.url}/hooks/typed`, { headers: HOOK, json })).status,
  };
}

const alertTexts = () => chat.sent.map((m) => m.text).filter((t) => t.startsWith('hookd '));

describe.skipIf(!postgresTestsRun)('alerts with two nodes on one PostgreSQL', () => {
  it('counts per node, and sends a firing and its recovery once though both nodes decide them', async () => {
    const [a, b] = [await node(), await node()];
    // Each node sees three failures: both decide the firing, at the same moment.
    for (let i = 0; i < 2; i++) expect([await a.send({ n: 'x' }), await b.send({ n: 'x' })]).toEqual([400, 400]);
    expect(await Promise.all([a.send({ n: 'x' }), b.send({ n: 'x' })])).toEqual([400, 400]);
    await until(async () => (alertTexts().length >= 1 ? true : undefined), 'the alert');
    await until(
      async () =>
        [...a.lines, ...b.lines].some((l) => l.msg === 'alert already stored; not sent again') ? true : undefined,
      'the other node to find the firing stored',
    );
    expect(alertTexts()).toEqual([expect.stringMatching(/^hookd alert: mapping typed failed 3 times in 1 min\n/)]);

    // A success on one node recovers it; the other node's quiet window later finds the recovery stored.
    expect(await b.send({ n: 1 })).toBe(200);
    await until(async () => (alertTexts().length >= 2 ? true : undefined), 'the recovery');
    const before = a.lines.filter((l) => l.msg === 'alert already stored; not sent again').length;
    await a.clock.advance(65_000);
    await until(
      async () =>
        a.lines.filter((l) => l.msg === 'alert already stored; not sent again').length > before ? true : undefined,
      'node A to find the recovery stored',
    );
    expect(alertTexts()).toEqual([
      expect.stringMatching(/^hookd alert: mapping typed/),
      expect.stringMatching(/^hookd recovered: mapping typed \(it answered 200; /),
    ]);
    const listed = await call(`${a.gateway.url}/api/alerts`, {
      method: 'GET',
      headers: { authorization: 'Bearer pg-alerts-gateway-token-0123456789' },
    });
    expect((listed.body as unknown as AlertsView).alerts.map((x) => x.kind)).toEqual(['recovered', 'firing']);
  });
});
