import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createJobOwner, holdLease, jobLease } from '../../../src/runtime/job-owner.js';
import { TICK_FAILURE_LOG_MS, type WorkShare } from '../../../src/store/index.js';
import { createManualClock, type ManualClock } from '../../helpers/clock.js';
import { workShare } from '../../helpers/work-share.js';

/**
 * A single-owner job's lease as one node holds it (docs/scale.md): the job runs here while the
 * lease is this node's, and stops a quarter lease before a lease it could not renew ends.
 */

const LEASE_MS = 400;

/** The lease of job `mail` over `share`, and what became of the jobs it made. */
function mailLease(share: WorkShare, clock: ManualClock) {
  const events: string[] = [];
  let made = 0;
  const lease = jobLease({
    share,
    name: 'mail',
    log: pino({ level: 'silent' }),
    clock,
    make: () => {
      const n = ++made;
      return {
        start: () => events.push(`start ${n}`),
        stop: async () => void events.push(`stop ${n}`),
      };
    },
  });
  return { lease, events };
}

/** The lease of job `mail` over a database whose answer to a hold the test gives (`answer`). */
function answeredLate() {
  const clock = createManualClock();
  let answered: (held: boolean) => void = () => undefined;
  const share = workShare({
    leaseMs: LEASE_MS,
    holdJob: () =>
      new Promise((resolve) => {
        answered = resolve;
      }),
  });
  return { clock, ...mailLease(share, clock), answer: (held: boolean) => answered(held) };
}

describe("a job's lease", () => {
  it('starts the job when taken, keeps it while renewed, and stops it when another node holds the lease', async () => {
    const clock = createManualClock();
    let ours = true;
    const { lease, events } = mailLease(workShare({ leaseMs: LEASE_MS, holdJob: async () => ours }), clock);
    await holdLease(lease);
    await holdLease(lease);
    expect(events).toEqual(['start 1']);
    ours = false;
    await holdLease(lease);
    expect(events).toEqual(['start 1', 'stop 1']);
    expect(lease.running).toBeUndefined();
    ours = true;
    await holdLease(lease);
    expect(events).toEqual(['start 1', 'stop 1', 'start 2']);
  });

  it('asks one hold at a time: a hold asked while one is in flight shares it', async () => {
    const clock = createManualClock();
    let asked = 0;
    let answer: (held: boolean) => void = () => undefined;
    const share = workShare({
      leaseMs: LEASE_MS,
      holdJob: () => {
        asked++;
        return new Promise((resolve) => {
          answer = resolve;
        });
      },
    });
    const { lease, events } = mailLease(share, clock);
    const first = holdLease(lease);
    const second = holdLease(lease);
    expect(asked).toBe(1);
    answer(true);
    await Promise.all([first, second]);
    expect(events).toEqual(['start 1']);
  });

  it('stops the job a quarter lease before a lease it could not renew ends, from when the lease was asked', async () => {
    const { clock, lease, events, answer } = answeredLate();
    const askedAt = clock.now();
    const holding = holdLease(lease);
    // The database answers late: the lease runs from when it was asked.
    await clock.advance(100);
    answer(true);
    await holding;
    expect(events).toEqual(['start 1']);
    await clock.advance(askedAt + LEASE_MS - LEASE_MS / 4 - clock.now() - 1);
    expect(events).toEqual(['start 1']);
    await clock.advance(1);
    expect(events).toEqual(['start 1', 'stop 1']);
  });

  it("stops the job in time when the system's clock is set back while the lease is asked", async () => {
    const { clock, lease, events, answer } = answeredLate();
    const askedAt = clock.monotonic();
    const holding = holdLease(lease);
    await clock.advance(100);
    clock.stepWall(-60_000);
    answer(true);
    await holding;
    await clock.advance(askedAt + LEASE_MS - LEASE_MS / 4 - clock.monotonic());
    expect(events).toEqual(['start 1', 'stop 1']);
  });

  it('says once a minute that the lease cannot be held while the store is out of reach, its repeats counted', async () => {
    const clock = createManualClock();
    const lines: Record<string, unknown>[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const share = workShare({ leaseMs: LEASE_MS, holdJob: () => Promise.reject(refused) });
    const owner = createJobOwner({ share, name: 'mail', log, clock, make: () => ({ start() {}, async stop() {} }) });
    await owner.start();
    expect(lines).toMatchObject([{ msg: 'holding the lease failed', cause: refused.message }]);
    // A try every quarter lease: 600 of them in the minute, one line at its end for the rest.
    await clock.advance(TICK_FAILURE_LOG_MS - 1);
    expect(lines).toHaveLength(1);
    await clock.advance(1);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({
      msg: 'holding the lease failed',
      suppressed: 599,
      intervalMs: TICK_FAILURE_LOG_MS,
    });
    expect(lines[1]).not.toHaveProperty('err');
    // What the next minute held back (the try at the minute's end, and four more) is told as
    // the owner stops.
    await clock.advance(LEASE_MS);
    await owner.stop();
    expect(lines.slice(2)).toMatchObject([{ msg: 'holding the lease failed', suppressed: 5 }]);
  });
});
