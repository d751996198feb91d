import { describe, expect, it } from 'vitest';
import type { Action, AgentAction } from '../../../src/actions/index.js';
import { admitRuns, scheduleCommitted } from '../../../src/runtime/runtime-sink.js';
import { agentAction, wakeAction } from '../../helpers/actions.js';

/** What the runtime does with a hook request's actions before and after their commit (docs/runtime.md). */

describe('admitting a hook request', () => {
  it('answers 503 QUEUE_FULL with Retry-After: 30 when its runs would queue past the bound, before anything is written', () => {
    const two = [agentAction('a'), agentAction('b')];
    expect(() => admitRuns({ depth: 8 }, 10, two)).not.toThrow();
    let refused: unknown;
    try {
      admitRuns({ depth: 9 }, 10, two);
    } catch (err) {
      refused = err;
    }
    expect(refused).toMatchObject({ code: 'QUEUE_FULL', statusCode: 503, headers: { 'retry-after': '30' } });
  });

  it('lets a request without runs through a full queue: a wake makes no run', () => {
    expect(() => admitRuns({ depth: 10 }, 10, [wakeAction('disk full')])).not.toThrow();
  });
});

describe('scheduling what a commit accepted', () => {
  it('queues each agent run with its model and mapping, and asks for a heartbeat only for a `now` wake', () => {
    const queued: unknown[] = [];
    let heartbeats = 0;
    const mapped = { ...(agentAction('b') as AgentAction), mappingId: 'github' };
    const later: Action = { ...(wakeAction('later') as Extract<Action, { kind: 'wake' }>), mode: 'next-heartbeat' };
    scheduleCommitted(
      { enqueue: (run) => queued.push(run) },
      { request: () => heartbeats++ },
      [agentAction('a'), mapped, later, wakeAction('now')],
      [
        { kind: 'agent', runId: 'r1', sessionKey: 'hook:a' },
        { kind: 'agent', runId: 'r2', sessionKey: 'hook:b' },
        { kind: 'wake', eventId: 'e1', mode: 'next-heartbeat' },
        { kind: 'wake', eventId: 'e2', mode: 'now' },
      ],
    );
    expect(queued).toEqual([
      { id: 'r1', sessionKey: 'hook:a', model: 'fake/m' },
      { id: 'r2', sessionKey: 'hook:b', model: 'fake/m', mappingId: 'github' },
    ]);
    expect(heartbeats).toBe(1);
  });
});
