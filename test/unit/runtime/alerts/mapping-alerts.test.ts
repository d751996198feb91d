import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { burst, GATEWAY_TOKEN, GITHUB_SECRET, SECRET, world } from '../../../helpers/alerts-world.js';
import { call } from '../../../helpers/http.js';

/**
 * Alerts of a mapping's failures and of refused signatures (docs/operations.md#alerts), from a
 * gateway on a manual clock to the fake chat server.
 */

const MIN = 60_000;

describe('mappingFailures', () => {
  it('sends one alert at the fifth failure within 10 min, with the code, the position and the request; nothing more while it lasts', async () => {
    const w = await world();
    const ids = await burst(w, 'billing', 5, { card: SECRET }, 500);
    const [alert] = await w.alertsSent(1);
    // The count says it fired at the fifth failure, not before.
    expect(alert).toBe(
      [
        'hookd alert: mapping billing failed 5 times in 10 min',
        'last error: TRANSFORM_FAILED (HTTP 500) at broken.ts:2:9',
        `console: ${w.gateway.url}/ui/#/requests/${ids[4]}`,
      ].join('\n'),
    );
    // A second burst while it is open, then a success: the next message is the recovery.
    await burst(w, 'billing', 5, { card: SECRET }, 500);
    await w.clock.advance(5 * MIN);
    await burst(w, 'billing', 5, { card: SECRET }, 500);
    const { alerts } = await w.alerts('?open=true');
    expect(alerts.map((a) => [a.kind, a.condition, a.source, a.count])).toEqual([
      ['firing', 'mappingFailures', 'billing', 5],
    ]);
    expect(w.alertTexts()).toHaveLength(1);
  });

  it('sends one recovery at the first success, and no second alert for a burst within `every`', async () => {
    const w = await world();
    await burst(w, 'typed', 5, { n: 'not a number' }, 400);
    const [alert] = await w.alertsSent(1);
    expect(alert).toMatch(
      /^hookd alert: mapping typed failed 5 times in 10 min\nlast error: PAYLOAD_INVALID \(HTTP 400\)\n/,
    );
    await burst(w, 'typed', 2, { n: 'again' }, 400);
    await burst(w, 'typed', 1, { n: 1 }, 200);
    const [, recovery] = await w.alertsSent(2);
    expect(recovery).toMatch(/^hookd recovered: mapping typed \(it answered 200; 7 failures before\)\nconsole: /);
    // A new burst 20 min after the alert: within `every` (30 min), nothing is sent.
    await w.clock.advance(20 * MIN);
    await burst(w, 'typed', 5, { n: 'x' }, 400);
    // Past `every`, failing again alerts again: the message after the recovery is this firing,
    // decided no sooner than 30 min after the first.
    await w.clock.advance(11 * MIN);
    await burst(w, 'typed', 5, { n: 'y' }, 400);
    const texts = await w.alertsSent(3);
    expect(texts[2]).toMatch(/^hookd alert: mapping typed failed \d+ times in 10 min/);
    const { alerts } = await w.alerts();
    expect(alerts.map((a) => a.kind)).toEqual(['firing', 'recovered', 'firing']);
    expect(Date.parse(alerts[0]?.at ?? '') - Date.parse(alerts[2]?.at ?? '')).toBeGreaterThanOrEqual(30 * MIN);
    expect(alerts[1]?.recovers).toBe(alerts[2]?.id);
    expect(alerts[2]?.recoveredAt).toBe(alerts[1]?.at);
    expect(w.alertTexts()).toHaveLength(3);
  });

  it('counts failures within the window though successes come between them', async () => {
    const w = await world();
    await burst(w, 'typed', 3, { n: 'no' }, 400);
    await burst(w, 'typed', 1, { n: 1 }, 200);
    await burst(w, 'typed', 2, { n: 'no' }, 400);
    const [alert] = await w.alertsSent(1);
    expect(alert).toMatch(/^hookd alert: mapping typed failed 5 times in 10 min\n/);
  });

  it('recovers at a replay the mapping answers 2xx (a failed replay is not counted)', async () => {
    const w = await world({ alerts: { mappingFailures: { count: 2 } } });
    const [good] = await burst(w, 'typed', 1, { n: 1 }, 200);
    const [bad] = await burst(w, 'typed', 2, { n: 'no' }, 400);
    await w.alertsSent(1);
    const replay = (id: string | undefined) =>
      call(`${w.gateway.url}/api/requests/${id}/replay`, { headers: { authorization: `Bearer ${GATEWAY_TOKEN}` } });
    expect((await replay(bad)).status).toBe(400);
    expect((await replay(good)).status).toBe(200);
    const [, recovery] = await w.alertsSent(2);
    // Two failures before: the failed replay was not one of them.
    expect(recovery).toMatch(/^hookd recovered: mapping typed \(it answered 200; 2 failures before\)/);
  });

  it('recovers when a whole window passes without a failure', async () => {
    const w = await world({ alerts: { mappingFailures: { count: 2, window: '1m' } } });
    await burst(w, 'typed', 2, { n: 'no' }, 400);
    await w.alertsSent(1);
    await w.clock.advance(MIN + 5000);
    const [, recovery] = await w.alertsSent(2);
    expect(recovery).toMatch(/^hookd recovered: mapping typed \(no failure for 1 min; 2 failures before\)/);
    expect((await w.alerts('?open=true')).alerts).toEqual([]);
  });

  it('keeps an alert open across a restart, and recovers it after a quiet window then', async () => {
    const w = await world({ alerts: { mappingFailures: { count: 2, window: '1m' } } });
    await burst(w, 'typed', 2, { n: 'no' }, 400);
    await w.alertsSent(1);
    await w.restart();
    expect((await w.alerts('?open=true')).alerts.map((a) => a.source)).toEqual(['typed']);
    await w.clock.advance(60_000 + 5000);
    const [, recovery] = await w.alertsSent(2);
    expect(recovery).toMatch(/^hookd recovered: mapping typed \(no failure for 1 min; 2 failures before\)/);
  });

  it('never puts payload text in an alert: not in the chat, not in the store, not in the API', async () => {
    const w = await world({ alerts: { mappingFailures: { count: 1 } } });
    const answer = await w.hook('billing', { card: SECRET });
    // The sender sees the transform's own message (it carries the payload)…
    expect(answer.text).toContain(SECRET);
    await w.alertsSent(1);
    // …no alert does.
    expect(w.chat.sent.map((m) => m.text).join('\n')).not.toContain(SECRET);
    expect((await w.admin('/api/alerts')).text).not.toContain(SECRET);
    expect(JSON.stringify(w.logs)).not.toContain('bot-alerts-token');
  });
});

