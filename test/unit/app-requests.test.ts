import { describe, expect, it } from 'vitest';
import { endpointOf, requestIdOf } from '../../src/app.js';

describe("a request's id", () => {
  it("keeps the sender's x-request-id when it is 1 to 128 safe characters", () => {
    expect(requestIdOf({ headers: { 'x-request-id': 'gh:delivery-1.2_3' } })).toBe('gh:delivery-1.2_3');
    expect(requestIdOf({ headers: { 'x-request-id': 'a'.repeat(128) } })).toBe('a'.repeat(128));
  });

  it('makes a new, time-ordered one for a missing, unsafe or overlong id', () => {
    const made = [
      requestIdOf({ headers: {} }),
      requestIdOf({ headers: { 'x-request-id': 'has space' } }),
      requestIdOf({ headers: { 'x-request-id': '<script>' } }),
      requestIdOf({ headers: { 'x-request-id': 'a'.repeat(129) } }),
      requestIdOf({ headers: { 'x-request-id': '' } }),
    ];
    expect(new Set(made).size).toBe(made.length);
    expect([...made].sort()).toEqual(made);
    for (const id of made) expect(id).not.toMatch(/space|script|^a+$|^$/);
  });
});

describe("a request's endpoint label (never the path a sender chose)", () => {
  it('names the hook endpoints by their routes', () => {
    expect(endpointOf('/hooks/wake', 'wake', '/hooks')).toBe('wake');
    expect(endpointOf('/hooks/agent', 'agent', '/hooks')).toBe('agent');
    expect(endpointOf('/hooks/github/anything-at-all', 'github/anything-at-all', '/hooks')).toBe('mapped');
  });

  it('names requests refused before routing by where they were going', () => {
    expect(endpointOf('/hooks/x', undefined, '/hooks')).toBe('hooks');
    expect(endpointOf('/api/runs', undefined, '/hooks')).toBe('admin');
    expect(endpointOf('/healthz', undefined, '/hooks')).toBe('health');
    expect(endpointOf('/metrics', undefined, '/hooks')).toBe('health');
    expect(endpointOf('/random/sender/path', undefined, '/hooks')).toBe('other');
  });
});
