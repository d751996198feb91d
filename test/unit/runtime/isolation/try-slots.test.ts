import { describe, expect, it } from 'vitest';
import {
  channelTarget,
  createTrySlots,
  defaultLimits,
  modelTarget,
  type Permit,
  type TrySlotsOptions,
} from '../../../../src/runtime/isolation/index.js';
import { createManualClock } from '../../../helpers/clock.js';

/** Lets the end-of-turn dispatch of new runs' starts run. */
const endOfTurn = () => new Promise<void>((resolve) => queueMicrotask(resolve));

function setup(options: Partial<TrySlotsOptions> = {}) {
  const clock = createManualClock();
  const slots = createTrySlots({
    runSlots: 4,
    limits: { provider: () => 4, channel: () => 4 },
    clock,
    ...options,
  });
  const granted: { name: string; permit: Permit }[] = [];
  const want = (name: string, source: string, ref = 'live/x', extra: { start?: boolean; runSlot?: boolean } = {}) =>
    slots.enqueue(
      { source, target: modelTarget(ref), runSlot: extra.runSlot ?? true, start: extra.start ?? false },
      (permit) => granted.push({ name, permit }),
    );
  const names = () => granted.map((g) => g.name);
  const release = (name: string, outcome: 'ok' | 'failed' = 'ok') =>
    granted
      .find((g) => g.name === name)
      ?.permit.release(outcome, outcome === 'failed' ? 'MODEL_UNREACHABLE' : undefined);
  return { clock, slots, want, names, release };
}

