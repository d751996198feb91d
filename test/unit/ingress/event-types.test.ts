import { afterEach, describe, expect, it } from 'vitest';
import { signDelivery } from '../../../src/schemes/index.js';
import { AUTH, createTestApp, type TestApp } from '../../helpers/app.js';
import { until } from '../../helpers/clock.js';

/** A request's event type in its request log record (docs/mappings.md#event-types). */

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

interface Row {
  id: string;
  status: number;
  event_type: string | null;
}
const rowOf = async (id: unknown): Promise<Row> => {
  const read = () =>
    (t as TestApp).store.db.prepare('SELECT id, status, event_type FROM requests WHERE id = ?').get(id) as
      | Row
      | undefined;
  await until(() => read() !== undefined);
  return read() as Row;
};

const SLACK_SECRET = 'slack-signing-secret-for-tests';
const hooks = {
  hooks: {
    mappings: [
      {
        id: 'gh',
        match: { path: 'gh' },
        eventType: { header: 'x-github-event' },
        schema: { type: 'object', required: ['ref'] },
        messageTemplate: 'pushed {{ref}}',
      },
      {
        id: 'sig',
        match: { path: 'sig' },
        eventType: { path: 'type' },
        verify: { scheme: 'hmac', secret: 's'.repeat(20) },
        textTemplate: 'x',
      },
    ],
    presets: [{ name: 'slack', secret: SLACK_SECRET }],
  },
};
const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
  (t as TestApp).app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(payload),
  });

describe('the request log keeps the event type', () => {
  it('of an accepted request, and of one its mapping refused (400): its mapping reads it first', async () => {
    t = await createTestApp(hooks);
    const accepted = await post('/hooks/gh', { ref: 'main' }, { ...AUTH, 'x-github-event': 'push' });
    expect(accepted.statusCode).toBe(202);
    expect(await rowOf(accepted.headers['x-request-id'])).toMatchObject({ status: 202, event_type: 'push' });
    const invalid = await post('/hooks/gh', {}, { ...AUTH, 'x-github-event': 'issues' });
    expect(invalid.statusCode).toBe(400);
    expect(await rowOf(invalid.headers['x-request-id'])).toMatchObject({ status: 400, event_type: 'issues' });
  });

  it('never of a request refused at the door: its sender is unknown', async () => {
    t = await createTestApp(hooks);
    const refused = await post('/hooks/sig', { type: 'forged' }, { 'x-signature': 'nope' });
    expect(refused.statusCode).toBe(401);
    expect(await rowOf(refused.headers['x-request-id'])).toMatchObject({ status: 401, event_type: null });
  });

  it("of Slack's URL check, answered by the gateway before any mapping: url_verification", async () => {
    t = await createTestApp(hooks);
    const raw = JSON.stringify({ type: 'url_verification', challenge: 'c-123', token: 'x' });
    const headers = signDelivery({ scheme: 'slack', secret: SLACK_SECRET }, Buffer.from(raw));
    const check = await t.app.inject({
      method: 'POST',
      url: '/hooks/slack',
      headers: { 'content-type': 'application/json', ...headers },
      payload: raw,
    });
    expect(check.json()).toEqual({ challenge: 'c-123' });
    expect(await rowOf(check.headers['x-request-id'])).toMatchObject({ status: 200, event_type: 'url_verification' });
    const mention = JSON.stringify({
      type: 'event_callback',
      event: { type: 'app_mention', user: 'U1', text: 'hi', channel: 'C1', ts: '1.2' },
    });
    const event = await t.app.inject({
      method: 'POST',
      url: '/hooks/slack',
      headers: {
        'content-type': 'application/json',
        ...signDelivery({ scheme: 'slack', secret: SLACK_SECRET }, Buffer.from(mention)),
      },
      payload: mention,
    });
    expect(event.statusCode).toBe(202);
    expect(await rowOf(event.headers['x-request-id'])).toMatchObject({ event_type: 'app_mention' });
  });
});
