import { readdirSync, readFileSync } from 'node:fs';
import { createModelCatalog } from '../../src/actions/index.js';
import type { Config } from '../../src/config/index.js';
import { compileMappings, type TransformContext } from '../../src/mapping/index.js';

/** A transform host's `config` and `mappings` for a loaded config: its mappings compiled as `serve` compiles them. */
export function hostConfig(config: Config) {
  return { config, mappings: compileMappings(config, createModelCatalog(config)) };
}

/** A transform call's context for `payload`, sent as the request's JSON body. */
export const transformContext = (payload: unknown): TransformContext => ({
  payload,
  headers: {},
  query: {},
  path: 'x',
  url: '/hooks/x',
  rawBody: JSON.stringify(payload),
  payloadIsJsonOfRawBody: true,
});

/** The pids of `parent`'s children whose command line holds `name` (Linux: read from /proc). */
export function childrenOf(parent: number, name: string): number[] {
  return readdirSync('/proc').flatMap((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      return ppid === parent && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(name) ? [Number(pid)] : [];
    } catch {
      return [];
    }
  });
}
