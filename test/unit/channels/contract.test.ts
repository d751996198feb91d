import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { CHANNEL_KINDS, createChannels } from '../../../src/channels/index.js';
import { loadConfig } from '../../../src/config/index.js';
import { type HookdError, isHookdError } from '../../../src/errors.js';
import { failureOf } from '../../../src/runtime/attempts/index.js';
import { createDelivery } from '../../../src/runtime/delivery/index.js';
import type { ChatChannel } from '../../../src/runtime/index.js';
import { type ChannelSubject, INPUT, SUBJECTS } from '../../helpers/channel-subjects.js';

/**
 * The contract every channel kind keeps with the runtime (docs/channels.md), one suite over each
 * against a fake of its real service: one try per call, its failures classified for the runtime's
 * retries (refusals with the service's own words, 429 with its hint, 5xx and network errors
 * transient), replies split within the service's limit, and no credential in anything it makes.
 */

let open: ChannelSubject | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

const channelOf = (entry: Record<string, unknown>): ChatChannel => {
  const config = loadConfig({ data: { channels: { out: entry } }, env: {} });
  return createChannels(config).get('out') as ChatChannel;
};
const signal = () => AbortSignal.timeout(10_000);
const failure = (sending: Promise<void>) =>
  sending.then(
    () => {
      throw new Error('the try succeeded');
    },
    (err: unknown) => err as HookdError,
  );

describe('the channel contract suite', () => {
  it('covers every registered kind', () => {
    const covered = new Set(Object.keys(SUBJECTS).map((name) => name.split(' ')[0]));
    expect(Object.keys(CHANNEL_KINDS).filter((kind) => !covered.has(kind))).toEqual([]);
  });
});

describe.each(Object.entries(SUBJECTS))('the channel contract: %s', (_name, make) => {
  it("delivers a message in the service's own format", async () => {
    open = await make();
    await channelOf(open.entry).sendMessage(open.to, INPUT, signal());
    expect(open.received()).toEqual([open.formatted]);
  });

  it("refuses with the service's own words, not to be retried", async () => {
    open = await make();
    open.refuse();
    const err = await failure(channelOf(open.entry).sendMessage(open.to, INPUT, signal()));
    expect(err.code).toBe('CHANNEL_REFUSED');
    expect(err.message).toContain(open.refusalWords);
    expect(failureOf(err).transient).toBe(false);
    // An attempt's status is HTTP's; a mail server's code is named as SMTP's in its text instead.
    const attempt = failureOf(err);
    if (open.entry.kind === 'email') {
      expect(attempt.status).toBeUndefined();
      expect(attempt.error).toMatch(/SMTP 550/);
    } else expect(attempt.status).toEqual(expect.any(Number));
  });

  it('says a 429 with its retry hint, to be retried', async () => {
    open = await make();
    open.throttle(7);
    const err = await failure(channelOf(open.entry).sendMessage(open.to, INPUT, signal()));
    expect(err.code).toBe('CHANNEL_REFUSED');
    expect(failureOf(err)).toMatchObject({ transient: true, ...(open.retryHint ? { retryAfterMs: 7000 } : {}) });
  });

  it('says a server error, to be retried', async () => {
    open = await make();
    open.fail();
    const err = await failure(channelOf(open.entry).sendMessage(open.to, INPUT, signal()));
    expect(err.code).toBe('CHANNEL_REFUSED');
    expect(failureOf(err).transient).toBe(true);
  });

  it('says CHANNEL_UNREACHABLE when nothing answers, to be retried', async () => {
    open = await make();
    const err = await failure(channelOf(open.unreachable).sendMessage(open.to, INPUT, signal()));
    expect(isHookdError(err, 'CHANNEL_UNREACHABLE')).toBe(true);
    expect(failureOf(err).transient).toBe(true);
  });

  it('splits a long reply within its limit, never inside a code block, and sends the parts in order', async () => {
    open = await make();
    const channel = channelOf(open.entry);
    const prose = Array.from({ length: 60 }, (_, i) => `Paragraph ${i}: ${'words and more words '.repeat(4)}`).join(
      '\n',
    );
    const code = Array.from({ length: 80 }, (_, i) => `  step(${i}); // ${'x'.repeat(20)}`).join('\n');
    const reply = `${prose}\n\`\`\`ts\n${code}\n\`\`\`\n${prose}`;
    const parts = channel.split(reply);
    if (open.maxChars === undefined) expect(parts).toEqual([reply]);
    else {
      expect(parts.length).toBeGreaterThan(1);
      for (const part of parts) {
        expect(part.length).toBeLessThanOrEqual(open.maxChars);
        expect((part.match(/^```/gm) ?? []).length % 2).toBe(0);
      }
    }
    for (const part of parts) await channel.sendMessage(open.to, part, signal());
    expect(open.received()).toHaveLength(parts.length);
  });

  it('keeps its credentials out of every error, record and log line', async () => {
    open = await make();
    const lines: string[] = [];
    const log = pino({ level: 'debug' }, { write: (line: string) => lines.push(line) });
    const made: string[] = [];
    const failing = [() => open?.refuse(), () => open?.fail()];
    for (const script of failing) {
      script();
      const err = await failure(channelOf(open.entry).sendMessage(open.to, INPUT, signal()));
      made.push(err.message, JSON.stringify(err.params));
    }
    const unreachable = await failure(channelOf(open.unreachable).sendMessage(open.to, INPUT, signal()));
    made.push(unreachable.message, JSON.stringify(unreachable.params));
    // A whole delivery: its outcome, its attempts and its log lines.
    open.refuse();
    const meta = new Map<string, unknown>();
    const delivery = createDelivery({
      channels: new Map([['out', channelOf(open.entry)]]),
      ackMaxChars: 300,
      meta: { get: async (key) => meta.get(key) as never, set: async (key, value) => void meta.set(key, value) },
      log,
    });
    const attempts: string[] = [];
    const outcome = await delivery.deliver({ channel: 'out', to: open.to || 'x' }, INPUT, {
      onAttempt: (a) => attempts.push(JSON.stringify(a)),
    });
    expect(outcome.status).toBe('failed');
    const everything = [...made, JSON.stringify(outcome), ...attempts, ...lines].join('\n');
    for (const secret of open.secrets) expect(everything).not.toContain(secret);
  });
});
