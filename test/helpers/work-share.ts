import type { WorkShare } from '../../src/store/index.js';

/**
 * The WorkShare of one node among others, as a test plays the database: what `answers` gives,
 * else nothing to claim, every lease renewed, no run or job taken, and no other node to hear.
 */
export function workShare(answers: Partial<WorkShare> = {}): WorkShare {
  return {
    node: 'node-a',
    leaseMs: 400,
    claimRuns: async () => [],
    takeRun: async () => false,
    renewRuns: async (ids) => ({ renewed: new Set(ids), busy: new Set(), cancelled: new Set() }),
    releaseRuns: async () => {},
    claimableRuns: async () => 0,
    holdJob: async () => false,
    releaseJob: async () => {},
    requestHeartbeat: async () => {},
    listen: async () => async () => {},
    ...answers,
  };
}
