import { describe, expect, it } from 'vitest';
import { createTrySlots, modelTarget, type Permit } from '../../../src/runtime/isolation/index.js';
import { runWaitOf } from '../../../src/runtime/runtime-parts.js';
import type { RunRecord } from '../../../src/store/index.js';
import { createManualClock } from '../../helpers/clock.js';

/** A run as the store holds it, on `model`, at `status`. */
const stored = (id: string, status: RunRecord['status'], model: string): RunRecord => ({
  id,
  status,
  model,
  sessionKey: `hook:${id}`,
  message: 'hello',
  wakeMode: 'now',
  deliver: false,
  channel: 'last',
  allowUnsafeExternalContent: false,
  contentSource: 'webhook',
  createdAt: 1,
});

describe("a run's wait, as the admin API shows it (docs/runtime.md#waiting)", () => {
  it("is what the node holding it says, else this node's open breaker of its model; none once it is over", () => {
    const clock = createManualClock();
    const slots = createTrySlots({ runSlots: 8, limits: { provider: () => 8, channel: () => 8 }, clock });
    const permits: Permit[] = [];
    for (let n = 0; n < 5; n++) {
      slots.enqueue({ source: 'a', target: modelTarget('dead/x'), runSlot: true, start: false }, (permit) =>
        permits.push(permit),
      );
    }
    for (const permit of permits) permit.release('failed', 'MODEL_UNREACHABLE');
    const runs = { waitOf: (id: string) => (id === 'held' ? 'waiting for a run slot (8 of 8 in use)' : undefined) };
    const until = new Date(clock.now() + 30_000).toISOString();
    expect(runWaitOf(runs, slots, stored('held', 'running', 'dead/x'))).toBe('waiting for a run slot (8 of 8 in use)');
    expect(runWaitOf(runs, slots, stored('elsewhere', 'queued', 'dead/x'))).toBe(
      `breaker open for dead/x until ${until}`,
    );
    expect(runWaitOf(runs, slots, stored('healthy', 'queued', 'live/x'))).toBeUndefined();
    expect(runWaitOf(runs, slots, stored('over', 'error', 'dead/x'))).toBeUndefined();
    slots.stop();
  });
});
