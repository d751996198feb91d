import { afterEach, describe, expect, it } from 'vitest';
import { hookdError } from '../../../src/errors.js';
import { AUTH, createTestApp, type TestApp } from '../../helpers/app.js';
import { until } from '../../helpers/clock.js';

/** What the Failed page shows of a request that failed on our side: its record's `reason`. */

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe("a failed request's reason in the request log", () => {
  it("is the error's own message for a 5xx, while the sender gets a generic answer", async () => {
    t = await createTestApp(
      {},
      {
        sink: {
          admit: () => {
            throw hookdError('QUEUE_FULL');
          },
        },
      },
    );
    const res = await t.app.inject({
      method: 'POST',
      url: '/hooks/agent',
      headers: { ...AUTH, 'content-type': 'application/json' },
      payload: JSON.stringify({ message: 'hi' }),
    });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 'QUEUE_FULL', error: 'internal error' });
    const read = () =>
      (t as TestApp).store.db
        .prepare('SELECT status, code, reason FROM requests WHERE id = ?')
        .get(res.headers['x-request-id']);
    await until(() => read() !== undefined);
    expect(read()).toEqual({ status: 503, code: 'QUEUE_FULL', reason: 'the run queue is full; retry later' });
  });
});
