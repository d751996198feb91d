import type { RequestView, RunListItem } from '../../views.js';

/** What the live log shows as it happens (`GET /api/stream`, docs/runtime.md#request-log-and-replay). */
export type ActivityItem =
  | { readonly kind: 'request'; readonly request: RequestView }
  | { readonly kind: 'run'; readonly run: RunListItem };

/** A fan-out of activity to the open streams; publishing with none open costs nothing. */
export interface ActivityFeed {
  /** Returns the unsubscribe function. */
  subscribe(listener: (item: ActivityItem) => void): () => void;
  publish(item: () => ActivityItem | undefined): void;
  readonly subscribers: number;
}

export function createActivityFeed(): ActivityFeed {
  const listeners = new Set<(item: ActivityItem) => void>();
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    publish(build) {
      if (listeners.size === 0) return;
      const item = build();
      if (!item) return;
      for (const listener of listeners) listener(item);
    },
    get subscribers() {
      return listeners.size;
    },
  };
}
