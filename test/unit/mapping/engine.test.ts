import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createModelCatalog } from '../../../src/actions/index.js';
import { loadConfig } from '../../../src/config/index.js';
import { type HookdError, isHookdError } from '../../../src/errors.js';
import { MAX_RENDER_STEPS } from '../../../src/mapping/bounded-text.js';
import { createMappingEngine } from '../../../src/mapping/index.js';
import { createTransformHost } from '../../../src/transforms/index.js';
import { ROOT } from '../../helpers/hookd-process.js';
import { engine, request } from '../../helpers/mapping.js';
import { hostConfig } from '../../helpers/transforms.js';

/** The mapping engine over `hooks` (enabled, the fixture transforms) with a transform host, for `use`. */
async function withTransforms(
  hooks: Record<string, unknown>,
  use: (e: ReturnType<typeof createMappingEngine>) => Promise<void>,
) {
  const config = loadConfig({
    data: {
      hooks: { enabled: true, token: 't'.repeat(20), transformsDir: join(ROOT, 'test/fixtures/transforms'), ...hooks },
    },
    env: {},
  });
  const transforms = await createTransformHost({ ...hostConfig(config), log: pino({ level: 'silent' }) });
  try {
    const actionOptions = { models: createModelCatalog(config), chatnetConfigured: false };
    await use(createMappingEngine({ config, actionOptions, transforms }));
  } finally {
    transforms.close();
  }
}

describe('mapping resolution', () => {
  const e = engine({
    mappings: [
      { id: 'gh', match: { path: 'ingest', source: 'github' }, messageTemplate: 'gh {{ref}}' },
      { id: 'ingest-any', match: { path: '/ingest/' }, action: 'wake', textTemplate: 'other {{source}}' },
      { id: 'by-source', match: { source: 'stripe' }, messageTemplate: 'stripe' },
      { id: 'catch-all', messageTemplate: 'anything' },
    ],
    presets: ['mail'],
  });

  it('takes the first mapping whose predicates all hold', () => {
    expect(e.resolve('ingest', { source: 'github' })?.id).toBe('gh');
    expect(e.resolve('ingest', { source: 'gitlab' })?.id).toBe('ingest-any');
    expect(e.resolve('elsewhere', { source: 'stripe' })?.id).toBe('by-source');
    expect(e.resolve('elsewhere', {})?.id).toBe('catch-all');
  });

  it('matches paths with slashes trimmed and case-sensitively', () => {
    expect(e.resolve('ingest', {})?.id).toBe('ingest-any');
    expect(e.resolve('Ingest', {})?.id).toBe('catch-all');
  });

  it('only matches a string source', () => {
    expect(e.resolve('x', { source: ['stripe'] })?.id).toBe('catch-all');
  });

  it('tries custom mappings before presets', () => {
    expect(e.resolve('mail', { messages: [] })?.id).toBe('catch-all');
    const presetsOnly = engine({ presets: ['mail'] });
    expect(presetsOnly.resolve('mail', {})?.id).toBe('preset:mail');
    expect(presetsOnly.resolve('other', {})).toBeUndefined();
  });

  it('raises the body limit only for the paths of mappings that ask', () => {
    const limits = engine({
      presets: ['mail'],
      mappings: [{ match: { path: 'big' }, messageTemplate: 'x', maxBodyBytes: 1000000 }],
    });
    expect(limits.maxBodyBytesFor('mail')).toBe(8 * 1024 * 1024);
    expect(limits.maxBodyBytesFor('big')).toBe(1000000);
    expect(limits.maxBodyBytesFor('other')).toBe(262144);
  });
});

