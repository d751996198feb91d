import { describe, expect, it } from 'vitest';
import { createModelCatalog } from '../../../src/actions/index.js';
import { loadConfig } from '../../../src/config/index.js';
import { createMappingEngine, type HookRequest } from '../../../src/mapping/index.js';

function engine(hooks: Record<string, unknown>) {
  const config = loadConfig({ data: { hooks: { enabled: true, token: 't'.repeat(20), ...hooks } }, env: {} });
  const actionOptions = { models: createModelCatalog(config), chatnetConfigured: false };
  return createMappingEngine({ config, actionOptions, now: () => new Date('2026-01-01T00:00:00Z') });
}

const request = (subPath: string, payload: unknown): HookRequest => ({
  subPath,
  payload,
  headers: {},
  query: {},
  url: `/hooks/${subPath}`,
  rawBody: Buffer.from(JSON.stringify(payload)),
});

describe('presets', () => {
  it('applies hooks.mail to the mail preset', async () => {
    const e = engine({
      presets: ['mail'],
      mail: { account: 'me@x', model: 'builtin/echo', thinking: 'low', allowUnsafeExternalContent: true },
    });
    const outcome = await e.route(
      request('mail', { source: 'mail', messages: [{ id: 'i1', from: 'f', subject: 's', snippet: 'sn', body: 'b' }] }),
    );
    expect(outcome.kind === 'actions' && outcome.actions[0]).toMatchObject({
      kind: 'agent',
      name: 'Mail',
      sessionKey: 'hook:mail:i1',
      message: 'New email from f\nSubject: s\nsn\nb',
      model: 'builtin/echo',
      thinking: 'low',
      allowUnsafeExternalContent: true,
      contentSource: 'email',
    });
  });
});
