import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createDelivery } from '../../../../src/runtime/delivery/index.js';
import type { ChatChannel } from '../../../../src/runtime/index.js';

/** Where a reply goes (docs/runtime.md#delivery): `last`, a channel id, its `defaultTo`, or no recipient at all. */

function recording(id: string, extra: Partial<ChatChannel> = {}) {
  const sent: [string, string][] = [];
  const channel: ChatChannel = {
    id,
    split: (text) => [text],
    sendMessage: async (to, text) => {
      sent.push([to, text]);
    },
    ...extra,
  };
  return { channel, sent };
}

function deliveryOver(...channels: ChatChannel[]) {
  const meta = new Map<string, unknown>();
  return createDelivery({
    channels: new Map(channels.map((c) => [c.id, c])),
    ackMaxChars: 300,
    meta: { get: async (key) => meta.get(key) as never, set: async (key, value) => void meta.set(key, value) },
    log: pino({ level: 'silent' }),
  });
}

describe('delivery routes', () => {
  it("sends to a named channel's defaultTo when the delivery names no recipient", async () => {
    const a = recording('a', { defaultTo: '1' });
    const b = recording('b', { defaultTo: '2' });
    const outcome = await deliveryOver(a.channel, b.channel).deliver({ channel: 'b' }, 'hello');
    expect(outcome).toEqual({ status: 'sent', channel: 'b', to: '2' });
    expect(b.sent).toEqual([['2', 'hello']]);
  });

  it('takes last, before anything was delivered, as the first channel with a defaultTo or without need of one', async () => {
    const a = recording('a');
    const hook = recording('hook', { needsRecipient: false });
    const delivery = deliveryOver(a.channel, hook.channel);
    expect(await delivery.deliver({ channel: 'last' }, 'hello')).toEqual({ status: 'sent', channel: 'hook' });
    expect(hook.sent).toEqual([['', 'hello']]);
  });

  it('fails a channel that needs a recipient and has none, saying how to give one', async () => {
    const a = recording('a');
    expect(await deliveryOver(a.channel).deliver({ channel: 'a' }, 'hello')).toEqual({
      status: 'failed',
      reason: 'no recipient for a: pass "to" or set channels.a.defaultTo',
    });
  });

  it("gives each delivery the channel's view for it, with its run", async () => {
    const seen: unknown[] = [];
    const base = recording('w', { needsRecipient: false });
    const about = (context: unknown) => {
      seen.push(context);
      return base.channel;
    };
    await deliveryOver({ ...base.channel, about }).deliver({ channel: 'w', runId: 'r1', sessionKey: 'hook:k' }, 'hi');
    expect(seen).toEqual([{ runId: 'r1', sessionKey: 'hook:k' }]);
  });
});