describe('routing', () => {
  it('renders every templated field and validates like /hooks/agent', async () => {
    const e = engine({
      mappings: [
        {
          match: { path: 'gh' },
          name: 'GitHub {{repository.name}}',
          sessionKey: 'hook:gh:{{repository.name}}',
          messageTemplate: '{{headers.x-github-event}} to {{repository.name}} by {{pusher.name}}',
          to: '{{query.chat}}',
          deliver: false,
          wakeMode: 'next-heartbeat',
          timeoutSeconds: 30,
        },
      ],
    });
    const outcome = await e.route(
      request(
        'gh',
        { repository: { name: 'site' }, pusher: { name: 'ada' } },
        { headers: { 'X-GitHub-Event': 'push' }, query: { chat: '7' } },
      ),
    );
    expect(outcome).toEqual({
      kind: 'actions',
      mappingId: 'hooks.mappings[0]',
      fanOut: false,
      actions: [
        {
          kind: 'agent',
          message: 'push to site by ada',
          name: 'GitHub site',
          sessionKey: 'hook:gh:site',
          wakeMode: 'next-heartbeat',
          deliver: false,
          channel: 'last',
          to: '7',
          model: 'builtin/echo',
          timeoutSeconds: 30,
          allowUnsafeExternalContent: false,
          contentSource: 'webhook',
          mappingId: 'hooks.mappings[0]',
        },
      ],
    });
  });

  it('uses wakeMode as the wake mode of a wake mapping', async () => {
    const e = engine({ mappings: [{ action: 'wake', textTemplate: 'alert {{name}}', wakeMode: 'next-heartbeat' }] });
    const outcome = await e.route(request('alerts', { name: 'disk' }));
    expect(outcome.kind === 'actions' && outcome.actions).toEqual([
      {
        kind: 'wake',
        text: 'alert disk',
        mode: 'next-heartbeat',
        allowUnsafeExternalContent: false,
        contentSource: 'webhook',
      },
    ]);
  });

  it('answers 400 when the message renders empty or a field is invalid', async () => {
    const e = engine({
      mappings: [
        { match: { path: 'empty' }, messageTemplate: '{{missing}}' },
        { match: { path: 'badthinking' }, messageTemplate: 'x', thinking: '{{level}}' },
      ],
    });
    await expect(e.route(request('empty', {}))).rejects.toMatchObject({ code: 'MESSAGE_REQUIRED', statusCode: 400 });
    await expect(e.route(request('badthinking', { level: 'extreme' }))).rejects.toMatchObject({
      code: 'INVALID_FIELD',
      message: expect.stringMatching(/^thinking: expected one of/),
    });
  });

  it('fans out over forEach, one action per item, the item standing at index 0', async () => {
    const e = engine({
      mappings: [
        {
          forEach: 'data.items',
          sessionKey: 'hook:s:{{data.items.0.id}}',
          messageTemplate: '{{data.items.0.id}} of {{batch}}',
        },
      ],
    });
    const outcome = await e.route(
      request('x', { batch: 'b1', data: { items: [{ id: 'a' }, { id: 'b' }, { id: 'c' }] } }),
    );
    expect(outcome.kind === 'actions' && outcome.fanOut).toBe(true);
    expect(
      outcome.kind === 'actions' && outcome.actions.map((a) => (a.kind === 'agent' ? [a.sessionKey, a.message] : [])),
    ).toEqual([
      ['hook:s:a', 'a of b1'],
      ['hook:s:b', 'b of b1'],
      ['hook:s:c', 'c of b1'],
    ]);
    const none = await e.route(request('x', { data: { items: [] } }));
    expect(none).toMatchObject({ kind: 'actions', actions: [], fanOut: true });
    await expect(
      e.route(request('x', { data: { items: Array.from({ length: 101 }, (_, i) => ({ id: i })) } })),
    ).rejects.toMatchObject({
      code: 'TOO_MANY_ACTIONS',
    });
    await expect(e.route(request('x', { data: { items: 'nope' } }))).rejects.toMatchObject({ code: 'INVALID_FIELD' });
  });

  it('answers none when nothing matches', async () => {
    expect(await engine({}).route(request('x', {}))).toEqual({ kind: 'none' });
  });
});

