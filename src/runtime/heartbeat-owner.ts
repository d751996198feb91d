import type { Logger } from '../log.js';
import type { WorkShare } from '../store/index.js';
import type { Heartbeat } from './heartbeat.js';

/** The lease name of the main session's heartbeat. */
export const HEARTBEAT_JOB = 'heartbeat';

export interface OwnedHeartbeatOptions {
  readonly share: WorkShare;
  /** Makes this node's heartbeat when it takes the lease (a stopped one is not started again). */
  readonly make: () => Heartbeat;
  readonly log: Logger;
}

/** A heartbeat that runs on the one node holding its lease, and is asked for from any node. */
export interface OwnedHeartbeat extends Heartbeat {
  /** Another node asked for a heartbeat: this node runs it when it owns the heartbeat. */
  requested(): void;
  /** Whether this node runs the heartbeat now. */
  readonly owner: boolean;
}

/**
 * The main session's heartbeat among several nodes (DESIGN §15): the node holding the
 * `heartbeat` lease runs it (periodic turns, and requests from every node, which reach it as
 * notifications); the others try to take the lease every quarter lease, so a dead owner is
 * replaced once its lease lapsed. An owner that could not renew in time stops its turn before
 * its lease ends, so two turns never overlap.
 */
export function createOwnedHeartbeat(options: OwnedHeartbeatOptions): OwnedHeartbeat {
  const { share } = options;
  const log = options.log.child({ component: 'heartbeat' });
  const marginMs = share.leaseMs / 4;
  let local: Heartbeat | undefined;
  let stopping: Promise<void> | undefined;
  let stopped = false;
  let holding = false;
  let tick: NodeJS.Timeout | undefined;
  let watchdog: NodeJS.Timeout | undefined;

  /** Stops this node's heartbeat (its turn in flight is aborted; its events stay pending). */
  function drop(why: string): Promise<void> {
    clearTimeout(watchdog);
    const was = local;
    local = undefined;
    if (!was) return stopping ?? Promise.resolve();
    log.info({ why }, 'no longer running the heartbeat');
    stopping = was.stop().finally(() => {
      stopping = undefined;
    });
    return stopping;
  }

  async function hold(): Promise<void> {
    if (holding || stopped) return;
    holding = true;
    const sentAt = Date.now();
    try {
      const held = await share.holdJob(HEARTBEAT_JOB);
      if (stopped) return;
      if (!held) {
        if (local) await drop('another node holds the heartbeat lease');
        return;
      }
      clearTimeout(watchdog);
      watchdog = setTimeout(
        () => void drop('the heartbeat lease could not be renewed in time'),
        sentAt + share.leaseMs - marginMs - Date.now(),
      );
      watchdog.unref();
      if (!local) {
        // The previous heartbeat's abort must have ended before this one starts.
        await stopping;
        local = options.make();
        log.info({ node: share.node }, 'running the heartbeat of the main session');
        await local.start();
      }
    } catch (err) {
      log.warn({ err }, 'holding the heartbeat lease failed');
    } finally {
      holding = false;
    }
  }

  return {
    request() {
      if (local) local.request();
      else void share.requestHeartbeat().catch((err: unknown) => log.warn({ err }, 'asking for a heartbeat failed'));
    },
    requested() {
      local?.request();
    },
    get owner() {
      return local !== undefined;
    },
    async start() {
      await hold();
      tick = setInterval(() => void hold(), share.leaseMs / 4);
      tick.unref();
    },
    async stop() {
      stopped = true;
      clearInterval(tick);
      const owned = local !== undefined;
      await drop('shutting down');
      if (owned)
        await share
          .releaseJob(HEARTBEAT_JOB)
          .catch((err: unknown) => log.warn({ err }, 'freeing the heartbeat lease failed'));
    },
  };
}
