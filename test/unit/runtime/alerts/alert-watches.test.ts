import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createAlertSender } from '../../../../src/runtime/alerts/alert-sender.js';
import {
  type AlertWatches,
  fail,
  MAX_WATCHES,
  readOpen,
  succeed,
  tick,
  watchKey,
  watchOf,
} from '../../../../src/runtime/alerts/alert-watches.js';
import { attempted, type DeliveryFacts, delivered } from '../../../../src/runtime/alerts/alerts.js';
import type { ChatChannel } from '../../../../src/runtime/index.js';
import { createStore, type Store, sqliteContract } from '../../../../src/store/sqlite/index.js';
import { createManualClock, type ManualClock } from '../../../helpers/clock.js';

/**
 * One node's watches (docs/operations.md#alerts): failures counted per condition and source, a
 * firing when a condition holds, a recovery at a success or after a quiet window.
 */

const WINDOW_MS = 600_000;

let store: Store | undefined;
afterEach(() => store?.close());

/** The watches of a node (`shared`: one of several on its store), mapping failures alerting at 5 in 10 min. */
function watches(clock: ManualClock, shared = false) {
  store = createStore({ path: ':memory:', synchronous: 'normal' });
  /** The first line of each message sent, and each message whole. */
  const sent: string[] = [];
  const texts: string[] = [];
  const channel: ChatChannel = {
    id: 'ops',
    split: (text) => [text],
    sendMessage: async (_to, text) => {
      texts.push(text);
      sent.push(text.split('\n')[0] as string);
    },
  };
  const log = pino({ level: 'silent' });
  const contract = sqliteContract(store);
  const sender = createAlertSender({
    store: contract,
    channel,
    to: 'me',
    everyMs: 0,
    consoleUrl: () => '',
    log,
    clock,
  });
  const conditions = new Map([
    ['mappingFailures', { count: 5, windowMs: WINDOW_MS }],
    ['modelUnreachable', { count: 1, windowMs: WINDOW_MS }],
    ['deliveryFailures', { count: 2, windowMs: WINDOW_MS }],
  ] as const);
  const alerts: AlertWatches = {
    settings: { channel: 'ops', to: 'me', everyMs: 0, conditions, modelSource: (ref: string) => ref },
    store: contract,
    clock,
    log,
    sender,
    shared,
    watches: new Map(),
    stopped: false,
  };
  /** Waits for the store writes and sends queued on every watch. */
  const settled = () => Promise.all([...alerts.watches.values()].map((w) => w.busy));
  return { alerts, sent, texts, settled, store };
}

describe('the watches of a node', () => {
  it(`keeps at most ${MAX_WATCHES} sources, making room by forgetting idle ones, and none for a condition turned off`, async () => {
    const clock = createManualClock();
    const { alerts } = watches(clock);
    for (let n = 0; n < MAX_WATCHES; n++) fail(alerts, 'mappingFailures', `m${n}`, 'TRANSFORM_FAILED (HTTP 500)');
    expect(watchOf(alerts, 'mappingFailures', 'one more')).toBeUndefined();
    // A window later every failure is out of it: the idle watches make room.
    clock.now = (
      (now) => () =>
        now + WINDOW_MS + 1
    )(clock.now());
    expect(watchOf(alerts, 'mappingFailures', 'one more')).toBeDefined();
    expect(alerts.watches.size).toBe(1);
    expect(watchOf(alerts, 'signatureFailures', 'github')).toBeUndefined();
  });

  it('fires at the fifth failure in the window, once, and recovers at the next success', async () => {
    const clock = createManualClock();
    const { alerts, sent, settled } = watches(clock);
    // A success before any alert ends nothing: the failures around it still count.
    for (let n = 0; n < 3; n++) fail(alerts, 'mappingFailures', 'github', 'TRANSFORM_FAILED (HTTP 500)');
    succeed(alerts, 'mappingFailures', 'github', 'it answered 202');
    for (let n = 0; n < 4; n++) fail(alerts, 'mappingFailures', 'github', 'TRANSFORM_FAILED (HTTP 500)');
    await settled();
    expect(sent).toEqual(['hookd alert: mapping github failed 7 times in 10 min']);
    succeed(alerts, 'mappingFailures', 'github', 'it answered 202');
    succeed(alerts, 'mappingFailures', 'github', 'it answered 202');
    await settled();
    expect(sent.slice(1)).toEqual(['hookd recovered: mapping github (it answered 202; 7 failures before)']);
  });

  it("fires a model's alert at the tick once a whole window passed without a successful try", async () => {
    const clock = createManualClock();
    const { alerts, sent, settled } = watches(clock);
    fail(alerts, 'modelUnreachable', 'fake/m', 'MODEL_UNREACHABLE');
    await clock.advance(WINDOW_MS - 1);
    tick(alerts);
    await settled();
    expect(sent).toEqual([]);
    await clock.advance(1);
    tick(alerts);
    await settled();
    expect(sent).toEqual(['hookd alert: model fake/m failed every try for 10 min (1 try)']);
  });
});