describe('signatureFailures', () => {
  const signed = (body: string, secret: string) => ({
    'content-type': 'application/json',
    'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
  });

  it('sends one alert at the fifth refused signature of a mapping, and a recovery when one holds', async () => {
    const w = await world();
    const body = '{"ref":"main"}';
    for (let i = 0; i < 5; i++) {
      const refused = await call(`${w.gateway.url}/hooks/gh`, { headers: signed(body, 'a-wrong-secret'), body });
      expect(refused.body.code).toBe('SIGNATURE_INVALID');
    }
    const [alert] = await w.alertsSent(1);
    expect(alert).toBe(
      [
        'hookd alert: signatures for mapping gh failed 5 times in 10 min',
        'last error: SIGNATURE_INVALID: no signature matched (is the secret the same on both sides?)',
        `console: ${w.gateway.url}/ui/#/failed/refused`,
      ].join('\n'),
    );
    expect(alert).not.toContain(GITHUB_SECRET);
    const held = await call(`${w.gateway.url}/hooks/gh`, { headers: signed(body, GITHUB_SECRET), body });
    expect(held.status).toBe(200);
    const [, recovery] = await w.alertsSent(2);
    expect(recovery).toMatch(/^hookd recovered: signatures for mapping gh \(a signature held; 5 failures before\)/);
  });
});

describe('GET /api/alerts', () => {
  it('lists alerts newest first, open ones alone with ?open=true, pages with a cursor, and refuses a bad flag', async () => {
    const w = await world({ alerts: { mappingFailures: { count: 1 } }, config: {} });
    await burst(w, 'typed', 1, { n: 'no' }, 400);
    await burst(w, 'billing', 1, { card: 'x' }, 500);
    await w.alertsSent(2);
    const all = await w.alerts();
    expect(all.alerts.map((a) => [a.kind, a.source])).toEqual([
      ['firing', 'billing'],
      ['firing', 'typed'],
    ]);
    expect(all.alerts[0]).toEqual({
      id: expect.any(String),
      at: new Date(w.clock.now()).toISOString(),
      kind: 'firing',
      condition: 'mappingFailures',
      source: 'billing',
      count: 1,
      lastError: 'TRANSFORM_FAILED (HTTP 500) at broken.ts:2:9',
      link: expect.stringMatching(/\/ui\/#\/requests\//),
      text: expect.stringMatching(/^hookd alert: mapping billing failed 1 time in 10 min\n/),
    });
    expect(all.nextCursor).toBeNull();
    const first = await w.alerts('?limit=1');
    expect(first.alerts.map((a) => a.source)).toEqual(['billing']);
    const second = await w.alerts(`?limit=1&cursor=${first.nextCursor}`);
    expect(second.alerts.map((a) => a.source)).toEqual(['typed']);
    expect((await w.alerts('?open=true')).alerts).toHaveLength(2);
    const bad = await w.admin('/api/alerts?open=maybe');
    expect([bad.status, bad.body.code]).toEqual([400, 'INVALID_FIELD']);
    const unauthorized = await call(`${w.gateway.url}/api/alerts`, { method: 'GET' });
    expect(unauthorized.status).toBe(401);
  });
});
