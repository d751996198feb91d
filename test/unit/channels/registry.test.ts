import { describe, expect, it } from 'vitest';
import { createModelCatalog } from '../../../src/actions/index.js';
import { channelLimits, channelProblems, createChannels } from '../../../src/channels/index.js';
import { type Config, inspectConfig, loadConfig } from '../../../src/config/index.js';
import { collectMappings } from '../../../src/mapping/index.js';
import { createModelRouter, providerLimits, providerProblems } from '../../../src/providers/index.js';
import { defaultLimits } from '../../../src/runtime/index.js';

/** `channels.<id>` and `models.providers.<name>` as their registries check them (docs/channels.md, docs/runtime.md#providers). */

const load = (data: object): Config => loadConfig({ data, env: {} });
const bot = { apiBase: 'http://chat.example', botToken: 'b' };

describe('channels as configured ids', () => {
  it('takes an entry keyed chatnet without kind as a chatnet channel, as before kinds existed', () => {
    const channels = createChannels(load({ channels: { chatnet: { ...bot, defaultTo: '42' } } }));
    expect([...channels.keys()]).toEqual(['chatnet']);
    expect(channels.get('chatnet')).toMatchObject({ id: 'chatnet', defaultTo: '42', needsRecipient: true });
  });

  it('names each channel by its id, whatever its kind, in the config order', () => {
    const channels = createChannels(
      load({
        channels: {
          ops: { kind: 'telegram', botToken: 't' },
          hooks: { kind: 'discord', webhookUrl: 'https://discord.example/api/webhooks/1/x' },
        },
      }),
    );
    expect([...channels.values()].map((c) => [c.id, c.needsRecipient])).toEqual([
      ['ops', true],
      ['hooks', false],
    ]);
  });

  it('says an unknown kind, a missing kind and a key the kind does not take, with a did-you-mean', () => {
    const config = load({
      channels: {
        a: { kind: 'telegarm', botToken: 't' },
        b: { botToken: 't' },
        c: { kind: 'slack', botToken: 'x', chanel: 'C1' },
        d: { kind: 'slack' },
      },
    });
    expect(channelProblems(config)).toEqual([
      'channels.a.kind: expected one of chatnet, telegram, slack, discord, email, webhook, got "telegarm" (did you mean "telegram"?)',
      'channels.b.kind: required (one of chatnet, telegram, slack, discord, email, webhook)',
      'channels.c.chanel: unknown key',
      'channels.d.botToken: expected botToken (chat.postMessage) or webhookUrl (an incoming webhook), one of them',
    ]);
    expect(() => createChannels(config)).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
  });

  it('refuses last as an id, and a webhook secret that is not whsec_', () => {
    const { problems } = inspectConfig({ data: { channels: { last: bot } }, env: {} });
    expect(problems).toContain('channels: expected a channel id of letters, digits, _ and - (not last), got "last"');
    const config = load({ channels: { w: { kind: 'webhook', url: 'https://x.example', secret: 'plain' } } });
    // A problem with a credential never quotes it.
    expect(channelProblems(config)).toEqual([
      'channels.w.secret: expected a Standard Webhooks secret: whsec_ and at least 12 bytes in base64',
    ]);
  });

  it('names the channels whose maxConcurrent is set; the others take the runtime’s default', () => {
    const config = load({ channels: { a: bot, chatnet: { ...bot, maxConcurrent: 1 } } });
    expect(channelLimits(config)).toEqual(new Map([['chatnet', 1]]));
  });
});

describe('hooks.alerts.channel', () => {
  const two = {
    a: { ...bot, kind: 'chatnet', defaultTo: '1' },
    b: { kind: 'telegram', botToken: 't', defaultTo: '2' },
  };

  it('is the one channel with a recipient when it is not set', () => {
    const config = load({ channels: { a: { ...bot, kind: 'chatnet' }, b: two.b } });
    expect(config.hooks.alerts).toMatchObject({ enabled: true, channel: 'b' });
  });

  it('is required when more than one channel has a recipient', () => {
    expect(inspectConfig({ data: { channels: two }, env: {} }).problems).toEqual([
      'hooks.alerts.channel: required when more than one channel has a recipient (a, b); or set hooks.alerts.enabled: false',
    ]);
    expect(load({ channels: two, hooks: { alerts: { channel: 'b' } } }).hooks.alerts).toMatchObject({
      enabled: true,
      channel: 'b',
    });
  });

  it('names a configured channel, listing them otherwise', () => {
    expect(inspectConfig({ data: { channels: two, hooks: { alerts: { channel: 'c' } } }, env: {} }).problems).toEqual([
      'hooks.alerts.channel: expected a configured channel id, got "c": the configured channels are a, b',
    ]);
  });

  it('needs no recipient through a kind that sends to one place', () => {
    const discord = { kind: 'discord', webhookUrl: 'https://discord.example/api/webhooks/1/x' };
    const config = load({ channels: { d: discord }, hooks: { alerts: { enabled: true } } });
    expect(config.hooks.alerts).toMatchObject({ enabled: true, channel: 'd' });
    expect(channelProblems(config)).toEqual([]);
    // Naming the channel turns alerts on, as a recipient does.
    expect(load({ channels: { d: discord }, hooks: { alerts: { channel: 'd' } } }).hooks.alerts.enabled).toBe(true);
  });
});

describe('channel on mappings', () => {
  it('says a mapping naming a channel that is not configured, with the ids that are', () => {
    const config = load({
      channels: { ops: bot },
      hooks: {
        mappings: [
          { match: { path: 'a' }, messageTemplate: 'x', channel: 'opps' },
          { match: { path: 'b' }, messageTemplate: 'x', channel: 'ops' },
          { match: { path: 'c' }, messageTemplate: 'x', channel: '{{payload.where}}' },
        ],
      },
    });
    expect(collectMappings(config, createModelCatalog(config)).problems).toEqual([
      'hooks.mappings[0].channel: expected one of last, ops, got "opps"',
    ]);
  });
});

describe('providers by API', () => {
  it('says an unknown API with a did-you-mean, and a key it does not take', () => {
    const config = load({
      models: {
        providers: {
          a: { api: 'anthropic-message', baseUrl: 'http://x' },
          b: { api: 'openai-chat', baseUrl: 'http://x', temperature: 1 },
        },
      },
    });
    expect(providerProblems(config)).toEqual([
      'models.providers.a.api: expected one of "openai-chat", "anthropic-messages" (did you mean "anthropic-messages"?)',
      'models.providers.b.temperature: unknown key',
    ]);
    expect(() => createModelRouter(config)).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
  });

  it('gives each provider maxConcurrent one fewer than agents.defaults.maxConcurrentRuns unless set, and maxTokens 4096', () => {
    const config = load({
      agents: { defaults: { maxConcurrentRuns: 6 } },
      models: {
        providers: {
          a: { api: 'openai-chat', baseUrl: 'http://x' },
          b: { api: 'anthropic-messages', baseUrl: 'http://y', maxConcurrent: 2 },
        },
      },
    });
    expect(providerLimits(config)).toEqual(new Map([['b', 2]]));
    // Unless set: a provider whose calls never end leaves a run slot to the others.
    expect(defaultLimits(6).provider('a')).toBe(5);
    expect(defaultLimits(1).provider('a')).toBe(1);
    expect(config.models.providers.b?.maxTokens).toBe(4096);
  });
});
