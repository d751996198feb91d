import { describe, expect, it } from 'vitest';
import { readAtMost } from '../../src/undici.js';

/**
 * A body as undici hands it over, a chunk at a time; every chunk is the same array refilled, as a
 * reader that kept chunks instead of copying them would show (its text would repeat the last).
 */
function bodyOf(text: string, chunkBytes: number) {
  const bytes = Buffer.from(text);
  const shared = new Uint8Array(chunkBytes);
  let destroyed = false;
  return {
    get destroyed() {
      return destroyed;
    },
    destroy() {
      destroyed = true;
    },
    async *[Symbol.asyncIterator]() {
      for (let at = 0; at < bytes.length && !destroyed; at += chunkBytes) {
        const part = bytes.subarray(at, at + chunkBytes);
        shared.set(part);
        yield shared.subarray(0, part.length);
      }
    },
  };
}

describe('readAtMost', () => {
  it('copies each chunk as it comes, however small: a byte a chunk keeps no chunk', async () => {
    const text = 'abcdefghij'.repeat(5000);
    expect(await readAtMost(bodyOf(text, 1), 1 << 20)).toEqual({ text, cut: false });
    expect(await readAtMost(bodyOf(text, 7), 1 << 20)).toEqual({ text, cut: false });
  });

  it('cuts at its bound, mid-chunk too, and drops the rest of the body', async () => {
    const text = 'é'.repeat(40_000);
    for (const chunkBytes of [1, 3, 4096, 100_000]) {
      const body = bodyOf(text, chunkBytes);
      const read = await readAtMost(body, 50_001);
      expect(read.cut).toBe(true);
      expect(Buffer.byteLength(read.text)).toBeLessThanOrEqual(50_003);
      expect(read.text.startsWith('é'.repeat(25_000))).toBe(true);
      expect(body.destroyed).toBe(true);
    }
    expect(await readAtMost(bodyOf('', 1), 10)).toEqual({ text: '', cut: false });
    expect(await readAtMost(bodyOf('0123456789', 1), 10)).toEqual({ text: '0123456789', cut: false });
  });
});