describe('compiling', () => {
  it('names the mapping and field of a template syntax error, and every broken mapping at once', () => {
    try {
      engine({
        mappings: [
          { messageTemplate: 'ok' },
          { messageTemplate: '{{#a}}' },
          { name: '{{/b}}', messageTemplate: 'x' },
          {},
        ],
      });
      expect.unreachable();
    } catch (err) {
      expect(isHookdError(err, 'CONFIG_INVALID')).toBe(true);
      expect((err as HookdError<'CONFIG_INVALID'>).params.problems).toEqual([
        'hooks.mappings[1].messageTemplate: template error: Unclosed section "a" at 6',
        'hooks.mappings[2].name: template error: Unopened section "b" at 0',
        'hooks.mappings[3]: expected messageTemplate, textTemplate or a transform',
      ]);
    }
  });

  it('checks a literal model against the allowlist at load', () => {
    expect(() =>
      engine(
        { mappings: [{ messageTemplate: 'x', model: 'builtin/other' }] },
        { agents: { defaults: { models: ['builtin/echo'] } } },
      ),
    ).toThrow(/hooks\.mappings\[0\]\.model: model not allowed: builtin\/other/);
  });
});

describe('a request shares one transform time budget', () => {
  it('stops a fan-out of slow transform calls once their sum passes timeoutMs', async () => {
    await withTransforms(
      {
        transforms: { timeoutMs: 500 },
        mappings: [
          {
            match: { path: 'loop' },
            forEach: 'items',
            messageTemplate: 'item {{items.0}}',
            transform: { module: 'hostile.ts', export: 'slow' },
          },
        ],
      },
      async (e) => {
        const started = performance.now();
        // Twenty items of 120 ms: with a budget per call they would all pass, in 2.4 s at least.
        const items = Array.from({ length: 20 }, (_, i) => i);
        await expect(e.route(request('loop', { items }))).rejects.toMatchObject({
          code: 'TRANSFORM_FAILED',
          statusCode: 500,
        });
        // Stopped at the shared 500 ms: a fan-out that ran every item first (and failed after)
        // took 2.4 s at least, which no load can shorten; under that, a loaded machine has
        // almost 2 s for its own delays.
        expect(performance.now() - started).toBeLessThan(2400);
        // One item alone fits the budget, with room for a loaded machine (a 200 ms budget did not).
        await expect(e.route(request('loop', { items: [1] }))).resolves.toMatchObject({ kind: 'actions' });
      },
    );
  });
});

