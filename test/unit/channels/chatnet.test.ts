import { afterEach, describe, expect, it, vi } from 'vitest';
import { CHATNET_MAX_CHARS, createChatnetChannel } from '../../../src/channels/index.js';
import { until, waits } from '../../helpers/clock.js';
import { type FakeChat, startFakeChat } from '../../helpers/fake-chat.js';

vi.mock('node:timers/promises', async (importOriginal) =>
  (await import('../../helpers/clock.js')).timersOnGlobalClock(await importOriginal()),
);

let chat: FakeChat | undefined;
afterEach(async () => {
  vi.useRealTimers();
  waits.length = 0;
  await chat?.close();
  chat = undefined;
});

/** Fake timeouts only: sockets, and the fake chat server, stay real. */
const fakeTimeouts = () => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });

describe('chatnet channel', () => {
  it('sends { chat_id, text } to /bot<token>/sendMessage', async () => {
    chat = await startFakeChat();
    await createChatnetChannel({ apiBase: chat.url, botToken: 'b-1' }).send('42', 'hello');
    expect(chat.sent).toEqual([{ botToken: 'b-1', chat_id: '42', text: 'hello' }]);
  });

  it('splits texts over 4096 characters into several messages', async () => {
    chat = await startFakeChat();
    const text = `${'a'.repeat(4000)}\n${'b'.repeat(4000)}\n${'c'.repeat(100)}`;
    await createChatnetChannel({ apiBase: chat.url, botToken: 'b' }).send('1', text);
    expect(chat.sent.map((m) => m.text.length)).toEqual([4000, 4000, 100]);
    for (const m of chat.sent) expect(m.text.length).toBeLessThanOrEqual(CHATNET_MAX_CHARS);
  });

  it('waits retry_after seconds on 429, then sends', async () => {
    chat = await startFakeChat();
    chat.throttleNext(1, 30);
    fakeTimeouts();
    const sending = createChatnetChannel({ apiBase: chat.url, botToken: 'b' }).send('1', 'after a wait');
    await until(() => waits.length === 1);
    expect(waits[0]?.delayMs).toBe(30_000);
    await vi.advanceTimersByTimeAsync(29_999);
    expect(waits[0]?.ended).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await sending;
    expect(chat.sent).toHaveLength(1);
  });

  it('waits at most 60 s whatever retry_after asks', async () => {
    chat = await startFakeChat();
    chat.throttleNext(1, 3600);
    fakeTimeouts();
    const sending = createChatnetChannel({ apiBase: chat.url, botToken: 'b' }).send('1', 'capped');
    await until(() => waits.length === 1);
    expect(waits[0]?.delayMs).toBe(60_000);
    await vi.advanceTimersByTimeAsync(60_000);
    await sending;
    expect(chat.sent).toHaveLength(1);
  });

  it('retries an unreachable service after 0.5, 1 and 2 s, then fails after four attempts', async () => {
    chat = await startFakeChat();
    const apiBase = chat.url;
    await chat.close();
    chat = undefined;
    fakeTimeouts();
    let failure: Error | undefined;
    createChatnetChannel({ apiBase, botToken: 'b' })
      .send('1', 'nobody listens')
      .catch((e: Error) => {
        failure = e;
      });
    for (const [n, delayMs] of [500, 1000, 2000].entries()) {
      await until(() => waits.length === n + 1);
      expect(waits[n]?.delayMs).toBe(delayMs);
      await vi.advanceTimersByTimeAsync(delayMs);
    }
    await until(() => failure !== undefined || waits.length > 3);
    expect(waits).toHaveLength(3);
    expect(failure?.message).toMatch(/^chatnet unreachable: .* \(after 4 attempts\)$/);
  });

  it('fails with the service description on a 4xx, never holding the bot token', async () => {
    chat = await startFakeChat();
    const channel = createChatnetChannel({ apiBase: `${chat.url}/nowhere`, botToken: 'secret-bot-token' });
    const err = await channel.send('1', 'x').catch((e: Error) => e);
    expect((err as Error).message).toMatch(/chatnet answered 404: Not Found/);
    expect((err as Error).message).not.toContain('secret-bot-token');
  });
});
