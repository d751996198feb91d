import { afterEach, describe, expect, it } from 'vitest';
import { CHATNET_MAX_CHARS, createChatnetChannel } from '../../../src/channels/index.js';
import type { HookdError } from '../../../src/errors.js';
import { type FakeChat, startFakeChat } from '../../helpers/fake-chat.js';

let chat: FakeChat | undefined;
afterEach(async () => {
  await chat?.close();
  chat = undefined;
});

const signal = () => AbortSignal.timeout(5000);
const failureOf = (sending: Promise<void>) =>
  sending.then(
    () => undefined,
    (err: unknown) => err as HookdError,
  );

describe('chatnet channel', () => {
  it('sends { chat_id, text } to /bot<token>/sendMessage', async () => {
    chat = await startFakeChat();
    await createChatnetChannel({ apiBase: chat.url, botToken: 'b-1' }).sendMessage('42', 'hello', signal());
    expect(chat.sent).toEqual([{ botToken: 'b-1', chat_id: '42', text: 'hello' }]);
  });

  it('splits texts over 4096 characters into several messages', () => {
    const text = `${'a'.repeat(4000)}\n${'b'.repeat(4000)}\n${'c'.repeat(100)}`;
    const pieces = createChatnetChannel({ apiBase: 'http://127.0.0.1:9', botToken: 'b' }).split(text);
    expect(pieces.map((m) => m.length)).toEqual([4000, 4000, 100]);
    for (const m of pieces) expect(m.length).toBeLessThanOrEqual(CHATNET_MAX_CHARS);
  });

  it("says a 429 with retry_after in milliseconds, for the runtime's retry", async () => {
    chat = await startFakeChat();
    chat.throttleNext(1, 30);
    const channel = createChatnetChannel({ apiBase: chat.url, botToken: 'b' });
    const failure = await failureOf(channel.sendMessage('1', 'after a wait', signal()));
    expect(failure?.code).toBe('CHANNEL_REFUSED');
    expect(failure?.params).toEqual({
      channel: 'chatnet',
      status: 429,
      description: 'Too Many Requests',
      retryAfterMs: 30_000,
    });
    await channel.sendMessage('1', 'after a wait', signal());
    expect(chat.sent).toHaveLength(1);
  });

  it('says CHANNEL_UNREACHABLE when nothing listens, never holding the bot token', async () => {
    chat = await startFakeChat();
    const apiBase = chat.url;
    await chat.close();
    chat = undefined;
    const channel = createChatnetChannel({ apiBase, botToken: 'secret-bot-token' });
    const failure = await failureOf(channel.sendMessage('1', 'nobody listens', signal()));
    expect(failure?.code).toBe('CHANNEL_UNREACHABLE');
    expect(failure?.message).toMatch(/^chatnet unreachable: .*ECONNREFUSED/);
    expect(failure?.message).not.toContain('secret-bot-token');
  });

  it('fails with the service description on a 4xx, never holding the bot token', async () => {
    chat = await startFakeChat();
    const channel = createChatnetChannel({ apiBase: `${chat.url}/nowhere`, botToken: 'secret-bot-token' });
    const err = await failureOf(channel.sendMessage('1', 'x', signal()));
    expect(err?.message).toMatch(/chatnet answered 404: Not Found/);
    expect(err?.message).not.toContain('secret-bot-token');
  });
});