describe('try slots', () => {
  it('grants up to the run slots and says why the next one waits', () => {
    const { want, names, release } = setup();
    for (const n of [1, 2, 3, 4]) want(`a${n}`, 'a');
    const fifth = want('a5', 'a');
    expect(names()).toEqual(['a1', 'a2', 'a3', 'a4']);
    expect(fifth.wait()).toEqual({ reason: 'waiting for a run slot (4 of 4 in use)' });
    release('a2');
    expect(names()).toEqual(['a1', 'a2', 'a3', 'a4', 'a5']);
    expect(fifth.wait()).toBeUndefined();
  });

  it('takes sources in turn: a burst of one source delays another by one share', async () => {
    const { want, names, release } = setup({ runSlots: 1 });
    want('a1', 'mapping-a', 'live/x', { start: true });
    await endOfTurn();
    for (let n = 2; n <= 20; n++) want(`a${n}`, 'mapping-a', 'live/x', { start: true });
    want('b1', 'mapping-b', 'live/x', { start: true });
    want('c1', 'agent', 'live/x', { start: true });
    await endOfTurn();
    expect(names()).toEqual(['a1']);
    release('a1');
    release('b1');
    release('c1');
    release('a2');
    expect(names()).toEqual(['a1', 'b1', 'c1', 'a2', 'a3']);
  });

  it("gives a source's started runs their next try before its new runs", async () => {
    const { want, names, release } = setup({ runSlots: 1 });
    want('new1', 'a', 'live/x', { start: true });
    await endOfTurn();
    want('new2', 'a', 'live/x', { start: true });
    want('retry', 'a');
    await endOfTurn();
    expect(names()).toEqual(['new1']);
    release('new1');
    expect(names()).toEqual(['new1', 'retry']);
    release('retry');
    expect(names()).toEqual(['new1', 'retry', 'new2']);
  });

  it('starts the runs of one turn together, after it, and a try at once', async () => {
    const { want, names } = setup();
    want('s1', 'a', 'live/x', { start: true });
    want('s2', 'b', 'live/x', { start: true });
    expect(names()).toEqual([]);
    await endOfTurn();
    expect(names()).toEqual(['s1', 's2']);
    want('t1', 'c');
    expect(names()).toEqual(['s1', 's2', 't1']);
  });

  it("holds a provider's tries to its own limit across its models, without holding back another provider", () => {
    const { want, names, release } = setup({
      limits: { provider: (name) => (name === 'slow' ? 2 : 4), channel: () => 4 },
    });
    want('s1', 'a', 'slow/x');
    want('s2', 'a', 'slow/other');
    const s3 = want('s3', 'a', 'slow/x');
    want('f1', 'b', 'fast/y');
    expect(names()).toEqual(['s1', 's2', 'f1']);
    expect(s3.wait()).toEqual({ reason: 'waiting for a slot of provider slow (2 of 2 in use)' });
    release('s1');
    expect(names()).toEqual(['s1', 's2', 'f1', 's3']);
  });

  it("holds a channel's deliveries to its own limit", () => {
    const { slots } = setup({ limits: { provider: () => 4, channel: (id) => (id === 'narrow' ? 1 : 4) } });
    const granted: string[] = [];
    const deliver = (name: string, id: string) =>
      slots.enqueue({ source: 'a', target: channelTarget(id), runSlot: true }, () => granted.push(name));
    deliver('n1', 'narrow');
    const n2 = deliver('n2', 'narrow');
    deliver('w1', 'wide');
    expect(granted).toEqual(['n1', 'w1']);
    expect(n2.wait()).toEqual({ reason: 'waiting for a slot of channel narrow (1 of 1 in use)' });
  });

  it('leaves a run slot to the others by default: four deliveries to a channel that never answers hold three', () => {
    // 4 run slots, no channel's limit configured.
    const { slots } = setup({ limits: defaultLimits(4) });
    const granted: string[] = [];
    const deliver = (name: string, id: string) =>
      slots.enqueue({ source: 'a', target: channelTarget(id), runSlot: true }, () => granted.push(name));
    for (const n of [1, 2, 3]) deliver(`h${n}`, 'hanging');
    const h4 = deliver('h4', 'hanging');
    expect(h4.wait()).toEqual({ reason: 'waiting for a slot of channel hanging (3 of 3 in use)' });
    deliver('ok', 'healthy');
    expect(granted).toEqual(['h1', 'h2', 'h3', 'ok']);
  });

  it('holds a mapping to its own maxConcurrent', () => {
    const { want, names } = setup({ sourceLimit: (source) => (source === 'one' ? 1 : undefined) });
    want('o1', 'one');
    const o2 = want('o2', 'one');
    want('x1', 'other');
    expect(names()).toEqual(['o1', 'x1']);
    expect(o2.wait()).toEqual({ reason: 'waiting for a slot of mapping one (1 of 1 in use)' });
  });

  it("counts a heartbeat's tries against the model's limit, not the run slots", () => {
    const { want, names } = setup({ runSlots: 1 });
    want('run', 'a');
    want('beat', 'heartbeat', 'live/x', { runSlot: false });
    expect(names()).toEqual(['run', 'beat']);
  });

  it('holds the tries of a model whose breaker opened, lets one probe through 30 s later, and all once it goes through', async () => {
    const breakers: string[] = [];
    const { clock, want, names, release, slots } = setup({
      onBreaker: (b) => breakers.push(`${b.target} ${b.state}`),
    });
    for (let n = 1; n <= 4; n++) want(`d${n}`, 'a', 'dead/x');
    for (let n = 1; n <= 4; n++) release(`d${n}`, 'failed');
    want('d5', 'a', 'dead/x');
    release('d5', 'failed');
    expect(breakers).toEqual(['dead/x open']);
    const held = [want('d6', 'a', 'dead/x'), want('d7', 'a', 'dead/x')];
    want('live', 'b', 'live/x');
    expect(names()).toEqual(['d1', 'd2', 'd3', 'd4', 'd5', 'live']);
    const until = new Date(clock.now() + 30_000).toISOString();
    expect(held[0]?.wait()).toEqual({
      reason: `breaker open for dead/x until ${until}`,
      until: clock.now() + 30_000,
      breaker: true,
    });
    expect(slots.breakers()).toEqual([
      expect.objectContaining({ target: 'dead/x', kind: 'model', state: 'open', failures: 5, waiting: 2 }),
      expect.objectContaining({ target: 'live/x', state: 'closed', waiting: 0 }),
    ]);
    await clock.advance(29_999);
    expect(names()).toHaveLength(6);
    await clock.advance(1);
    expect(names()).toEqual(['d1', 'd2', 'd3', 'd4', 'd5', 'live', 'd6']);
    expect(held[1]?.wait()).toEqual({ reason: 'breaker half-open for dead/x: waiting for its probe', breaker: true });
    release('d6', 'ok');
    expect(names()).toEqual(['d1', 'd2', 'd3', 'd4', 'd5', 'live', 'd6', 'd7']);
    expect(breakers).toEqual(['dead/x open', 'dead/x closed']);
  });

  it('spaces run starts when asked, and never a started run’s next try', async () => {
    const { clock, want, names, release } = setup({ startSpacingMs: () => 50 });
    want('s1', 'a', 'live/x', { start: true });
    want('s2', 'a', 'live/x', { start: true });
    want('t1', 'a');
    await endOfTurn();
    expect(names()).toEqual(['t1', 's1']);
    release('t1');
    await clock.advance(49);
    expect(names()).toEqual(['t1', 's1']);
    await clock.advance(1);
    expect(names()).toEqual(['t1', 's1', 's2']);
  });

  it('holds neither an open breaker nor the starts’ spacing longer when the system’s clock is set back', async () => {
    const { clock, want, names, release, slots } = setup({ startSpacingMs: () => 50 });
    for (let n = 1; n <= 5; n++) want(`d${n}`, 'a', 'dead/x');
    for (let n = 1; n <= 5; n++) release(`d${n}`, 'failed');
    want('d6', 'a', 'dead/x');
    want('s1', 'b', 'live/x', { start: true });
    want('s2', 'b', 'live/x', { start: true });
    await endOfTurn();
    expect(names()).toEqual(['d1', 'd2', 'd3', 'd4', 'd5', 's1']);
    // NTP steps the clock back an hour: the spacing's 50 ms and the breaker's 30 s are still that.
    clock.stepWall(-3_600_000);
    await clock.advance(50);
    expect(names()).toEqual(['d1', 'd2', 'd3', 'd4', 'd5', 's1', 's2']);
    expect(slots.breakers()[0]).toMatchObject({ state: 'open', openUntil: clock.now() + 29_950 });
    await clock.advance(29_950);
    expect(names()).toEqual(['d1', 'd2', 'd3', 'd4', 'd5', 's1', 's2', 'd6']);
  });

  it('takes an aborted wait out of the queue, rejecting with its reason', async () => {
    const { slots, want } = setup({ runSlots: 1 });
    want('busy', 'a');
    const abort = new AbortController();
    const waits: string[] = [];
    const acquired = slots.acquire({ source: 'a', target: modelTarget('live/x'), runSlot: true }, abort.signal, (w) =>
      waits.push(w.reason),
    );
    expect(waits).toEqual(['waiting for a run slot (1 of 1 in use)']);
    abort.abort(new Error('cancelled'));
    await expect(acquired).rejects.toThrow('cancelled');
  });
});

describe('try slots under a backlog', () => {
  it("asks a source's limit once per line, not once per waiting run, however long the backlog", () => {
    let asked = 0;
    const { want } = setup({
      runSlots: 100,
      sourceLimit: () => {
        asked++;
        return 1;
      },
    });
    want('busy', 'a');
    asked = 0;
    // Tries, which are dispatched as they come (new runs' starts wait for the end of the turn).
    for (let n = 0; n < 20_000; n++) want(`a${n}`, 'a');
    // One look at the line's head per run queued: looking at every waiting run was 200 million.
    expect(asked).toBeLessThanOrEqual(20_000);
  });
});
