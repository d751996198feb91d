import { promised, type StoreContract, withinShare } from '../contract.js';
import { createSqliteLogTables } from './log-tables.js';
import { searchInWindows } from './search.js';
import type { Store } from './store.js';

/** The embedded store behind the contract; `now` is its clock (the process's: the database is here). */
export function sqliteContract(store: Store, now: () => number = Date.now): StoreContract {
  const runs = promised(store.runs, ['get', 'unfinished', 'list', 'countByStatus', 'attempts', 'outcomes']);
  return {
    events: promised(store.events, ['get', 'pending', 'countPending', 'list']),
    runs: { ...runs, countByStatus: withinShare(runs.countByStatus) },
    messages: promised(store.messages, ['recent', 'has', 'ofRun', 'sessions']),
    requests: {
      ...promised(store.requests, ['get', 'countSince']),
      // A search may read the whole log: in windows, the event loop free between them.
      list: async (filter) =>
        filter.search === undefined ? store.requests.list(filter) : searchInWindows(store.requests, filter),
    },
    log: createSqliteLogTables(store.db, store.logTally, store.group, now, store.bodies),
    failedRequests: promised(store.failedRequests, ['forRequest']),
    idempotency: { purgeExpired: async () => store.idempotency.purge(now()) },
    alerts: promised(store.alerts, ['insert', 'latestFiring', 'list']),
    group: store.group,
    commit: async (write) => store.transaction(() => write(store)),
  };
}
