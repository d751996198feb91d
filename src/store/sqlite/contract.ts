import { promised, type StoreContract } from '../contract.js';
import type { Store } from './store.js';

/** The embedded store behind the contract. */
export function sqliteContract(store: Store): StoreContract {
  return {
    events: promised(store.events, ['get', 'pending', 'countPending', 'list']),
    runs: promised(store.runs, ['get', 'unfinished', 'list', 'countByStatus', 'attempts']),
    messages: promised(store.messages, ['recent', 'has', 'list', 'ofRun', 'sessions']),
    requests: promised(store.requests, ['get', 'list', 'countSince', 'prune']),
    failedRequests: promised(store.failedRequests, ['forRequest']),
    idempotency: promised(store.idempotency, ['purge']),
    group: store.group,
    commit: async (write) => store.transaction(() => write(store)),
  };
}
