import { describe, expect, it } from 'vitest';
import { engine, request } from '../../helpers/mapping.js';

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
