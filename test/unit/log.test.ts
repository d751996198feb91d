import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, LazyChildLogger } from '../../src/log.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { lines, log: createLogger({ level: 'info', destination }) };
}

describe("a request's lazy logger", () => {
  it('makes no child logger until something logs through it', () => {
    const { log } = capture();
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
    const { lines, log } = capture();
    const lazy = new LazyChildLogger(log, { reqId: 'r2' });
    lazy.warn({ headers: { authorization: 'Bearer secret-token' } }, 'refused');
    lazy.child({ component: 'x' }).error('failed');
    expect(lines).toMatchObject([
      { reqId: 'r2', msg: 'refused', level: 40, headers: { authorization: '[redacted]' } },
      { reqId: 'r2', component: 'x', msg: 'failed', level: 50 },
    ]);
  });
});
