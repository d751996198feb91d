import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTH, createTestApp, type TestApp } from '../../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    agents: { defaults: { models: { 'local/llama3.1': { alias: 'fast' }, 'builtin/echo': {} } } },
    models: { providers: { local: { baseUrl: 'http://127.0.0.1:1', api: 'openai-chat' } } },
    channels: { chatnet: { apiBase: 'http://127.0.0.1:1', botToken: 'bot-token' } },
  });
});
afterAll(() => t.close());

const post = (path: string, payload: unknown) =>
  t.app.inject({ method: 'POST', url: `/hooks/${path}`, headers: AUTH, payload: payload as object });

type Case = [field: string, value: unknown, status: number, check?: RegExp | Record<string, unknown>];

describe('POST /hooks/wake fields (docs/http.md#post-hookswake)', () => {
  const cases: Case[] = [
    ['text', 'Disk almost full', 200],
    ['text', 42, 400, /text: expected a string/],
    ['text', '   ', 400, /text required/],
    ['text', undefined, 400, /text required/],
    ['mode', 'now', 200, { mode: 'now' }],
    ['mode', 'next-heartbeat', 200, { mode: 'next-heartbeat' }],
    ['mode', true, 400, /mode: expected one of now, next-heartbeat/],
    ['mode', 'later', 400, /mode: expected one of now, next-heartbeat/],
  ];
  it.each(cases)('%s = %j answers %i', async (field, value, status, check) => {
    const body: Record<string, unknown> = { text: 'event' };
    if (value === undefined) delete body[field];
    else body[field] = value;
    const res = await post('wake', body);
    expect(res.statusCode).toBe(status);
    const json = res.json();
    if (status === 400) {
      expect(json).toMatchObject({ ok: false, code: expect.any(String) });
      expect(json.error).toMatch(check as RegExp);
    } else {
      expect(json).toMatchObject({
        ok: true,
        mode: expect.any(String),
        eventId: expect.any(String),
        ...(check as object),
      });
    }
  });

  it('defaults mode to now and stores the event for the main session', async () => {
    const res = await post('wake', { text: 'stored?' });
    expect(res.json().mode).toBe('now');
    const event = t.store.events.get(res.json().eventId);
    expect(event).toMatchObject({ sessionKey: 'main', text: 'stored?', origin: 'hook', consumedAt: null });
  });
});

