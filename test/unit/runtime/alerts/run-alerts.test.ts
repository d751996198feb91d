import { describe, expect, it } from 'vitest';
import { backoffMs } from '../../../../src/backoff.js';
import { type World, world } from '../../../helpers/alerts-world.js';
import type { FakeReply } from '../../../helpers/fake-model.js';
import { until } from '../../../helpers/http.js';

/**
 * Alerts of a model that fails every try and of deliveries that keep failing
 * (docs/operations.md#alerts), from a gateway on a manual clock to the fake chat server.
 */

const MODEL_BACKOFF = { minMs: 250, maxMs: 5000 };

/** Starts an agent run through `/hooks/agent`; answers its id. */
async function agent(w: World, extra: object = {}): Promise<string> {
  const answer = await w.hook('agent', { message: 'check the build', ...extra });
  expect(answer.status).toBe(202);
  return answer.body.runId as string;
}

/** What the run waits before its try after `n` failed ones: its back-off, or its model's open breaker. */
function waitAfter(w: World, n: number, model = 'fake/m'): number {
  const breaker = w.gateway.runtime.breakers().find((b) => b.target === model && b.openUntil !== undefined);
  const open = breaker?.openUntil === undefined ? 0 : Date.parse(breaker.openUntil) - w.clock.now();
  return Math.max(backoffMs(n - 1, MODEL_BACKOFF), open);
}

/**
 * Moves the clock through a run's retries until `untilMs` has passed since its first try: after
 * each failed try (seen in its attempts), the back-off it waits, or its model's breaker's time
 * open (5 failed tries in a row open it: docs/runtime.md#circuit-breakers).
 */
async function retryFor(w: World, runId: string, untilMs: number, model = 'fake/m'): Promise<number> {
  const first = await until(async () => (await w.run(runId)).attempts[0], 'the first failed try');
  const start = Date.parse(first.at);
  let n = 1;
  while (w.clock.now() - start < untilMs) {
    await until(async () => ((await w.run(runId)).attempts.length >= n ? true : undefined), `try ${n}`);
    await w.clock.advance(waitAfter(w, n, model));
    n++;
  }
  return start;
}

describe('modelUnreachable', () => {
  it('sends one alert once every try has failed for 2 min, naming the model, the tries, the last error and the run', async () => {
    let reply: FakeReply = { status: 503 };
    const w = await world({ reply: () => reply });
    const runId = await agent(w);
    const start = await retryFor(w, runId, 2 * 60_000);
    const [alert] = await w.alertsSent(1);
    expect(alert).toMatch(
      new RegExp(
        `^hookd alert: model fake/m failed every try for 2 min \\(\\d+ tries\\)\nlast error: MODEL_REFUSED \\(HTTP 503\\)\nbreaker: open until \\S+Z, its runs and deliveries wait\nconsole: ${w.gateway.url}/ui/#/runs/${runId}$`,
      ),
    );
    // Not before: it was decided two minutes or more after the first failed try.
    const [firing] = (await w.alerts()).alerts;
    expect(Date.parse(firing?.at ?? '') - start).toBeGreaterThanOrEqual(2 * 60_000);
    expect(alert).not.toContain('fake error');

    // The server answers again: the run's next try succeeds, and one recovery is sent.
    reply = 'back again';
    const { attempts } = await w.run(runId);
    await w.clock.advance(waitAfter(w, attempts.length));
    const [, recovery] = await w.alertsSent(2);
    expect(recovery).toMatch(/^hookd recovered: model fake\/m \(a try succeeded; \d+ failures before\)/);
    await until(async () => ((await w.run(runId)).status === 'ok' ? true : undefined), 'the run to end');
    expect(w.alertTexts()).toHaveLength(2);
  });

  it('counts a model the config does not name under its provider: a sender cannot make alerts without bound', async () => {
    // Before: each made-up model (`fake/n1`, `fake/n2`, …) opened an alert of its own, never
    // closed, and past 1,000 of them no other failure was counted.
    const w = await world({ reply: () => ({ status: 503 }) });
    const runId = await agent(w, { model: 'fake/made-up-1' });
    await retryFor(w, runId, 2 * 60_000, 'fake/made-up-1');
    const [alert] = await w.alertsSent(1);
    expect(alert).toMatch(/^hookd alert: model fake\/\* failed every try/);
    expect((await w.alerts()).alerts.map((a) => a.source)).toEqual(['fake/*']);
  });

  it('names the network error of a model server that does not listen', async () => {
    const w = await world({
      config: { models: { providers: { fake: { baseUrl: 'http://127.0.0.1:9/v1', api: 'openai-chat' } } } },
    });
    const runId = await agent(w);
    await retryFor(w, runId, 2 * 60_000);
    const [alert] = await w.alertsSent(1);
    expect(alert).toMatch(/\nlast error: MODEL_UNREACHABLE: connect ECONNREFUSED 127\.0\.0\.1:9\n/);
  });
});

