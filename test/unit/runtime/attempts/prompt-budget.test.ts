import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createPromptBudgets, historyWithin } from '../../../../src/runtime/attempts/index.js';
import { unwrapExternalContent } from '../../../../src/runtime/index.js';
import { requestOf } from '../../../../src/runtime/runs/run-turn.js';
import type { RunRecord, SessionMessage } from '../../../../src/store/index.js';

const user = (content: string): SessionMessage => ({ role: 'user', content });
const assistant = (content: string): SessionMessage => ({ role: 'assistant', content });
const size = (messages: readonly SessionMessage[]) => messages.reduce((n, m) => n + m.content.length, 0);

describe('historyWithin (docs/runtime.md#context-length)', () => {
  it('keeps everything that fits', () => {
    const history = [user('a'), assistant('b'), user('c'), assistant('d')];
    expect(historyWithin(history, 100)).toEqual(history);
  });

  it('leaves the oldest out first, and never starts with a reply whose question went', () => {
    const history = [user('q'.repeat(5000)), assistant('a'.repeat(500)), user('newer'), assistant('newest')];
    expect(historyWithin(history, 800)).toEqual([user('newer'), assistant('newest')]);
  });

  it('cuts the oldest message kept to the room left, with a note', () => {
    const history = [user('q'.repeat(5000)), assistant('answer')];
    const kept = historyWithin(history, 3006);
    expect(kept.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(kept[0]?.content).toMatch(/^q+ … \[truncated by hookd: \d+ of 5000 characters left out\]$/);
    expect(size(kept)).toBeLessThanOrEqual(3006);
  });

  it('sends no history when nothing fits', () => {
    expect(historyWithin([user('x'.repeat(10)), assistant('y')], 0)).toEqual([]);
  });
});

describe('prompt budgets', () => {
  it('start at the configured budget and halve from the size a model refused, never under 10,000', () => {
    const budgets = createPromptBudgets(pino({ level: 'silent' }));
    expect(budgets.of('p/m', 200_000)).toBe(200_000);
    expect(budgets.refused('p/m', 180_000)).toBe(90_000);
    expect(budgets.of('p/m', 200_000)).toBe(90_000);
    expect(budgets.of('p/other', 200_000)).toBe(200_000);
    // Two requests refused at once: the smaller half stays.
    expect(budgets.refused('p/m', 190_000)).toBe(90_000);
    expect(budgets.refused('p/m', 15_000)).toBe(10_000);
    expect(budgets.refused('p/m', 10_000)).toBeUndefined();
    expect(budgets.of('p/m', 200_000)).toBe(10_000);
  });
});

describe("an agent run's request", () => {
  const run = (message: string): RunRecord => ({
    id: 'r1',
    sessionKey: 'hook:r1',
    message,
    model: 'p/m',
    wakeMode: 'now',
    deliver: false,
    channel: 'last',
    allowUnsafeExternalContent: false,
    contentSource: 'webhook',
    status: 'queued',
    createdAt: 1,
  });

  it('trims the session history first, keeping the message whole', () => {
    const history = [user('h'.repeat(30_000)), assistant('old reply'), user('recent'), assistant('recent reply')];
    const { messages, content } = requestOf(run('m'.repeat(15_000)), history, 20_000);
    expect(size(messages)).toBeLessThanOrEqual(20_000);
    expect(messages.at(-1)).toEqual(user(content));
    expect(unwrapExternalContent(content)).toBe('m'.repeat(15_000));
    expect(messages.slice(1, -1)).toEqual([assistant('old reply'), user('recent'), assistant('recent reply')]);
    expect(messages[0]?.content).toMatch(/^h+ … \[truncated by hookd: \d+ of 30000 characters left out\]$/);
  });

  it('cuts a message too big alone, with a note, inside its safety wrapper', () => {
    const { messages, content } = requestOf(
      run('m'.repeat(50_000)),
      [user('e'.repeat(500)), assistant('reply')],
      20_000,
    );
    expect(messages).toEqual([user(content)]);
    expect(content.length).toBeLessThanOrEqual(20_000);
    expect(unwrapExternalContent(content)).toMatch(/^m+ … \[truncated by hookd: \d+ of 50000 characters left out\]$/);
  });
});