describe('POST /hooks/agent fields (docs/http.md#post-hooksagent)', () => {
  const cases: Case[] = [
    ['message', 'Summarise the alert', 202],
    ['message', ['x'], 400, /message: expected a string/],
    ['message', '', 400, /message required/],
    ['name', 'Email', 202],
    ['name', 7, 400, /name: expected a string/],
    ['sessionKey', 'hook:custom:1', 202, { sessionKey: 'hook:custom:1' }],
    ['sessionKey', 12, 400, /sessionKey: expected a string/],
    ['sessionKey', 'a\nb', 400, /sessionKey: expected a string of 1 to 256 characters without control characters/],
    ['sessionKey', 'k'.repeat(257), 400, /sessionKey: expected a string of 1 to 256/],
    [
      'sessionKey',
      'main',
      400,
      /sessionKey: expected a key starting with hook: \(the main session is reached only through wake\)/,
    ],
    ['sessionKey', 'MAIN', 400, /sessionKey: expected a key starting with hook:/],
    ['sessionKey', 'other:1', 400, /sessionKey: expected a key starting with hook:/],
    ['sessionKey', 'HOOK:Upper', 202, { sessionKey: 'HOOK:Upper' }],
    [
      'sessionKey',
      'hook:c1\u0085',
      400,
      /sessionKey: expected a string of 1 to 256 characters without control characters/,
    ],
    ['wakeMode', 'next-heartbeat', 202],
    ['wakeMode', 1, 400, /wakeMode: expected one of now, next-heartbeat/],
    ['wakeMode', 'soon', 400, /wakeMode: expected one of now, next-heartbeat/],
    ['deliver', false, 202],
    ['deliver', 'yes', 400, /deliver: expected true or false/],
    ['deliver', 1, 400, /deliver: expected true or false/],
    ['channel', 'chatnet', 202],
    ['channel', 'last', 202],
    ['channel', 5, 400, /channel: expected one of last, chatnet/],
    ['channel', 'slack', 400, /channel: expected one of last, chatnet/],
    ['to', '-100123', 202],
    ['to', 123, 400, /to: expected a string/],
    ['to', '  ', 400, /to: expected a non-empty recipient/],
    ['model', 'local/llama3.1', 202],
    ['model', 'fast', 202],
    ['model', 3, 400, /model: expected a string/],
    ['model', 'openai/gpt-5', 400, /model not allowed: openai\/gpt-5/],
    ['thinking', 'high', 202],
    ['thinking', 2, 400, /thinking: expected one of off, minimal, low, medium, high, xhigh/],
    ['thinking', 'extreme', 400, /thinking: expected one of/],
    ['timeoutSeconds', 30, 202],
    ['timeoutSeconds', '30', 400, /timeoutSeconds: expected a number of seconds/],
    ['timeoutSeconds', 0, 400, /timeoutSeconds: expected a number of seconds greater than 0/],
    ['timeoutSeconds', -5, 400, /timeoutSeconds/],
    ['timeoutSeconds', 1e9, 400, /at most 86400/],
  ];
  it.each(cases)('%s = %j answers %i', async (field, value, status, check) => {
    const body: Record<string, unknown> = { message: 'run', [field]: value };
    const res = await post('agent', body);
    expect(res.statusCode).toBe(status);
    const json = res.json();
    if (status === 400) {
      expect(json.ok).toBe(false);
      expect(json.error).toMatch(check as RegExp);
    } else {
      expect(json).toMatchObject({
        ok: true,
        runId: expect.any(String),
        sessionKey: expect.any(String),
        ...(check as object),
      });
    }
  });

  it('applies the documented defaults and stores a queued run', async () => {
    const res = await post('agent', { message: 'hello' });
    expect(res.statusCode).toBe(202);
    const { runId, sessionKey } = res.json();
    expect(sessionKey).toMatch(/^hook:[0-9a-f-]{36}$/);
    expect(t.store.runs.get(runId)).toMatchObject({
      status: 'queued',
      wakeMode: 'now',
      deliver: true,
      channel: 'last',
      model: 'builtin/echo',
      sessionKey,
      allowUnsafeExternalContent: false,
    });
  });

  it('resolves an alias to its model and rounds fractional timeouts up', async () => {
    const res = await post('agent', { message: 'hi', model: 'fast', timeoutSeconds: 1.2 });
    expect(t.store.runs.get(res.json().runId)).toMatchObject({ model: 'local/llama3.1', timeoutSeconds: 2 });
  });

  it('ignores unknown fields', async () => {
    const res = await post('agent', { message: 'hi', surprise: { deep: true } });
    expect(res.statusCode).toBe(202);
  });
});

describe('a channel without configuration', () => {
  it('answers 400 INVALID_FIELD for a channel id that is not configured, saying none is', async () => {
    const open = await createTestApp();
    try {
      const chatnet = await open.app.inject({
        method: 'POST',
        url: '/hooks/agent',
        headers: AUTH,
        payload: { message: 'm', channel: 'chatnet' },
      });
      expect(chatnet.statusCode).toBe(400);
      expect(chatnet.json()).toMatchObject({
        code: 'INVALID_FIELD',
        error: 'channel: expected last (no channel is configured)',
      });
    } finally {
      await open.close();
    }
  });
});

describe('hooks.allowedSessionKeyPrefixes (docs/security.md#session-keys)', () => {
  let custom: TestApp;
  beforeAll(async () => {
    custom = await createTestApp({
      hooks: {
        allowedSessionKeyPrefixes: ['team:'],
        mappings: [{ match: { path: 'owned' }, messageTemplate: 'x', sessionKey: '{{key}}' }],
      },
    });
  });
  afterAll(() => custom.close());
  const send = (path: string, payload: object) =>
    custom.app.inject({ method: 'POST', url: `/hooks/${path}`, headers: AUTH, payload });

  it('takes keys with a configured prefix, in any case, and refuses the default prefix when it is not listed', async () => {
    expect((await send('agent', { message: 'm', sessionKey: 'TEAM:ops' })).statusCode).toBe(202);
    const refused = await send('agent', { message: 'm', sessionKey: 'hook:x' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ code: 'INVALID_FIELD', error: expect.stringMatching(/^sessionKey: /) });
  });

  it('applies the same rule to a key a mapping renders, and never lets one be main', async () => {
    expect((await send('owned', { key: 'team:a' })).statusCode).toBe(202);
    expect((await send('owned', { key: 'main' })).json()).toMatchObject({ code: 'INVALID_FIELD' });
    // A mapping whose fixed key is main does not load (test/unit/mapping/static-fields.test.ts).
    // Control characters a payload carries into a rendered key: C0, DEL and C1 alike.
    for (const key of ['team:a\u0000', 'team:a\u007f', 'team:a\u0085', 'team:a\u009b[2J']) {
      expect((await send('owned', { key })).json()).toMatchObject({ code: 'INVALID_FIELD' });
    }
  });
});