describe('deliveryFailures', () => {
  it('sends one alert at the third failed delivery within 10 min, and a recovery at the next delivered reply', async () => {
    const w = await world();
    w.chat.refuseNext(3);
    const runs: string[] = [];
    for (let i = 0; i < 3; i++) {
      const runId = await agent(w, { deliver: true, channel: 'chatnet', to: '42' });
      runs.push(runId);
      await until(async () => ((await w.run(runId)).delivery ? true : undefined), 'the failed delivery');
    }
    const [alert] = await w.alertsSent(1);
    expect(alert).toBe(
      [
        'hookd alert: 3 deliveries to chatnet failed in 10 min',
        'last error: CHANNEL_REFUSED (HTTP 400)',
        `console: ${w.gateway.url}/ui/#/runs/${runs[2]}`,
      ].join('\n'),
    );
    const delivered = await agent(w, { deliver: true, channel: 'chatnet', to: '42' });
    await until(async () => ((await w.run(delivered)).delivery?.status === 'sent' ? true : undefined), 'a delivery');
    const [, recovery] = await w.alertsSent(2);
    expect(recovery).toMatch(/^hookd recovered: deliveries to chatnet \(a reply was delivered; 3 failures before\)/);
  });

  it('logs an alert the chat refuses, and goes on', async () => {
    const w = await world({ alerts: { deliveryFailures: { count: 1 } } });
    // The delivery and the alert about it are both refused.
    w.chat.refuseNext(2);
    const runId = await agent(w, { deliver: true, channel: 'chatnet', to: '42' });
    await until(async () => ((await w.run(runId)).delivery ? true : undefined), 'the failed delivery');
    const logged = await until(async () => w.logs.find((l) => l.msg === 'alert not sent'), 'the log line');
    expect(logged).toMatchObject({ level: 50, kind: 'firing', condition: 'deliveryFailures', source: 'chatnet' });
    // Stored all the same, and shown as open.
    expect((await w.alerts('?open=true')).alerts.map((a) => a.condition)).toEqual(['deliveryFailures']);
    // The gateway goes on: the next reply is delivered, and its recovery sent.
    const next = await agent(w, { deliver: true, channel: 'chatnet', to: '42' });
    await until(async () => ((await w.run(next)).delivery?.status === 'sent' ? true : undefined), 'a delivery');
    const [recovery] = await w.alertsSent(1);
    expect(recovery).toMatch(/^hookd recovered: deliveries to chatnet/);
  });
});

describe("deliveryFailures and a channel's breaker", () => {
  it('counts the opening of the breaker as a failed delivery, and names it in the message', async () => {
    const w = await world({ alerts: { deliveryFailures: { count: 2 } } });
    // The chat service answers 502 to everything: replies and alerts alike.
    w.chat.failNext(1_000_000);
    const first = await agent(w, { deliver: true, channel: 'chatnet', to: '42' });
    for (const [n, ms] of [500, 1000, 2000].entries()) {
      await until(async () => ((await w.run(first)).attempts.length > n ? true : undefined), `delivery try ${n + 1}`);
      await w.clock.advance(ms);
    }
    await until(async () => ((await w.run(first)).delivery?.status === 'failed' ? true : undefined), 'it to fail');
    // Four failed tries in a row so far: the next delivery's first try opens the breaker, and it
    // waits instead of failing; the opening is the second failure the alert counts.
    const second = await agent(w, { deliver: true, channel: 'chatnet', to: '42' });
    const [firing] = (
      await until(async () => {
        const { alerts } = await w.alerts();
        return alerts.length > 0 ? alerts : undefined;
      }, 'the firing')
    ).filter((a) => a.kind === 'firing');
    expect(firing?.text).toMatch(
      new RegExp(
        [
          '^hookd alert: 2 deliveries to chatnet failed in 10 min',
          'last error: breaker open after 5 failed tries in a row \\(last: CHANNEL_REFUSED \\(HTTP 502\\)\\)',
          'breaker: open until \\S+Z, its runs and deliveries wait',
          'console: ',
        ].join('\n'),
      ),
    );
    // Its back-off over, the reply waits for the breaker, without a try.
    await w.clock.advance(500);
    const waiting = await until(async () => {
      const run = await w.run(second);
      return run.waiting ? run : undefined;
    }, 'the wait');
    expect(waiting.waiting).toMatch(/^breaker open for chatnet until \S+Z$/);
    expect(waiting.delivery).toBeUndefined();
    expect(waiting.attempts.filter((a) => a.kind === 'delivery')).toHaveLength(1);
  });
});
