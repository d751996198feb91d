import { afterEach, describe, expect, it } from 'vitest';
import { CHATNET_MAX_CHARS, createChatnetChannel } from '../../../src/channels/index.js';
import { type FakeChat, startFakeChat } from '../../helpers/fake-chat.js';

let chat: FakeChat | undefined;
afterEach(async () => {
  await chat?.close();
  chat = undefined;
});

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
    chat.throttleNext(1, 1);
    const started = Date.now();
    await createChatnetChannel({ apiBase: chat.url, botToken: 'b' }).send('1', 'after a wait');
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(chat.sent).toHaveLength(1);
  });

  it('fails with the service description on a 4xx, never holding the bot token', async () => {
    chat = await startFakeChat();
    const channel = createChatnetChannel({ apiBase: `${chat.url}/nowhere`, botToken: 'secret-bot-token' });
    const err = await channel.send('1', 'x').catch((e: Error) => e);
    expect((err as Error).message).toMatch(/chatnet answered 404: Not Found/);
    expect((err as Error).message).not.toContain('secret-bot-token');
  });
});
