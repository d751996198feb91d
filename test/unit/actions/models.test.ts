import { describe, expect, it } from 'vitest';
import { AUTH, createTestApp } from '../../helpers/app.js';

describe('model resolution without an allowlist', () => {
  it('answers 400 for an unknown provider and accepts a known one', async () => {
    const open = await createTestApp();
    try {
      const bad = await open.app.inject({
        method: 'POST',
        url: '/hooks/agent',
        headers: AUTH,
        payload: { message: 'm', model: 'nowhere/x' },
      });
      expect(bad.statusCode).toBe(400);
      expect(bad.json()).toMatchObject({ code: 'UNKNOWN_PROVIDER', error: 'unknown model provider: nowhere' });
      const good = await open.app.inject({
        method: 'POST',
        url: '/hooks/agent',
        headers: AUTH,
        payload: { message: 'm', model: 'builtin/echo' },
      });
      expect(good.statusCode).toBe(202);
    } finally {
      await open.close();
    }
  });
});
