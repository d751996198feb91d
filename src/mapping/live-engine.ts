import type { MappingEngine } from './engine.js';

/** A mapping engine that a reload of the config can replace while requests keep using it. */
export interface LiveMappingEngine extends MappingEngine {
  /** Routes every request from now on through `next`; one already routing finishes on the old. */
  swap(next: MappingEngine): void;
}

/**
 * Wraps an engine so that what holds it (the hook routes, replay, the console) always asks the
 * current one (docs/configuration.md#reloading-the-configuration): each call goes to the engine
 * in force when it is made.
 */
export function createLiveMappingEngine(initial: MappingEngine): LiveMappingEngine {
  let current = initial;
  return {
    get mappings() {
      return current.mappings;
    },
    maxBodyBytesFor: (subPath) => current.maxBodyBytesFor(subPath),
    verifiersFor: (subPath) => current.verifiersFor(subPath),
    isCredentialHeader: (name) => current.isCredentialHeader(name),
    resolve: (subPath, payload, headers) => current.resolve(subPath, payload, headers),
    route: (request) => current.route(request),
    swap(next) {
      current = next;
    },
  };
}