describe('open alerts read at start', () => {
  /** Stores an open firing of mapping `github`, as an earlier start (or another node) left it. */
  async function earlierFiring(clock: ManualClock, shared: boolean) {
    const world = watches(clock, shared);
    const { alerts, settled } = world;
    for (let n = 0; n < 5; n++) fail(alerts, 'mappingFailures', 'github', 'TRANSFORM_FAILED (HTTP 500)');
    await settled();
    alerts.watches.clear();
    await readOpen(alerts);
    return world;
  }

  it('are watched again, and recover after a quiet window from the start', async () => {
    const clock = createManualClock();
    const { alerts, sent, settled } = await earlierFiring(clock, false);
    expect(alerts.watches.get(watchKey('mappingFailures', 'github'))?.open?.observed).toBe(true);
    // Nothing is known of the time before this start: the quiet window starts now.
    await clock.advance(WINDOW_MS - 1);
    tick(alerts);
    await settled();
    expect(sent).toHaveLength(1);
    await clock.advance(1);
    tick(alerts);
    await settled();
    expect(sent.slice(1)).toEqual(['hookd recovered: mapping github (no failure for 10 min; 5 failures before)']);
  });

  it("stay open on a shared store until this node sees the source fail itself: the failures may be another node's", async () => {
    const clock = createManualClock();
    const { alerts, sent, settled } = await earlierFiring(clock, true);
    await clock.advance(WINDOW_MS);
    tick(alerts);
    await settled();
    expect(sent).toHaveLength(1);
    fail(alerts, 'mappingFailures', 'github', 'TRANSFORM_FAILED (HTTP 500)');
    await clock.advance(WINDOW_MS);
    tick(alerts);
    await settled();
    expect(sent.slice(1)).toEqual(['hookd recovered: mapping github (no failure for 10 min; 6 failures before)']);
  });
});

describe('failed deliveries', () => {
  it("alert with the channel's last failed try, else the routing's reason, linking to the run whose reply failed", async () => {
    const clock = createManualClock();
    const { alerts, texts, settled } = watches(clock);
    const deliveries: DeliveryFacts = { channelErrors: new Map(), lastRuns: new Map() };
    const attempt = { at: clock.now(), kind: 'delivery', n: 1, outcome: 'CHANNEL_REFUSED', status: 502 } as const;
    attempted(alerts, deliveries, { id: 'r1' }, attempt, { channel: 'chat' });
    deliveries.channelErrors.set('chat', 'CHANNEL_REFUSED (HTTP 502)');
    delivered(alerts, deliveries, { status: 'failed', channel: 'chat', reason: 'gave up after 4 attempts' }, 'r1');
    attempted(alerts, deliveries, { id: 'r 2' }, attempt, { channel: 'chat' });
    delivered(alerts, deliveries, { status: 'failed', channel: 'chat', reason: 'gave up after 4 attempts' }, 'r 2');
    delivered(alerts, deliveries, { status: 'failed', reason: 'no channel has a recipient' }, 'r3');
    delivered(alerts, deliveries, { status: 'failed', reason: 'no channel has a recipient' }, 'r4');
    await settled();
    expect(texts).toEqual([
      [
        'hookd alert: 2 deliveries to chat failed in 10 min',
        'last error: CHANNEL_REFUSED (HTTP 502)',
        'console: #/runs/r%202',
      ].join('\n'),
      [
        'hookd alert: 2 replies found no route in 10 min',
        'last error: no channel has a recipient',
        'console: #/runs/r4',
      ].join('\n'),
    ]);
  });

  it("keep each channel's facts apart, and forget a channel's last failure once it delivers", async () => {
    const clock = createManualClock();
    const { alerts, texts, settled } = watches(clock);
    const deliveries: DeliveryFacts = { channelErrors: new Map(), lastRuns: new Map() };
    const attempt = { at: clock.now(), kind: 'delivery', n: 1, outcome: 'CHANNEL_REFUSED', status: 503 } as const;
    // An earlier episode of ops, over once a reply is sent.
    deliveries.channelErrors.set('ops', 'CHANNEL_REFUSED (HTTP 503)');
    attempted(alerts, deliveries, { id: 'run-ops-old' }, attempt, { channel: 'ops' });
    delivered(alerts, deliveries, { status: 'sent', channel: 'ops', to: 'x' }, 'run-ops-ok');
    // Another channel's try, then the heartbeat's reply to ops (no run of its own) fails twice
    // with no try error kept.
    attempted(alerts, deliveries, { id: 'run-team' }, attempt, { channel: 'team' });
    attempted(alerts, deliveries, { id: 'run-ops' }, attempt, { channel: 'ops' });
    for (let i = 0; i < 2; i++)
      delivered(alerts, deliveries, { status: 'failed', channel: 'ops', reason: 'ops unreachable: no answer in 15 s' });
    await settled();
    expect(texts).toEqual([
      [
        'hookd alert: 2 deliveries to ops failed in 10 min',
        'last error: ops unreachable: no answer in 15 s',
        'console: #/runs/run-ops',
      ].join('\n'),
    ]);
  });
});
