import { afterEach, describe, expect, it } from 'vitest';
import { type ChannelSubject, INPUT, SUBJECTS } from '../helpers/channel-subjects.js';
import { startHookd } from '../helpers/hookd-process.js';
import { call, until } from '../helpers/http.js';

/**
 * Every channel kind end to end (docs/channels.md): the real `hookd serve` with one channel of the
 * kind, pointed at a fake of its service on port 0, delivers an agent run's reply there in the
 * service's own format, records it sent, and prints no credential.
 */

const HOOK_TOKEN = 'channels-hook-token-0123456789';
const GATEWAY_TOKEN = 'channels-gateway-token-0123456789';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of cleanups.splice(0).reverse()) await close();
});

describe.each(Object.entries(SUBJECTS))('a %s channel end to end', (_name, make) => {
  it("delivers an agent run's reply to the service, in its format, and says so on the run", async () => {
    const subject: ChannelSubject = await make();
    cleanups.push(() => subject.close());
    const hookd = await startHookd({
      config: {
        gateway: { auth: { token: GATEWAY_TOKEN } },
        hooks: { enabled: true, token: HOOK_TOKEN },
        channels: { out: subject.entry },
      },
    });
    cleanups.push(() => hookd.stop());
    const to = subject.to === '' ? {} : { to: subject.to };
    const accepted = await call(`${hookd.url}/hooks/agent`, {
      headers: { authorization: `Bearer ${HOOK_TOKEN}` },
      json: { message: INPUT, channel: 'out', ...to },
    });
    expect(accepted.status).toBe(202);
    const received = await until(async () => subject.received()[0], 'the reply at the service', 20_000);
    expect(received).toBe(`Echo: ${subject.formatted}`);
    const run = await until(
      async () => {
        const answer = await call(`${hookd.url}/api/runs/${accepted.body.runId}`, {
          method: 'GET',
          headers: { authorization: `Bearer ${GATEWAY_TOKEN}` },
        });
        return (answer.body.delivery as { status?: string } | undefined)?.status === 'sent' ? answer.body : undefined;
      },
      'the run delivered',
      20_000,
    );
    expect(run.delivery).toEqual({ status: 'sent', channel: 'out', ...to });
    if (subject.payloads)
      expect(subject.payloads()[0]).toMatchObject({ runId: accepted.body.runId, sessionKey: accepted.body.sessionKey });
    for (const secret of subject.secrets) expect(`${hookd.stdout()}${hookd.stderr()}`).not.toContain(secret);
  });
});

describe('a channel id that is not configured', () => {
  it('is 400 INVALID_FIELD listing the configured ids', async () => {
    const subject = await (SUBJECTS.discord as () => Promise<ChannelSubject>)();
    cleanups.push(() => subject.close());
    const hookd = await startHookd({
      config: { hooks: { enabled: true, token: HOOK_TOKEN }, channels: { ops: subject.entry } },
    });
    cleanups.push(() => hookd.stop());
    const refused = await call(`${hookd.url}/hooks/agent`, {
      headers: { authorization: `Bearer ${HOOK_TOKEN}` },
      json: { message: 'x', channel: 'opps' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'INVALID_FIELD', error: 'channel: expected one of last, ops' });
  });
});

describe('alerts through hooks.alerts.channel', () => {
  it('go to the channel it names, a signed webhook carrying the alert', async () => {
    const webhook = await (SUBJECTS.webhook as () => Promise<ChannelSubject>)();
    cleanups.push(() => webhook.close());
    const chat = await (SUBJECTS.chatnet as () => Promise<ChannelSubject>)();
    cleanups.push(() => chat.close());
    const hookd = await startHookd({
      config: {
        hooks: {
          enabled: true,
          token: HOOK_TOKEN,
          alerts: { channel: 'audit', mappingFailures: { count: 2 } },
          mappings: [
            {
              id: 'strict',
              match: { path: 'strict' },
              messageTemplate: 'x',
              schema: { type: 'object', required: ['a'] },
            },
          ],
        },
        channels: { chat: { ...chat.entry, defaultTo: '42' }, audit: webhook.entry },
      },
    });
    cleanups.push(() => hookd.stop());
    for (let i = 0; i < 2; i++) {
      const refused = await call(`${hookd.url}/hooks/strict`, {
        headers: { authorization: `Bearer ${HOOK_TOKEN}` },
        json: {},
      });
      expect(refused.status).toBe(400);
    }
    const alert = await until(async () => webhook.payloads?.()[0], 'the alert at the webhook', 20_000);
    expect(alert).toMatchObject({
      type: 'message',
      channel: 'audit',
      alert: { kind: 'firing', condition: 'mappingFailures', source: 'strict' },
    });
    expect(chat.received()).toEqual([]);
  });
});
