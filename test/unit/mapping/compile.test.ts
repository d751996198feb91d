import { describe, expect, it } from 'vitest';
import type { MappingConfig } from '../../../src/config/index.js';
import { matchOf } from '../../../src/mapping/compile.js';

describe('matchOf', () => {
  it('trims the path of slashes, lower-cases header names and splits their alternatives', () => {
    const match = matchOf({
      match: { path: '//github/push/', source: 'gh', headers: { 'X-GitHub-Event': 'push | ping' } },
    } as MappingConfig);
    expect(match).toEqual({
      matchPath: 'github/push',
      matchSource: 'gh',
      matchHeaders: [['x-github-event', new Set(['push', 'ping'])]],
    });
  });

  it('leaves out what the mapping does not match on', () => {
    expect(matchOf({} as MappingConfig)).toEqual({});
    expect(matchOf({ match: { source: 's' } } as MappingConfig)).toEqual({ matchSource: 's' });
  });
});
