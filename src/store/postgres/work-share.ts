import type pg from 'pg';
import type { WorkShare } from '../contract.js';
import {
  claimRuns,
  countClaimable,
  HEARTBEAT_CHANNEL,
  holdLease,
  listen,
  notify,
  RUNS_CHANNEL,
  releaseLease,
  releaseRuns,
  renewRuns,
  takeRun,
} from './leases.js';

export interface PgWorkShareOptions {
  /** This node's name in the leases it holds (host, process and a random part). */
  readonly node: string;
  readonly leaseMs: number;
  /** Told when the listening connection failed; it is made again at the next `listen` tick. */
  readonly onListenError?: (err: Error) => void;
}

/** Between tries to listen again after the listening connection failed. */
const RELISTEN_MS = 1000;

/** The work shared by the nodes on one PostgreSQL (docs/scale.md), over the leases of `leases.ts`. */
export function createPgWorkShare(pool: pg.Pool, options: PgWorkShareOptions): WorkShare {
  const { node: owner, leaseMs } = options;
  return {
    node: owner,
    leaseMs,
    claimRuns: (limit, filter) => claimRuns(pool, { owner, leaseMs, limit, ...filter }),
    takeRun: (id) => takeRun(pool, { owner, id, leaseMs }),
    renewRuns: (ids) => renewRuns(pool, { owner, ids, leaseMs }),
    async releaseRuns() {
      if ((await releaseRuns(pool, owner)) > 0) await notify(pool, RUNS_CHANNEL);
    },
    claimableRuns: () => countClaimable(pool),
    holdJob: (name) => holdLease(pool, { name, owner, leaseMs }),
    releaseJob: (name) => releaseLease(pool, name, owner),
    requestHeartbeat: () => notify(pool, HEARTBEAT_CHANNEL),
    async listen(handlers) {
      const channels = { [RUNS_CHANNEL]: handlers.runs, [HEARTBEAT_CHANNEL]: handlers.heartbeat };
      let stopped = false;
      let unlisten: (() => Promise<void>) | undefined;
      let connecting: Promise<void> | undefined;
      let retry: NodeJS.Timeout | undefined;
      const again = () => {
        if (stopped || retry) return;
        retry = setTimeout(() => {
          retry = undefined;
          connecting = connect();
        }, RELISTEN_MS);
        retry.unref();
      };
      const connect = async (): Promise<void> => {
        if (stopped) return;
        try {
          // Known once `listen` resolved; a failure before that ends `listen` itself.
          let self: (() => Promise<void>) | undefined;
          const stop = await listen(
            pool,
            channels,
            (err) => {
              options.onListenError?.(err);
              if (self && unlisten === self) unlisten = undefined;
              void self?.();
              again();
            },
            leaseMs / 4,
          );
          self = stop;
          // Stopped while connecting: this connection is not kept.
          if (stopped) return await stop();
          unlisten = stop;
          // Notifications sent while not listening are lost: look for the work they announced.
          handlers.runs();
          handlers.heartbeat();
        } catch (err) {
          options.onListenError?.(err as Error);
          again();
        }
      };
      connecting = connect();
      await connecting;
      return async () => {
        stopped = true;
        clearTimeout(retry);
        await connecting;
        await unlisten?.();
        unlisten = undefined;
      };
    },
  };
}
