import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createChatnetChannel, MAX_ANSWER_BYTES } from '../../src/channels/index.js';
import type { HookdError } from '../../src/errors.js';
import { createAnthropicMessagesProvider, createOpenAiChatProvider } from '../../src/providers/index.js';

/**
 * A destination that answers without end (docs/runtime.md#attempts): hookd reads a bounded
 * start of the answer and closes the connection, it never holds the whole of it.
 */

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((done) => server?.close(done));
  server = undefined;
});

/** A server answering `status` and 64 KiB chunks of `a` until the client goes; how many bytes it sent when it went. */
async function endless(status: number) {
  const sent: number[] = [];
  server = createServer((req, res) => {
    req.resume();
    let bytes = 0;
    const chunk = Buffer.alloc(65_536, 'a');
    res.writeHead(status, { 'content-type': 'application/json' });
    res.write('{"ok":true,"description":"');
    const more = () => {
      while (!res.destroyed && res.write(chunk)) bytes += chunk.length;
      if (!res.destroyed) res.once('drain', more);
    };
    res.on('close', () => sent.push(bytes));
    more();
  });
  await new Promise<void>((done) => server?.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sent };
}

const failureOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: unknown) => err as HookdError,
  );

describe('an answer without end', () => {
  it('is MODEL_INVALID_ANSWER (too large) from a model server, its connection closed', async () => {
    const { url, sent } = await endless(200);
    const messages = [{ role: 'user' as const, content: 'hi' }];
    for (const provider of [
      createOpenAiChatProvider({ baseUrl: url, api: 'openai-chat' }),
      createAnthropicMessagesProvider({ baseUrl: url, apiKey: 'k' }),
    ]) {
      const failure = await failureOf(provider.complete({ model: 'm', messages, signal: AbortSignal.timeout(30_000) }));
      expect(failure?.code).toBe('MODEL_INVALID_ANSWER');
      expect(failure?.message).toBe('the model server answered more than 8 MiB');
    }
    await expect.poll(() => sent.length).toBe(2);
    // The server wrote into the socket's buffers past the bound, not without end.
    for (const bytes of sent) expect(bytes).toBeLessThan(64 * 1_048_576);
  });

  it('is a refusal with the start of its words when it is an error, and unconfirmed when it is a 2xx, from a chat service', async () => {
    const refused = await endless(500);
    const channel = createChatnetChannel({ apiBase: refused.url, botToken: 'b' });
    const failure = await failureOf(channel.sendMessage('1', 'hello', AbortSignal.timeout(30_000)));
    expect(failure?.code).toBe('CHANNEL_REFUSED');
    expect(failure?.params).toMatchObject({ status: 500 });
    await new Promise((done) => server?.close(done));
    server?.closeAllConnections();

    const ok = await endless(200);
    const unconfirmed = await failureOf(
      createChatnetChannel({ apiBase: ok.url, botToken: 'b' }).sendMessage('1', 'hello', AbortSignal.timeout(30_000)),
    );
    expect(unconfirmed?.code).toBe('CHANNEL_UNCONFIRMED');
    await expect.poll(() => ok.sent.length).toBe(1);
    expect(ok.sent[0]).toBeLessThan(16 * MAX_ANSWER_BYTES);
  });

  it('refuses with the status when a chat service says its words as no text (an object)', async () => {
    server = createServer((req, res) => {
      req.resume();
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: false, description: { x: 1 } }));
    });
    await new Promise<void>((done) => server?.listen(0, '127.0.0.1', done));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const failure = await failureOf(
      createChatnetChannel({ apiBase: url, botToken: 'b' }).sendMessage('1', 'hello', AbortSignal.timeout(30_000)),
    );
    // Not CHANNEL_UNREACHABLE (retried four times, counted by the breaker): the service answered.
    expect(failure?.code).toBe('CHANNEL_REFUSED');
    expect(failure?.params).toEqual({ channel: 'chatnet', status: 400 });
  });
});
