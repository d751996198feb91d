import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, LazyChildLogger } from '../../src/log.js';
import { assertLogLines, duplicateKeys } from '../helpers/log-lines.js';

/** A logger writing into an array of lines. */
function captured(level: 'info' | 'debug' = 'info') {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { log: createLogger({ level, destination }), lines };
}

describe('the duplicate-key check of log lines', () => {
  it('finds a key named twice at the top and inside nested objects and arrays', () => {
    expect(duplicateKeys('{"a":1,"b":{"c":"x","c":"y"},"a":[{"d":1,"d":2}]}')).toEqual(['b.c', 'a', 'a[0].d']);
    expect(duplicateKeys('{"a":"with \\" and , inside","b":[1,2,{"a":null}],"c":true}')).toEqual([]);
  });

  it('fails on an output with such a line and passes one without (hints and cut lines are not log lines)', () => {
    expect(() => assertLogLines('hookd: ready\n{"component":"runs","component":"attempts"}\n', 'x')).toThrow(
      /component twice/,
    );
    expect(() => assertLogLines('hookd: ready\n{"level":30,"msg":"ok"}\n{"cut', 'x')).not.toThrow();
  });
});

describe('createLogger', () => {
  it("writes a child's binding once, the child's value replacing its parent's, at the parent's level", () => {
    const { log, lines } = captured();
    const runs = log.child({ component: 'runs', job: 'pump' });
    runs.child({ component: 'attempts' }).info('attempt recorded');
    runs.child({ attempt: 2 }).info('plain child');
    const quiet = log.child({ component: 'runs' });
    quiet.level = 'warn';
    quiet.child({ component: 'attempts' }).info('not at info');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(duplicateKeys(line)).toEqual([]);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ component: 'attempts', job: 'pump', pid: process.pid });
    expect(JSON.parse(lines[1] as string)).toMatchObject({ component: 'runs', job: 'pump', attempt: 2 });
  });
});

describe('secrets one level down in a line', () => {
  it('are censored under any key, in a copy: the object logged keeps its values', () => {
    const { log, lines } = captured();
    const provider = { apiKey: 'sk-1', baseUrl: 'http://model' };
    log.info(
      {
        provider,
        channel: { botToken: '123:abc', kind: 'telegram' },
        user: { password: 'pw' },
        hook: { secret: 's3', token: 't0' },
        list: ['token'],
        plain: 'token',
        n: 1,
      },
      'configured',
    );
    expect(JSON.parse(lines[0] as string)).toMatchObject({
      provider: { apiKey: '[redacted]', baseUrl: 'http://model' },
      channel: { botToken: '[redacted]', kind: 'telegram' },
      user: { password: '[redacted]' },
      hook: { secret: '[redacted]', token: '[redacted]' },
      list: ['token'],
      plain: 'token',
      n: 1,
      msg: 'configured',
    });
    expect(provider.apiKey).toBe('sk-1');
    expect(lines[0]).not.toMatch(/sk-1|123:abc|"pw"|s3|t0/);
  });

  it("are censored in an error's own fields, its message and stack kept, and in a child's bindings", () => {
    const { log, lines } = captured();
    const err = Object.assign(new Error('refused'), { token: 'bot-token', status: 401 });
    log.child({ provider: { apiKey: 'sk-2' } }).error({ err }, 'sending failed');
    const line = JSON.parse(lines[0] as string);
    expect(line).toMatchObject({
      provider: { apiKey: '[redacted]' },
      err: { type: 'Error', message: 'refused', token: '[redacted]', status: 401 },
    });
    expect(line.err.stack).toContain('refused');
    expect(lines[0]).not.toMatch(/sk-2|bot-token/);
  });
});

describe("an error's fields that are live objects", () => {
  it("are named, not written out: pg-pool's idle error carries its whole client, cancel key and TLS options", async () => {
    const pg = (await import('pg')).default;
    const client = new pg.Client({
      connectionString: 'postgres://hookd:pw-not-logged@127.0.0.1:1/hookd',
      ssl: { key: 'PRIVATE-KEY-PEM', rejectUnauthorized: true },
    });
    Object.assign(client, { processID: 4242, secretKey: 987654321 });
    const err = Object.assign(new Error('Connection terminated unexpectedly'), {
      client,
      code: 'ECONNRESET',
      details: { table: 'runs' },
      cause: new Error('socket hang up'),
      errors: [Object.assign(new Error('one of two'), { socket: new EventEmitter() })],
      at: new Date(0),
    });
    const { log, lines } = captured();
    log.warn({ err }, 'an idle PostgreSQL connection failed');
    const line = JSON.parse(lines[0] as string);
    expect(line.err).toMatchObject({
      message: 'Connection terminated unexpectedly: socket hang up',
      code: 'ECONNRESET',
      client: '[Client]',
      details: { table: 'runs' },
      aggregateErrors: [{ message: 'one of two', socket: '[EventEmitter]' }],
      at: '1970-01-01T00:00:00.000Z',
    });
    expect(err.client).toBe(client);
    expect(lines[0]).not.toMatch(/987654321|4242|PRIVATE-KEY|pw-not-logged|connectionParameters/);
    expect((lines[0] as string).length).toBeLessThan(2000);
  });
});

describe("a request's lazy logger", () => {
  it('makes no child logger until something logs through it', () => {
    const { log } = captured();
    let children = 0;
    const parent = new Proxy(log, {
      get: (target, key, receiver) =>
        key === 'child'
          ? (...args: Parameters<typeof log.child>) => {
              children++;
              return target.child(...args);
            }
          : Reflect.get(target, key, receiver),
    });
    const lazy = new LazyChildLogger(parent, { reqId: 'r1' });
    expect(lazy.level).toBe('info');
    expect(children).toBe(0);
    lazy.debug('below the level');
    lazy.info('once');
    lazy.warn('twice');
    expect(children).toBe(1);
  });

  it("logs with the request's bindings, redacted like the root logger's lines", () => {
    const { lines, log } = captured();
    const lazy = new LazyChildLogger(log, { reqId: 'r2' });
    lazy.warn({ headers: { authorization: 'Bearer secret-token' } }, 'refused');
    lazy.child({ component: 'x' }).error('failed');
    expect(lines.map((line) => JSON.parse(line))).toMatchObject([
      { reqId: 'r2', msg: 'refused', level: 40, headers: { authorization: '[redacted]' } },
      { reqId: 'r2', component: 'x', msg: 'failed', level: 50 },
    ]);
  });
});
