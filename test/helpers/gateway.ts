import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium } from './browser.js';
import { type FakeChat, startFakeChat } from './fake-chat.js';
import { type ChatRequest, type FakeModel, type FakeReply, isHeartbeat, startFakeModel } from './fake-model.js';
import { type HookdProcess, makeTempDir, startHookd } from './hookd-process.js';

/**
 * The end-to-end tests' gateway: the real `hookd serve` in a folder of its own, beside a fake
 * model (and, when asked, a fake Bot-API chat server as its `chatnet` channel and a Chromium),
 * each on port 0. Everything it starts is stopped, in reverse order, by `stop`.
 */

export interface GatewayOptions {
  readonly hookToken: string;
  readonly gatewayToken: string;
  /** The model's answer to a run's turn; heartbeats answer HEARTBEAT_OK. Default `'the reply'`. */
  readonly reply?: (request: ChatRequest) => FakeReply;
  /** Starts a fake chat server, configured as the `chatnet` channel with this bot token (defaultTo 42). */
  readonly chatBotToken?: string;
  /** Files written into the gateway's folder before it starts, by relative path. */
  readonly files?: Readonly<Record<string, string>>;
  /** `hooks` keys beside `enabled` and `token`. */
  readonly hooks?: Readonly<Record<string, unknown>>;
  /** Providers beside `fake` (the fake model, the default model `fake/m`). */
  readonly providers?: Readonly<Record<string, unknown>>;
  /** Launches Chromium too. */
  readonly browser?: boolean;
}

export interface Gateway {
  readonly hookd: HookdProcess;
  readonly model: FakeModel;
  /** Set when `chatBotToken` was given. */
  readonly chat: FakeChat;
  /** Set when `browser` was asked for. */
  readonly browser: Browser;
  /** The gateway's folder (its config, its files, its store). */
  readonly dir: string;
  /** Stops everything it started and removes its folder. */
  stop(): Promise<void>;
}

/** Starts a gateway as the options say; on a failure, what was started is stopped again. */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  const stop = async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  };
  try {
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    for (const [path, text] of Object.entries(options.files ?? {})) {
      mkdirSync(dirname(join(temp.dir, path)), { recursive: true });
      writeFileSync(join(temp.dir, path), text);
    }
    const reply = options.reply ?? (() => 'the reply');
    const model = await startFakeModel((r) => (isHeartbeat(r) ? 'HEARTBEAT_OK' : reply(r)));
    cleanups.push(() => model.close());
    const chat = options.chatBotToken === undefined ? undefined : await startFakeChat();
    if (chat) cleanups.push(() => chat.close());
    const hookd = await startHookd({
      dir: temp.dir,
      config: {
        gateway: { auth: { token: options.gatewayToken } },
        hooks: { enabled: true, token: options.hookToken, ...options.hooks },
        agents: { defaults: { model: 'fake/m', heartbeat: { every: '0' } } },
        models: { providers: { fake: { baseUrl: model.url, api: 'openai-chat' }, ...options.providers } },
        ...(chat
          ? { channels: { chatnet: { apiBase: chat.url, botToken: options.chatBotToken, defaultTo: '42' } } }
          : {}),
      },
    });
    cleanups.push(() => hookd.stop());
    const browser = options.browser ? await launchChromium() : undefined;
    if (browser) cleanups.push(() => browser.close());
    return { hookd, model, chat: chat as FakeChat, browser: browser as Browser, dir: temp.dir, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
