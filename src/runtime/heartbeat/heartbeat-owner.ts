import type { Clock } from '../../clock.js';
import type { Logger } from '../../log.js';
import type { WorkShare } from '../../store/index.js';
import { createJobOwner } from '../job-owner.js';
import type { Heartbeat } from './heartbeat.js';

/** The lease name of the main session's heartbeat. */
export const HEARTBEAT_JOB = 'heartbeat';

export interface OwnedHeartbeatOptions {
  readonly share: WorkShare;
  /** Makes this node's heartbeat when it takes the lease (a stopped one is not started again). */
  readonly make: () => Heartbeat;
  readonly log: Logger;
  readonly clock?: Clock;
}

/** A heartbeat that runs on the one node holding its lease, and is asked for from any node. */
export interface OwnedHeartbeat extends Heartbeat {
  /** Another node asked for a heartbeat: this node runs it when it owns the heartbeat. */
  requested(): void;
  /** Whether this node runs the heartbeat now. */
  readonly owner: boolean;
}

/**
 * The main session's heartbeat among several nodes (docs/scale.md): the node holding the
 * `heartbeat` lease runs it (periodic turns, and requests from every node, which reach it as
 * notifications). An owner that loses the lease aborts its turn in flight; the turn's events
 * stay pending for the next owner.
 */
export function createOwnedHeartbeat(options: OwnedHeartbeatOptions): OwnedHeartbeat {
  const { share } = options;
  const log = options.log.child({ component: 'heartbeat' });
  const owner = createJobOwner({
    share,
    name: HEARTBEAT_JOB,
    log,
    make: options.make,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  return {
    request() {
      const local = owner.running;
      if (local) local.request();
      else void share.requestHeartbeat().catch((err: unknown) => log.warn({ err }, 'asking for a heartbeat failed'));
    },
    requested() {
      owner.running?.request();
    },
    get owner() {
      return owner.running !== undefined;
    },
    start: owner.start,
    stop: owner.stop,
  };
}
