import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createModelCatalog } from '../src/actions/index.js';
import { loadConfig } from '../src/config/index.js';
import { compileMappings, createMappingEngine } from '../src/mapping/index.js';
import { createTransformHost, type TransformHost } from '../src/transforms/index.js';

// The example transforms, run through the real sandbox exactly as a mapping would.
let host: TransformHost;
beforeAll(async () => {
  const config = loadConfig({
    data: {
      hooks: {
        transformsDir: import.meta.dirname,
        mappings: ['github', 'stripe', 'normalize', 'uptime'].map((id) => ({ id, transform: { module: `${id}.ts` } })),
      },
    },
    env: {},
  });
  host = await createTransformHost({
    config,
    mappings: compileMappings(config, createModelCatalog(config)),
    log: pino({ level: 'silent' }),
  });
});
afterAll(() => host.close());

const run = (id: string, payload: unknown, headers: Record<string, string> = {}) =>
  host.run(id, { payload, headers, query: {}, path: id, url: `/hooks/${id}`, rawBody: JSON.stringify(payload) });

describe('transforms/github.ts', () => {
  const repository = { full_name: 'acme/site' };
  it('turns a push into an agent message per repository', async () => {
    const push = {
      ref: 'refs/heads/main',
      repository,
      pusher: { name: 'ada' },
      commits: [{ message: 'Fix nav\n\nlong body' }, { message: 'Bump deps' }],
    };
    expect(await run('github', push, { 'x-github-event': 'push' })).toEqual({
      name: 'GitHub acme/site',
      sessionKey: 'hook:github:acme/site',
      message: 'ada pushed 2 commit(s) to acme/site@main:\n- Fix nav\n- Bump deps',
    });
  });
  it('describes a merged pull request and wakes for a release', async () => {
    const pr = {
      action: 'closed',
      repository,
      pull_request: { number: 7, title: 'Dark mode', html_url: 'https://x/7', merged: true },
    };
    expect(await run('github', pr, { 'x-github-event': 'pull_request' })).toMatchObject({
      message: 'Pull request #7 "Dark mode" was merged in acme/site: https://x/7',
    });
    const release = { action: 'published', repository, release: { tag_name: 'v2.0.0', html_url: 'https://x/r' } };
    expect(await run('github', release, { 'x-github-event': 'release' })).toMatchObject({
      kind: 'wake',
      text: 'Released acme/site v2.0.0: https://x/r',
    });
  });
  it('skips events it does not handle', async () => {
    expect(await run('github', { zen: 'Keep it logically awesome.' }, { 'x-github-event': 'ping' })).toBeNull();
    expect(await run('github', { action: 'labeled', repository }, { 'x-github-event': 'issues' })).toBeNull();
  });
});

describe('transforms/stripe.ts', () => {
  it('keeps a failed payment', async () => {
    const event = {
      id: 'evt_1',
      type: 'invoice.payment_failed',
      data: {
        object: {
          id: 'in_1',
          number: 'A-42',
          amount_due: 1999,
          currency: 'eur',
          customer: 'cus_9',
          customer_email: 'c@x',
        },
      },
    };
    expect(await run('stripe', event)).toEqual({
      name: 'Stripe',
      sessionKey: 'hook:stripe:cus_9',
      message: 'Payment failed for invoice A-42 (19.99 EUR), customer c@x.',
    });
  });
  it('skips what it does not care about', async () => {
    expect(await run('stripe', { id: 'evt_2', type: 'charge.succeeded', data: { object: {} } })).toBeNull();
  });
});

describe('transforms/normalize.ts', () => {
  it('wakes at once for a critical alert and at the next heartbeat otherwise', async () => {
    expect(
      await run('normalize', {
        source: 'grafana',
        title: 'Disk full',
        message: 'nas /volume1 at 98%',
        severity: 'critical',
      }),
    ).toEqual({
      kind: 'wake',
      text: '[grafana] (critical) Disk full — nas /volume1 at 98%',
      mode: 'now',
    });
    expect(await run('normalize', { text: 'Backup finished' })).toEqual({
      kind: 'wake',
      text: '[normalize] Backup finished',
      mode: 'next-heartbeat',
    });
  });
  it('falls back to the templates when it finds nothing', async () => {
    expect(await run('normalize', { value: 42 })).toBeUndefined();
  });
});

describe('transforms/uptime.ts, typed from the schema its mapping validates with', () => {
  it('wakes at once when a monitor is down, at the next heartbeat when it is back', async () => {
    expect(await run('uptime', { monitor: 'nas', status: 'down', url: 'http://nas.lan' })).toEqual({
      kind: 'wake',
      text: 'nas is down (http://nas.lan)',
      mode: 'now',
    });
    expect(await run('uptime', { monitor: 'nas', status: 'up', responseMs: 42 })).toMatchObject({
      text: 'nas is back up, answering in 42 ms',
      mode: 'next-heartbeat',
    });
  });

  it('is guarded by the same schema: a payload that does not match never reaches it', async () => {
    const config = loadConfig({
      data: {
        hooks: {
          transformsDir: import.meta.dirname,
          mappings: [
            {
              id: 'uptime',
              match: { path: 'uptime' },
              schema: 'transforms/uptime.schema.ts',
              transform: { module: 'uptime.ts' },
            },
          ],
        },
      },
      baseDir: join(import.meta.dirname, '..'),
      env: {},
    });
    const engine = createMappingEngine({
      config,
      actionOptions: { models: createModelCatalog(config) },
      transforms: host,
    });
    const body = { monitor: 'nas', status: 'sideways' };
    const err = await engine
      .route({
        subPath: 'uptime',
        payload: body,
        headers: {},
        query: {},
        url: '/hooks/uptime',
        rawBody: Buffer.from(JSON.stringify(body)),
      })
      .catch((caught: unknown) => caught);
    expect((err as Error).message).toBe(
      "the payload does not match the mapping's schema at /status: must be equal to one of the allowed values",
    );
  });
});

describe('the example transforms on a body that is not an object', () => {
  it.each([[null], [[]], ['text'], [7]])('skip %j instead of failing', async (payload) => {
    expect(await run('github', payload, { 'x-github-event': 'push' })).toBeNull();
    expect(await run('stripe', payload)).toBeNull();
    expect(await run('normalize', payload)).toBeUndefined();
  });
});
