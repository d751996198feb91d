import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createModelCatalog } from '../../../src/actions/index.js';
import { loadConfig } from '../../../src/config/index.js';
import { createMappingEngine, type MappingEngine } from '../../../src/mapping/index.js';
import { createTransformHost, type TransformHost } from '../../../src/transforms/index.js';
import { ROOT } from '../../helpers/hookd-process.js';
import { engine, request } from '../../helpers/mapping.js';
import { hostConfig } from '../../helpers/transforms.js';

const labelOf = async (e: MappingEngine, ...args: Parameters<typeof request>) => {
  const outcome = await e.route(request(...args));
  return outcome.kind === 'actions' ? outcome.eventType : 'no mapping';
};

describe('a mapping reads its event type (docs/mappings.md#event-types)', () => {
  const e = engine({
    mappings: [
      { id: 'gh', match: { path: 'gh' }, eventType: { header: 'X-GitHub-Event' }, messageTemplate: 'm' },
      { id: 'slack', match: { path: 'slack' }, eventType: { path: 'event.type' }, messageTemplate: 'm' },
      { id: 'alerts', match: { path: 'alerts' }, eventType: { path: 'alerts.0.status' }, messageTemplate: 'm' },
      { id: 'plain', match: { path: 'plain' }, messageTemplate: 'm' },
    ],
  });

  it('from a header, any case', async () => {
    expect(await labelOf(e, 'gh', {}, { headers: { 'x-github-event': 'push' } })).toBe('push');
    expect(await labelOf(e, 'gh', {})).toBeUndefined();
  });

  it('from a dotted JSON path, array indexes included', async () => {
    expect(await labelOf(e, 'slack', { event: { type: 'app_mention' } })).toBe('app_mention');
    expect(await labelOf(e, 'alerts', { alerts: [{ status: 'firing' }] })).toBe('firing');
    expect(await labelOf(e, 'slack', { event: 'no object' })).toBeUndefined();
    expect(await labelOf(e, 'slack', { event: { type: { nested: true } } })).toBeUndefined();
    expect(await labelOf(e, 'plain', { type: 'x' })).toBeUndefined();
  });

  it('keeps what a sender sends as a label only: control characters dropped, cut at 100 characters, a number as text', async () => {
    expect(await labelOf(e, 'slack', { event: { type: 'a\u0000b\nc\u009b' } })).toBe('abc');
    expect(await labelOf(e, 'slack', { event: { type: 'x'.repeat(500) } })).toBe('x'.repeat(100));
    expect(await labelOf(e, 'slack', { event: { type: 42 } })).toBe('42');
    expect(await labelOf(e, 'slack', { event: { type: ' \t ' } })).toBeUndefined();
  });

  it('is never an action field', async () => {
    const outcome = await e.route(request('gh', {}, { headers: { 'x-github-event': 'push' } }));
    expect(outcome.kind === 'actions' && outcome.actions[0]).not.toHaveProperty('eventType');
  });

  it('is declared as one header or one path, checked by the config schema', () => {
    const bad = (eventType: unknown) => () =>
      engine({ mappings: [{ match: { path: 'x' }, eventType, messageTemplate: 'm' }] });
    expect(bad({ header: 'x-a', path: 'b' })).toThrow(/hooks\.mappings\[0\]\.eventType/);
    expect(bad({})).toThrow(/hooks\.mappings\[0\]\.eventType/);
    expect(bad({ header: 'not a header' })).toThrow(/hooks\.mappings\[0\]\.eventType\.header/);
    expect(bad({ path: 'a..b' })).toThrow(/hooks\.mappings\[0\]\.eventType\.path/);
    expect(bad({ query: 'type' })).toThrow(/hooks\.mappings\[0\]\.eventType/);
  });
});

describe("a transform's eventType (docs/transforms.md#writing-one)", () => {
  let transforms: TransformHost;
  let e: MappingEngine;
  beforeAll(async () => {
    const config = loadConfig({
      data: {
        hooks: {
          enabled: true,
          token: 't'.repeat(20),
          transformsDir: join(ROOT, 'test/fixtures/transforms'),
          mappings: [
            { id: 'own', match: { path: 'own' }, transform: { module: 'labelled.ts' } },
            {
              id: 'declared',
              match: { path: 'declared' },
              eventType: { header: 'x-kind' },
              transform: { module: 'labelled.ts' },
            },
          ],
        },
      },
      env: {},
    });
    transforms = await createTransformHost({ ...hostConfig(config), log: pino({ level: 'silent' }) });
    const actionOptions = { models: createModelCatalog(config), chatnetConfigured: false };
    e = createMappingEngine({ config, actionOptions, transforms });
  });
  afterAll(() => transforms.close());

  it('labels the request, and is taken out of the action', async () => {
    const outcome = await e.route(request('own', { label: 'invoice.paid' }));
    expect(outcome).toMatchObject({ kind: 'actions', eventType: 'invoice.paid' });
    expect(outcome.kind === 'actions' && outcome.actions[0]).toMatchObject({ message: 'labelled' });
    expect(outcome.kind === 'actions' && outcome.actions[0]).not.toHaveProperty('eventType');
  });

  it('wins over the declared one; the declared one stays when the transform returns none or skips', async () => {
    const headers = { 'x-kind': 'declared' };
    expect(await labelOf(e, 'declared', { label: 'own' }, { headers })).toBe('own');
    expect(await labelOf(e, 'declared', {}, { headers })).toBe('declared');
    expect(await labelOf(e, 'declared', { skip: true }, { headers })).toBe('declared');
    expect(await labelOf(e, 'own', { skip: true })).toBeUndefined();
  });

  it("in a fan-out, is the first item's that has one", async () => {
    expect(await labelOf(e, 'own', { fanOut: true, label: 'second' })).toBe('second');
  });

  it.each([
    ['a number', 7],
    ['an empty string', ''],
    ['101 characters', 'x'.repeat(101)],
    ['a control character', 'push\n'],
  ])('fails TRANSFORM_FAILED when it is %s', async (_what, label) => {
    await expect(e.route(request('own', { label }))).rejects.toMatchObject({
      code: 'TRANSFORM_FAILED',
      message: expect.stringMatching(/eventType .*expected a string of 1 to 100 characters without control characters/),
    });
  });
});
