import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createModelRouter } from '../../../../src/providers/index.js';
import { createDelivery } from '../../../../src/runtime/delivery/delivery.js';
import { askModel, heartbeatTurn, heartbeatTurnParts } from '../../../../src/runtime/heartbeat/heartbeat-turn.js';
import { createStore, type Store, sqliteBackend, sqliteContract } from '../../../../src/store/sqlite/index.js';
import { charsOf, type FakeModel, startFakeModel } from '../../../helpers/fake-model.js';

/**
 * A heartbeat turn against a model whose context holds less than the smallest prompt budget
 * (10,000 characters, docs/runtime.md#context-length): each refusal halves the request, and the
 * smallest one refused ends the turn with its events pending.
 */

let model: FakeModel | undefined;
let store: Store | undefined;
afterEach(async () => {
  await model?.close();
  store?.close();
});

/** A turn's parts over an in-memory store holding one 30,000-character event, and the warnings it logs. */
async function tooSmallAModel() {
  model = await startFakeModel(() => 'HEARTBEAT_OK', { maxContextChars: 5000 });
  const models = createModelRouter({ models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' } } } });
  store = createStore({ path: ':memory:', synchronous: 'normal' });
  store.events.insert({
    id: 'e1',
    sessionKey: 'main',
    text: 'x'.repeat(30_000),
    origin: 'hook',
    allowUnsafeExternalContent: false,
    contentSource: 'webhook',
    createdAt: 1,
  });
  const warnings: string[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line).msg) });
  const parts = heartbeatTurnParts({
    store: sqliteContract(store),
    models,
    delivery: createDelivery({ channels: new Map(), ackMaxChars: 300, meta: sqliteBackend(store).meta, log }),
    model: 'fake/m',
    timeoutSeconds: 5,
    log,
  });
  return { parts, store, model, warnings };
}

describe("a heartbeat's model request", () => {
  it('is asked again at half the size after each context refusal, and the refusal at the smallest budget ends it', async () => {
    const { parts, store, model } = await tooSmallAModel();
    const pending = store.events.pending('main', 200);
    await expect(askModel(parts, pending, [], new AbortController().signal)).rejects.toMatchObject({
      code: 'MODEL_CONTEXT_EXCEEDED',
    });
    const sizes = model.requests.map(charsOf);
    expect(sizes).toHaveLength(3);
    expect(sizes[0]).toBeGreaterThan(30_000);
    expect(sizes[1]).toBeLessThanOrEqual((sizes[0] as number) / 2);
    expect(sizes[2]).toBeLessThanOrEqual(10_000);
  });
});

describe('a heartbeat turn that fails', () => {
  it('leaves its events pending, says so, and asks for no follow-up turn', async () => {
    const { parts, store, warnings } = await tooSmallAModel();
    expect(await heartbeatTurn(parts, 'request', new AbortController().signal)).toBe(false);
    expect(store.events.countPending('main')).toBe(1);
    expect(warnings).toContain('heartbeat turn failed; events stay pending');
    expect(store.messages.has('main')).toBe(false);
  });
});
