import { randomUUID } from 'node:crypto';
import type { AcceptContext, Accepted, Action, ActionSink } from '../actions/index.js';
import type { Store } from '../store/index.js';

/** The main session's key (DESIGN §6.1). */
export const MAIN_SESSION = 'main';

export interface StoreSinkOptions {
  /** Called after the actions are committed (the runtime schedules work here). */
  onCommitted?: (actions: readonly Action[], accepted: readonly Accepted[]) => void;
  now?: () => number;
}

/** An ActionSink that commits every action of a request in one SQLite transaction. */
export function createStoreSink(store: Store, options: StoreSinkOptions = {}): ActionSink {
  const now = options.now ?? Date.now;
  return {
    accept(actions: readonly Action[], context: AcceptContext): readonly Accepted[] {
      const createdAt = now();
      const accepted = store.transaction(() =>
        actions.map((action): Accepted => {
          if (action.kind === 'wake') {
            const eventId = randomUUID();
            store.events.insert({
              id: eventId,
              sessionKey: MAIN_SESSION,
              text: action.text,
              origin: 'hook',
              trusted: action.allowUnsafeExternalContent,
              contentSource: action.contentSource,
              requestId: context.requestId,
              createdAt,
            });
            return { kind: 'wake', eventId, mode: action.mode };
          }
          const { kind: _kind, ...run } = action;
          const runId = randomUUID();
          store.runs.insert({ ...run, id: runId, requestId: context.requestId, createdAt });
          return { kind: 'agent', runId, sessionKey: action.sessionKey };
        }),
      );
      options.onCommitted?.(actions, accepted);
      return accepted;
    },
    recordFailure(failure) {
      store.failures.insert({ ...failure, id: randomUUID(), createdAt: now() });
    },
  };
}
