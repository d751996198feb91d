import { execFileSync } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inspectConfig, loadConfig, normalizeHooksPath } from '../../../src/config/index.js';
import { type HookdError, isHookdError } from '../../../src/errors.js';
import { makeTempDir } from '../../helpers/hookd-process.js';

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
      maxConnectionsPerClient: 1024,
      allowedHosts: [],
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
      poolSize: 10,
    });
    expect(config.log.level).toBe('info');
    expect(Object.isFrozen(config.hooks.presets)).toBe(true);
  });

  it('quotes a wrong URL without its user info or query, and a long value cut', () => {
    const provider = (baseUrl: string) => ({ baseUrl, api: 'openai-chat', apiKey: 'sk-kept-apart' });
    const { problems } = inspectConfig({
      data: {
        models: {
          providers: {
            creds: provider('ftp://user:s3cret-pass@models.example/v1?key=sk-live-abc#frag'),
            slash: provider('ftp://user:pa/ss@models.example/v1'),
            bare: provider('user:s3cret@models.example/v1'),
            long: provider(`x${'y'.repeat(500)}`),
            // undici sends no user info: the calls would go without it, refused with a 401.
            userinfo: provider('https://user:s3cret-pass@models.example/v1'),
            fine: provider('https://models.example/v1?user=a@b'),
            // WHATWG reads `\\` as `/`: `@x` is in the path, no user info.
            backslash: provider('https://models.example\\@x/v1'),
          },
        },
      },
      env: {},
    });
    const expected = 'an http(s) URL without user:password@ (hookd would leave them out)';
    expect(problems).toEqual([
      `models.providers.creds.baseUrl: expected ${expected}, got "ftp://…@models.example/v1?…"`,
      `models.providers.slash.baseUrl: expected ${expected}, got "ftp://…@models.example/v1"`,
      `models.providers.bare.baseUrl: expected ${expected}, got "…@models.example/v1"`,
      `models.providers.long.baseUrl: expected ${expected}, got "x${'y'.repeat(119)}…"`,
      `models.providers.userinfo.baseUrl: expected ${expected}, got "https://…@models.example/v1"`,
    ]);
  });

  it("refuses user info in the mail watch's hookUrl, which would be left out of its posts", () => {
    const watch = (hookUrl: string) => ({
      hooks: {
        mail: {
          account: 'me@example.test',
          watch: { imap: { host: 'imap.example', user: 'me', password: 'pw' }, hookUrl },
        },
      },
    });
    expect(inspectConfig({ data: watch('http://hook:s3cret@127.0.0.1:8787/hooks/mail'), env: {} }).problems).toEqual([
      'hooks.mail.watch.hookUrl: expected an http(s) URL without user:password@ (hookd would leave them out), got "http://…@127.0.0.1:8787/hooks/mail"',
    ]);
    expect(inspectConfig({ data: watch('http://127.0.0.1:8787/hooks/mail'), env: {} }).problems).toEqual([]);
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

  it('takes storage.poolSize as whole connections from 3 to 100', () => {
    const pool = (poolSize: unknown) => () =>
      loadConfig({ data: { storage: { kind: 'postgres', url: 'postgres://h@db/hookd', poolSize } }, env: {} });
    expect(pool(3)().storage.poolSize).toBe(3);
    for (const bad of [2, 4.5, 101, '10']) expect(pool(bad)).toThrow(/storage\.poolSize/);
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

describe('inspectConfig', () => {
  it('names the nearest variable that is set when one is not, and none when nothing is close', () => {
    const data = { hooks: { enabled: true, token: '${PAYLARK_SECRT}' }, gateway: { auth: { token: '${NOPE}' } } };
    const env = { PAYLARK_SECRET: 'x', HOME: '/root', PATH: '/bin' };
    expect(inspectConfig({ data, env }).problems).toEqual([
      'hooks.token: environment variable PAYLARK_SECRT is not set (did you mean PAYLARK_SECRET?)',
      'gateway.auth.token: environment variable NOPE is not set',
    ]);
  });

  it("refuses a whsec_ secret that is not base64 (node's decoder skipped what was not), never quoting it", () => {
    const key = Buffer.from('a key of enough bytes').toString('base64');
    const mapping = (secret: string, scheme = 'standard-webhooks') => ({
      hooks: {
        enabled: true,
        token: 't'.repeat(24),
        mappings: [{ match: { path: 'svix' }, action: 'wake', verify: { scheme, secret } }],
      },
    });
    const problems = (secret: string) => inspectConfig({ data: mapping(secret), env: {} }).problems;
    expect(problems(`whsec_${key}`)).toEqual([]);
    expect(problems(`whsec_${key.replace(/=+$/, '')}`)).toEqual([]);
    // A quote copied with it, and a secret cut short by one character.
    expect(problems(`whsec_${key}"`)).toEqual([
      `hooks.mappings[0].verify.secret: a whsec_ secret is base64 after whsec_; position ${key.length + 7} is not a base64 character`,
    ]);
    expect(problems('whsec_abcde')).toEqual([
      'hooks.mappings[0].verify.secret: a whsec_ secret is base64 after whsec_ (its characters do not make whole bytes, or = is not at the end)',
    ]);
    // Stripe's whsec_ secrets are its own bytes, whatever they hold.
    expect(inspectConfig({ data: mapping('whsec_not base64!', 'stripe'), env: {} }).problems).toEqual([]);
  });

  it('compares hooks.token and gateway.auth.token only when both resolve', () => {
    const data = { gateway: { auth: { token: '${GW}' } }, hooks: { enabled: true, token: '${HOOK}' } };
    const unset = inspectConfig({ data, env: {} });
    expect(unset.problems).toEqual([
      'gateway.auth.token: environment variable GW is not set',
      'hooks.token: environment variable HOOK is not set',
    ]);
    expect(unset.unset?.map((u) => [u.path, u.name])).toEqual([
      ['gateway.auth.token', 'GW'],
      ['hooks.token', 'HOOK'],
    ]);
    const same = 'the-same-token-0123456789';
    expect(inspectConfig({ data, env: { GW: same, HOOK: same } }).problems).toEqual([
      'hooks.token: must differ from gateway.auth.token (use a dedicated hook token)',
    ]);
    expect(inspectConfig({ data, env: { GW: same, HOOK: `${same}-other` } }).problems).toEqual([]);
  });

  it('builds the config past the values the schema refused, their defaults in their place', () => {
    const report = inspectConfig({
      data: {
        server: { port: 'eighty' },
        hooks: {
          path: 7,
          mappings: [
            { deliver: 'yes', textTemplate: 'kept' },
            { transform: { export: 'x' }, textTemplate: 'kept too' },
          ],
        },
      },
      env: {},
    });
    expect(report.problems).toEqual([
      'server.port: expected integer, got string',
      'hooks.path: expected string, got number',
      'hooks.mappings[0].deliver: expected boolean, got string',
      'hooks.mappings[1].transform.module: required',
    ]);
    expect(report.config?.server.port).toBe(8787);
    expect(report.config?.hooks.path).toBe('/hooks');
    // A mapping keeps what the schema accepted; a part that lacks a required key goes.
    expect(report.config?.hooks.mappings).toEqual([{ textTemplate: 'kept' }, { textTemplate: 'kept too' }]);
  });
});

describe('a config file that is not a regular file of a sane size', () => {
  const temp = makeTempDir();
  afterAll(() => temp.cleanup());

  it('is refused at once, never waited on: a FIFO, a file past 8 MiB', () => {
    const fifo = join(temp.dir, 'fifo.json5');
    execFileSync('mkfifo', [fifo]);
    expect(inspectConfig({ file: fifo, env: {} }).problems).toEqual([
      'cannot read the config file: it is a FIFO, not a regular file',
    ]);
    const huge = join(temp.dir, 'huge.json5');
    writeFileSync(huge, `{ server: {} }${' '.repeat(8 * 1024 * 1024)}`);
    expect(inspectConfig({ file: huge, env: {} }).problems[0]).toMatch(
      /^cannot read the config file: it is larger than 8 MiB, the most read$/,
    );
  });

  it('is read through a symbolic link to a regular file (a ConfigMap)', () => {
    const real = join(temp.dir, 'real.json5');
    writeFileSync(real, '{ server: { port: 9999 } }');
    const link = join(temp.dir, 'hookd.json5');
    symlinkSync(real, link);
    expect(loadConfig({ file: link, env: {} }).server.port).toBe(9999);
  });
});
