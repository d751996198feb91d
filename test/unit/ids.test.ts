import { describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const millis = (id: string) => Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);

describe('newId', () => {
  it('is a version 7 UUID carrying the time in milliseconds', () => {
    const at = Date.UTC(2026, 10, 22, 13, 0, 0, 123) + 10_000_000;
    const id = newId(at);
    expect(id).toMatch(V7);
    expect(millis(id)).toBe(at);
  });

  it('keeps increasing within one millisecond, past 4096 ids, and when the clock goes back', () => {
    const at = Date.now() + 20_000_000;
    const ids = [
      ...Array.from({ length: 5000 }, () => newId(at)),
      ...Array.from({ length: 10 }, () => newId(at - 60_000)),
      newId(),
    ];
    for (const id of ids) expect(id).toMatch(V7);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(millis(ids[4999] as string)).toBe(at + 1);
  });
});
