import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createAlertSender, firingOf } from '../../../../src/runtime/alerts/alert-sender.js';
import { countFailure, createWatch, type Watch } from '../../../../src/runtime/alerts/watch.js';
import type { ChatChannel } from '../../../../src/runtime/index.js';
import { createStore, type Store, sqliteContract } from '../../../../src/store/sqlite/index.js';
import { createManualClock, type ManualClock } from '../../../helpers/clock.js';

/**
 * What one node stores and sends for a watch (docs/operations.md#alerts): several nodes that
 * decide the same message at once store one row, and only the node that stored it sends it.
 */

const EVERY_MS = 3_600_000;
const WINDOW_MS = 600_000;

let store: Store | undefined;
afterEach(() => store?.close());

/** A sender over an in-memory store and a chat that records what it is sent. */
function sender(clock: ManualClock, breakerOpenUntil?: number) {
  store = createStore({ path: ':memory:', synchronous: 'normal' });
  const sent: string[] = [];
  const channel: ChatChannel = {
    id: 'ops',
    split: (text) => [text],
    sendMessage: async (_to, text) => void sent.push(text),
  };
  const breaker = { target: 'ops', kind: 'channel', state: 'open', failures: 5, openUntil: breakerOpenUntil } as const;
  const alerts = createAlertSender({
    store: sqliteContract(store),
    channel,
    to: 'me',
    everyMs: EVERY_MS,
    consoleUrl: () => 'http://127.0.0.1:8080/ui/',
    log: pino({ level: 'silent' }),
    clock,
    ...(breakerOpenUntil === undefined ? {} : { breakerOf: () => breaker }),
  });
  return { alerts, sent, store };
}

/** A watch of deliveries to `ops` whose condition (3 failures in 10 min) holds now. */
function failing(clock: ManualClock): Watch {
  const watch = createWatch('deliveryFailures', 'ops', { count: 3, windowMs: WINDOW_MS });
  for (let n = 0; n < 3; n++) countFailure(watch, clock.now(), 'CHANNEL_REFUSED (HTTP 500)', '#/runs/r1');
  return watch;
}

describe('an alert firing', () => {
  it('is stored and sent once its condition holds, naming the count, the last error, the breaker and the page', async () => {
    const clock = createManualClock();
    const until = clock.now() + 30_000;
    const { alerts, sent, store } = sender(clock, until);
    const watch = failing(clock);
    await alerts.fire(watch);
    expect(sent).toEqual([
      [
        'hookd alert: 3 deliveries to ops failed in 10 min',
        'last error: CHANNEL_REFUSED (HTTP 500)',
        `breaker: open until ${new Date(until).toISOString()}, its runs and deliveries wait`,
        'console: http://127.0.0.1:8080/ui/#/runs/r1',
      ].join('\n'),
    ]);
    expect(store.alerts.list({ open: true, limit: 10 }).map((a) => a.id)).toEqual([watch.open?.id]);
    // Open: a second firing is neither stored nor sent.
    await alerts.fire(watch);
    expect(sent).toHaveLength(1);
  });

  it('is taken over, unsent, from another node that stored the same firing first', async () => {
    const clock = createManualClock();
    const { alerts, sent, store } = sender(clock);
    const watch = failing(clock);
    const theirs = firingOf({ consoleUrl: () => '' }, watch, undefined, clock.now() - 1000);
    store.alerts.insert(theirs);
    await alerts.fire(watch);
    expect(sent).toEqual([]);
    expect(watch.open).toEqual({ id: theirs.id, at: theirs.at, observed: true });
    expect(watch.lastFiredAt).toBe(theirs.at);
  });

  it('is held back within `every` of the last firing stored, though that one recovered', async () => {
    const clock = createManualClock();
    const { alerts, sent, store } = sender(clock);
    const watch = failing(clock);
    const earlier = firingOf({ consoleUrl: () => '' }, watch, undefined, clock.now() - EVERY_MS + 1);
    store.alerts.insert(earlier);
    const { key: _key, ...firing } = earlier;
    store.alerts.insert({ ...firing, id: 'rec', kind: 'recovered', recovers: earlier.id });
    await alerts.fire(watch);
    expect(sent).toEqual([]);
    expect(watch.open).toBeUndefined();
    expect(watch.lastFiredAt).toBe(earlier.at);
  });
});

describe('an alert recovery', () => {
  it('is sent by the one node that stores it: another node closing the same firing sends nothing', async () => {
    const clock = createManualClock();
    const { alerts, sent } = sender(clock);
    const here = failing(clock);
    await alerts.fire(here);
    const there = failing(clock);
    there.open = { ...(here.open as NonNullable<Watch['open']>) };
    await alerts.recover(here, 3, 'a reply was delivered');
    await alerts.recover(there, 3, 'a reply was delivered');
    expect(sent.slice(1)).toEqual([
      'hookd recovered: deliveries to ops (a reply was delivered; 3 failures before)\nconsole: http://127.0.0.1:8080/ui/#/runs/r1',
    ]);
    expect(here.open).toBeUndefined();
    expect(there.open).toBeUndefined();
  });
});
