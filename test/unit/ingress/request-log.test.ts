import { describe, expect, it } from 'vitest';
import { sinceOf } from '../../../src/admin/log-query.js';
import { createRequestRecorder, redactPaths } from '../../../src/ingress/request-log.js';

const facts = (raw: string, payload: unknown, json = true) => ({
  id: 'r',
  receivedAt: 0,
  startedMs: performance.now(),
  subPath: 'x',
  url: '/hooks/x',
  headers: {},
  credentials: {},
  authenticated: true,
  body: { payload, rawBody: Buffer.from(raw), payloadIsJsonOfRawBody: json },
});

describe('the request recorder', () => {
  it('masks paths with wildcards and leaves everything else as it was', () => {
    const paths = [
      ['card', 'number'],
      ['items', '*', 'secret'],
      ['list', '1'],
    ];
    const value = {
      card: { number: '4242', cvc: 1 },
      items: [{ secret: 'a', keep: 1 }, { secret: 'b' }],
      list: [1, 2, 3],
    };
    expect(redactPaths(value, paths)).toEqual({
      changed: true,
      value: {
        card: { number: '[redacted]', cvc: 1 },
        items: [{ secret: '[redacted]', keep: 1 }, { secret: '[redacted]' }],
        list: [1, '[redacted]', 3],
      },
    });
    expect(redactPaths({ other: 1 }, paths)).toEqual({ changed: false, value: { other: 1 } });
    expect(redactPaths('text', paths).changed).toBe(false);
  });

  it('keeps the raw bytes when nothing is masked, and never a form body raw while redaction is on', () => {
    const recorder = createRequestRecorder({ enabled: true, maxBodyBytes: 1000, redact: ['token'] });
    const raw = '{ "a" : 1 }';
    expect(recorder.record(facts(raw, { a: 1 }), { status: 200 })).toMatchObject({
      body: Buffer.from(raw),
      redacted: false,
    });
    const form = recorder.record(facts('token=abc&a=1', { token: 'abc', a: '1' }, false), { status: 200 });
    expect(JSON.parse(form.body.toString())).toEqual({ token: '[redacted]', a: '1' });
    expect(form.redacted).toBe(true);
  });

  it.each([
    ['a kept card then a number over it', '{"card":{"number":"4111111111111111"},"card":1}'],
    ['a number then a kept card over it', '{"card":1,"card":{"number":"4111111111111111"}}'],
    ['a number shadowed inside the kept card', '{"card":{"number":"4111111111111111","number":2}}'],
    ['a shadowed card spelled with escapes', '{"\\u0063ard":{"numb\\u0065r":"4111111111111111"},"card":1}'],
    ['a shadowed item of a wildcard path', '{"items":[{"secret":"4111111111111111"}],"items":[]}'],
  ])('never keeps a redacted value hidden by a duplicate key: %s', (_name, raw) => {
    const recorder = createRequestRecorder({
      enabled: true,
      maxBodyBytes: 1000,
      redact: ['card.number', 'items.*.secret'],
    });
    const payload: unknown = JSON.parse(raw);
    const kept = recorder.record(facts(raw, payload), { status: 200 });
    expect(kept.body.toString()).not.toContain('4111');
    // What is kept is the body as the parser saw it, masked; it says so.
    expect(JSON.parse(kept.body.toString())).toEqual(redactPaths(payload, [['card', 'number']]).value);
    expect(kept).toMatchObject({ redacted: true, bodyWhole: false });
    expect(recorder.redactedCopy(facts(raw, payload).body).bytes.toString()).not.toContain('4111');
  });

  it('keeps a body with duplicate keys raw when no redacted path is among them', () => {
    const recorder = createRequestRecorder({ enabled: true, maxBodyBytes: 1000, redact: ['card.number'] });
    const raw = '{"a":1,"a":2,"card":{"cvc":1},"note":"card number"}';
    expect(recorder.record(facts(raw, JSON.parse(raw)), { status: 200 })).toMatchObject({
      body: Buffer.from(raw),
      redacted: false,
      bodyWhole: true,
    });
  });

  it('cuts the body at maxBodyBytes and says so', () => {
    const recorder = createRequestRecorder({ enabled: true, maxBodyBytes: 4, redact: [] });
    const cut = recorder.record(facts('{"a":"long"}', { a: 'long' }), { status: 200 });
    expect(cut).toMatchObject({ body: Buffer.from('{"a"'), bodyBytes: 12, truncated: true });
  });

  it('reads since as an ISO time or a duration back from now', () => {
    expect(sinceOf('1h', 10_000_000)).toBe(10_000_000 - 3_600_000);
    expect(sinceOf('2026-01-02T03:04:05Z')).toBe(Date.parse('2026-01-02T03:04:05Z'));
    expect(() => sinceOf('yesterday')).toThrow(/since/);
  });
});