describe('the size of what a mapping renders (docs/operations.md#limits)', () => {
  it('cuts a template that renders over 256 KiB of text from a small payload, with a note', async () => {
    const e = engine({ mappings: [{ match: { path: 'amp' }, messageTemplate: '{{#items}}{{big}}{{/items}}' }] });
    const payload = { big: 'b'.repeat(1024), items: Array.from({ length: 300 }, () => ({})) };
    const outcome = await e.route(request('amp', payload));
    const message =
      outcome.kind === 'actions' && outcome.actions[0]?.kind === 'agent' ? outcome.actions[0].message : '';
    expect(message.length).toBe(256 * 1024);
    expect(message).toMatch(/\n… \[cut by hookd: \d+ more characters\]$/);
    const small = { big: 'b', items: [{}, {}] };
    await expect(e.route(request('amp', small))).resolves.toMatchObject({ kind: 'actions' });
  });

  it('answers sections that would render more than a string can hold with the cut, never a 500', async () => {
    // The 240 KB body that rendered 4.8 billion characters and answered 500 (RangeError).
    const e = engine({
      mappings: [{ match: { path: 'amp' }, action: 'wake', textTemplate: 'items: {{#items}}{{name}}, {{/items}}' }],
    });
    const payload = { name: 'x'.repeat(120_000), items: Array.from({ length: 40_000 }, () => ({})) };
    const outcome = await e.route(request('amp', payload));
    const text = outcome.kind === 'actions' && outcome.actions[0]?.kind === 'wake' ? outcome.actions[0].text : '';
    expect(text.length).toBe(256 * 1024);
    expect(text).toMatch(/\n… \[cut by hookd: 4799817863 more characters\]$/);
  });

  it('spends one budget of template steps on a whole fan-out, not one per item', async () => {
    let reads = 0;
    const e = engine({
      mappings: [{ match: { path: 'fan' }, forEach: 'items', messageTemplate: 'm{{#a}}{{#a}}{{x}}{{/a}}{{/a}}' }],
    });
    const payload = {
      items: Array.from({ length: 100 }, (_, i) => i),
      a: Array.from({ length: 300 }, () => ({})),
      get x() {
        reads++;
        return '';
      },
    };
    const delivered = request('fan', payload);
    reads = 0;
    // 300 × 300 reads of `x` per item: nine million for the hundred items without one shared budget.
    const outcome = await e.route(delivered);
    expect(reads).toBeLessThan(MAX_RENDER_STEPS);
    const messages =
      outcome.kind === 'actions' ? outcome.actions.map((a) => (a.kind === 'agent' ? a.message : '')) : [];
    expect(messages).toHaveLength(100);
    // The first item's 180,000 steps fit; the second spends what is left; the rest find none.
    expect(messages[0]).toBe('m');
    for (const message of messages.slice(1)) expect(message).toMatch(/used up their \d+ steps\]$/);
  });

  it('renders the fields that route an action before its text, and refuses one that was cut', async () => {
    // The message's sections spend the whole budget; the session key's template, with a section
    // of its own, still renders (before: the cut note, refused as a session key).
    const e = engine({
      mappings: [
        {
          match: { path: 'route' },
          messageTemplate: '{{#a}}{{#a}}{{x}}{{/a}}{{/a}}',
          sessionKey: 'hook:{{#owner}}{{id}}{{/owner}}',
          name: '{{#names}}{{n}}{{/names}}',
        },
      ],
    });
    const payload = { a: Array.from({ length: 1000 }, () => ({})), x: '', owner: { id: '42' }, names: [{ n: 'run' }] };
    const outcome = await e.route(request('route', payload));
    const action = outcome.kind === 'actions' ? outcome.actions[0] : undefined;
    expect(action).toMatchObject({ kind: 'agent', sessionKey: 'hook:42', name: 'run' });
    // A name cut by its own render: 400, never the note as its name.
    const long = { a: [], x: '', owner: { id: '42' }, names: Array.from({ length: 300_000 }, () => ({ n: 'x' })) };
    await expect(e.route(request('route', long))).rejects.toMatchObject({
      code: 'INVALID_FIELD',
      params: { field: 'name' },
    });
  });

  it('fails a transform that returns over 256 KiB of text with TRANSFORM_FAILED', async () => {
    await withTransforms(
      {
        mappings: [{ match: { path: 'big' }, transform: { module: 'hostile.ts', export: 'bigWake' } }],
      },
      async (e) => {
        await expect(e.route(request('big', {}))).rejects.toMatchObject({
          code: 'TRANSFORM_FAILED',
          message: expect.stringMatching(/its text is 300000 characters; the limit is 262144/),
        });
      },
    );
  });

  it("cuts what a template renders in a mapping with a transform too: a payload is not its transform's fault", async () => {
    await withTransforms(
      {
        mappings: [
          {
            match: { path: 'amp' },
            messageTemplate: '{{#items}}{{big}}{{/items}}',
            transform: { module: 'hostile.ts', export: 'keep' },
          },
        ],
      },
      async (e) => {
        const payload = { big: 'b'.repeat(1024), items: Array.from({ length: 300 }, () => ({})) };
        const outcome = await e.route(request('amp', payload));
        const message =
          outcome.kind === 'actions' && outcome.actions[0]?.kind === 'agent' ? outcome.actions[0].message : '';
        expect(message.length).toBe(256 * 1024);
        expect(message).toMatch(/\n… \[cut by hookd: 45056 more characters\]$/);
      },
    );
  });
});
