import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, normalizeHooksPath } from '../../../src/config/index.js';
import { type HookdError, isHookdError } from '../../../src/errors.js';

describe('loadConfig', () => {
  it('fills every default of docs/configuration.md and freezes the result', () => {
    const config = loadConfig({ data: {}, baseDir: '/srv/hookd', env: {} });
    expect(config.server).toEqual({
      host: '127.0.0.1',
      port: 8787,
      trustProxy: false,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      maxConnections: 4096,
    });
    expect(config.hooks).toMatchObject({
      enabled: false,
      path: '/hooks',
      maxBodyBytes: 262144,
      allowQueryToken: true,
      presets: [],
      mappings: [],
      transformsDir: '/srv/hookd/transforms',
      transforms: { timeoutMs: 1000, memoryLimitMb: 128, maxInFlight: 8 },
      idempotency: { ttlSeconds: 86400 },
    });
    expect(config.agents.defaults).toMatchObject({
      model: 'builtin/echo',
      timeoutSeconds: 600,
      maxConcurrentRuns: 4,
      heartbeat: { every: '30m', ackMaxChars: 300 },
    });
    expect(config.storage).toEqual({
      kind: 'sqlite',
      path: '/srv/hookd/data/hookd.db',
      synchronous: 'normal',
      leaseSeconds: 30,
    });
    expect(config.log.level).toBe('info');
    expect(Object.isFrozen(config.hooks.presets)).toBe(true);
  });

  it('resolves relative paths against the config file folder', () => {
    const config = loadConfig({
      data: { storage: { path: '../db/h.db' }, hooks: { transformsDir: 'tx' } },
      baseDir: '/etc/hookd',
      env: {},
    });
    expect(config.storage.path).toBe('/etc/db/h.db');
    expect(config.hooks.transformsDir).toBe(join('/etc/hookd', 'tx'));
  });

  it('expands ${NAME} and keeps $${NAME} literal', () => {
    const config = loadConfig({
      data: { hooks: { enabled: true, token: '${T}', mappings: [{ textTemplate: 'cost $${X}' }] } },
      env: { T: 'token-from-env-0123456789' },
    });
    expect(config.hooks.token).toBe('token-from-env-0123456789');
    expect(config.hooks.mappings[0]?.textTemplate).toBe('cost ${X}');
  });

  it('accepts both forms of agents.defaults.models', () => {
    expect(() => loadConfig({ data: { agents: { defaults: { models: ['builtin/echo'] } } }, env: {} })).not.toThrow();
    expect(() =>
      loadConfig({ data: { agents: { defaults: { models: { 'builtin/echo': { alias: 'e' } } } } }, env: {} }),
    ).not.toThrow();
  });

  it('throws CONFIG_INVALID listing problems', () => {
    try {
      loadConfig({ data: { hooks: { enabled: true } }, env: {} });
      expect.unreachable();
    } catch (err) {
      expect(isHookdError(err, 'CONFIG_INVALID')).toBe(true);
      expect((err as HookdError<'CONFIG_INVALID'>).params.problems).toEqual([
        'hooks.token: required when hooks.enabled is true',
      ]);
    }
  });

  it('takes storage.leaseSeconds as whole seconds from 2 to 3600', () => {
    const lease = (leaseSeconds: unknown) => () =>
      loadConfig({ data: { storage: { kind: 'postgres', url: 'postgres://h@db/hookd', leaseSeconds } }, env: {} });
    expect(lease(5)().storage.leaseSeconds).toBe(5);
    // A fractional lease would reach PostgreSQL as a fractional bigint and fail every claim.
    for (const bad of [2.5, 1, 3601]) expect(lease(bad)).toThrow(/storage\.leaseSeconds/);
  });

  it('needs storage.url on PostgreSQL, where the mail watcher runs too', () => {
    const problems = (data: object) => {
      try {
        loadConfig({ data, env: {} });
        return [];
      } catch (err) {
        return (err as HookdError<'CONFIG_INVALID'>).params.problems;
      }
    };
    expect(problems({ storage: { kind: 'postgres' } })).toEqual([
      'storage.url: required when storage.kind is postgres (postgres://user:password@host:port/database)',
    ]);
    const config = loadConfig({ data: { storage: { kind: 'postgres', url: 'postgres://h@db/hookd' } }, env: {} });
    expect(config.storage).toMatchObject({ kind: 'postgres', url: 'postgres://h@db/hookd' });
    const mail = { account: 'me@example.com', watch: { imap: { host: 'imap', user: 'me', password: 'p' } } };
    expect(
      problems({ storage: { kind: 'postgres', url: 'postgres://h@db/hookd' }, hooks: { token: 't'.repeat(24), mail } }),
    ).toEqual([]);
  });
});

describe('normalizeHooksPath', () => {
  it.each([
    ['hooks', '/hooks'],
    ['/hooks/', '/hooks'],
    ['//in//bound/', '/in/bound'],
    ['/', '/'],
    ['', '/'],
  ])('%j → %j', (input, expected) => expect(normalizeHooksPath(input)).toBe(expected));
});
