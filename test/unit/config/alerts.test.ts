import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { channelProblems } from '../../../src/channels/index.js';
import { resolveConfig } from '../../../src/cli/config-source.js';
import { inspectConfig, loadConfig } from '../../../src/config/index.js';

/** `hooks.alerts` (docs/operations.md#alerts): on by itself only where a chat channel has a recipient. */

const chatnet = (extra: object = {}) => ({ apiBase: 'http://chat.example', botToken: 'bot-token', ...extra });
const load = (data: object) => loadConfig({ data, env: {} });

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('hooks.alerts', () => {
  it('is off with its defaults filled in when no chat channel is configured', () => {
    expect(load({}).hooks.alerts).toEqual({
      enabled: false,
      every: '30m',
      mappingFailures: { enabled: true, count: 5, window: '10m' },
      signatureFailures: { enabled: true, count: 5, window: '10m' },
      modelUnreachable: { enabled: true, window: '2m' },
      deliveryFailures: { enabled: true, count: 3, window: '10m' },
    });
  });

  it('is off in the embedded default, which has no chat channel', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookd-alerts-'));
    dirs.push(dir);
    const io = { out: () => {}, err: () => {}, env: {}, cwd: dir };
    const { config, embedded } = resolveConfig(undefined, io, { createSecrets: false });
    expect(embedded).toBeDefined();
    expect(config.channels.chatnet).toBeUndefined();
    expect(config.hooks.alerts.enabled).toBe(false);
  });

  it('is on by itself once channels.chatnet has a recipient: its defaultTo, or hooks.alerts.to', () => {
    expect(load({ channels: { chatnet: chatnet({ defaultTo: '42' }) } }).hooks.alerts.enabled).toBe(true);
    const to = load({ channels: { chatnet: chatnet() }, hooks: { alerts: { to: '7' } } });
    expect(to.hooks.alerts).toMatchObject({ enabled: true, to: '7' });
    // A channel without a recipient leaves alerts off, and is no error.
    expect(load({ channels: { chatnet: chatnet() } }).hooks.alerts.enabled).toBe(false);
    const off = load({ channels: { chatnet: chatnet({ defaultTo: '42' }) }, hooks: { alerts: { enabled: false } } });
    expect(off.hooks.alerts.enabled).toBe(false);
  });

  it('turned on without a channel or without a recipient is a config error naming the key', () => {
    const problems = (data: object) => inspectConfig({ data, env: {} }).problems;
    expect(problems({ hooks: { alerts: { enabled: true } } })).toEqual([
      'hooks.alerts.enabled: alerts are sent through a chat channel, and channels has none',
    ]);
    // Whether a channel needs a recipient is its kind's to say: the channels' check says so.
    const noRecipient = { hooks: { alerts: { enabled: true } }, channels: { chatnet: chatnet() } };
    expect(problems(noRecipient)).toEqual([]);
    expect(channelProblems(load(noRecipient))).toEqual([
      'hooks.alerts.to: required when alerts are on and channels.chatnet has no defaultTo',
    ]);
    expect(problems({ hooks: { alerts: { enabled: true, to: '7' } }, channels: { chatnet: chatnet() } })).toEqual([]);
  });

  it('refuses a window of 0, a count of 0 and a console URL that is not http(s)', () => {
    const { problems } = inspectConfig({
      data: {
        hooks: {
          alerts: {
            consoleUrl: 'ftp://x',
            mappingFailures: { count: 0 },
            modelUnreachable: { window: '0' },
          },
        },
      },
      env: {},
    });
    expect(problems).toEqual([
      'hooks.alerts.consoleUrl: expected an http(s) URL, got "ftp://x"',
      'hooks.alerts.mappingFailures.count: expected a value that must be >= 1',
      'hooks.alerts.modelUnreachable.window: expected a duration such as 30s, 10m, 1h, got "0"',
    ]);
  });
});
