import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { type HookdError, isHookdError } from '../../../src/errors.js';

/**
 * Values the schema's types allow and `serve` could not honour: refused at load, with their key
 * (docs/configuration.md). Each was passed by `hookd check` and then misbehaved.
 */
function problemsOf(data: object): readonly string[] {
  try {
    loadConfig({ data, env: {} });
    return [];
  } catch (err) {
    if (!isHookdError(err, 'CONFIG_INVALID')) throw err;
    return (err as HookdError<'CONFIG_INVALID'>).params.problems;
  }
}

describe('values a timer cannot wait for', () => {
  // Node fires a timer of more than 2^31 − 1 ms after 1 ms: a heartbeat of 30d ran every
  // millisecond, and a signed body's 2^31 ms deadline answered 408 at once.
  it('refuses a heartbeat longer than 24 days, and takes 24 days', () => {
    const every = (value: string) => problemsOf({ agents: { defaults: { heartbeat: { every: value } } } });
    expect(every('25d')).toEqual([
      'agents.defaults.heartbeat.every: expected at least 1s'.replace('at least 1s', 'at most 24d'),
    ]);
    expect(every('30d')).toHaveLength(1);
    expect(every('24d')).toEqual([]);
  });

  it.each([
    [{ hooks: { verifiedPaths: { bodyTimeoutMs: 2 ** 31 } } }, /hooks\.verifiedPaths\.bodyTimeoutMs/],
    [{ hooks: { transforms: { timeoutMs: 2 ** 31 } } }, /hooks\.transforms\.timeoutMs/],
    [{ server: { headersTimeoutMs: 2 ** 31, requestTimeoutMs: 2 ** 31 } }, /server\.headersTimeoutMs/],
    [{ agents: { defaults: { timeoutSeconds: 1e10 } } }, /agents\.defaults\.timeoutSeconds/],
  ])('refuses %j', (data, key) => {
    expect(problemsOf(data).join('\n')).toMatch(key);
  });
});

describe('values serve refused with words that named no key', () => {
  it('refuses requests that would end before their headers may (Node refused to start: "headersTimeout … out of range")', () => {
    expect(problemsOf({ server: { requestTimeoutMs: 5000 } })).toEqual([
      'server.requestTimeoutMs: expected at least server.headersTimeoutMs (10000)',
    ]);
    expect(problemsOf({ server: { requestTimeoutMs: 5000, headersTimeoutMs: 5000 } })).toEqual([]);
  });

  it.each(['/healthz', '/ui', '/metrics', '/favicon.ico', '/api', '/api/hooks', '/ui/'])(
    "refuses hooks.path %s, which is hookd's own (fastify refused a route declared twice)",
    (path) => {
      expect(problemsOf({ hooks: { path } }).join('\n')).toMatch(/^hooks\.path: \/\S+ is hookd's own/);
    },
  );

  it('takes a hooks.path beside them', () => {
    for (const path of ['/hooks', '/uix', '/apis/in', '/h/ui']) expect(problemsOf({ hooks: { path } })).toEqual([]);
  });
});
