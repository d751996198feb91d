import { describe, expect, it } from 'vitest';
import { createPendingBodies, type PendingBody } from '../../../src/ingress/pending-bodies.js';

const admitted = (outcome: PendingBody | string): PendingBody => {
  if (typeof outcome === 'string') throw new Error(`refused: ${outcome}`);
  return outcome;
};

describe('the ledger of unverified bodies (docs/security.md#hostile-input)', () => {
  it('admits maxPerClient bodies per address, and refuses the next one of that address only', () => {
    const ledger = createPendingBodies({ maxBytes: 1_000_000, maxPerClient: 2 });
    admitted(ledger.admit('10.0.0.1', 10));
    admitted(ledger.admit('10.0.0.1', 10));
    expect(ledger.admit('10.0.0.1', 10)).toBe('client');
    admitted(ledger.admit('10.0.0.2', 10));
    expect(ledger.bytes).toBe(30);
  });

  it('refuses a body whose declared length would pass maxBytes, and admits it once room is given back', () => {
    const ledger = createPendingBodies({ maxBytes: 100, maxPerClient: 4 });
    const first = admitted(ledger.admit('a', 60));
    expect(ledger.admit('b', 41)).toBe('bytes');
    first.release();
    admitted(ledger.admit('b', 41));
    expect(ledger.bytes).toBe(41);
  });

  it('grows a chunked body’s reservation as it arrives, and refuses the bytes that would pass the bound', () => {
    const ledger = createPendingBodies({ maxBytes: 100, maxPerClient: 4 });
    admitted(ledger.admit('a', 50));
    const chunked = admitted(ledger.admit('b', 0));
    expect(chunked.cover(30)).toBe(true);
    expect(chunked.cover(20)).toBe(true);
    expect(ledger.bytes).toBe(80);
    expect(chunked.cover(51)).toBe(false);
    expect(ledger.bytes).toBe(80);
    expect(chunked.cover(50)).toBe(true);
    expect(ledger.bytes).toBe(100);
  });

  it('gives everything back on release, once however often it is called, and forgets the address', () => {
    const ledger = createPendingBodies({ maxBytes: 100, maxPerClient: 1 });
    const body = admitted(ledger.admit('a', 40));
    expect(body.cover(70)).toBe(true);
    body.release();
    body.release();
    expect([ledger.bytes, ledger.clients]).toEqual([0, 0]);
    expect(body.cover(10)).toBe(false);
    admitted(ledger.admit('a', 100));
    expect(ledger.admit('a', 0)).toBe('client');
  });
});
