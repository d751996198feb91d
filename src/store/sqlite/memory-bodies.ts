import type { BodyLog } from './bodies.js';

const EMPTY = Buffer.alloc(0);

/** The body log of a database in memory (`:memory:`, tests): the same positions, kept in memory. */
export function memoryBodyLog(): BodyLog {
  const kept: { position: number; body: Buffer }[] = [];
  let pending: Buffer[] = [];
  let end = 0;
  let pendingBytes = 0;
  const find = (position: number) => {
    let low = 0;
    let high = kept.length - 1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      const k = kept[mid] as { position: number; body: Buffer };
      if (position < k.position) high = mid - 1;
      else if (position >= k.position + k.body.length) low = mid + 1;
      else return k;
    }
    return undefined;
  };
  return {
    append(body) {
      pending.push(body);
      pendingBytes += body.length;
      return end + pendingBytes - body.length;
    },
    flush() {
      for (const body of pending) {
        kept.push({ position: end, body });
        end += body.length;
      }
      pending = [];
      pendingBytes = 0;
    },
    discard() {
      pending = [];
      pendingBytes = 0;
    },
    read(position, bytes) {
      if (bytes === 0) return EMPTY;
      let at = end;
      for (const body of pending) {
        if (position === at) return body.subarray(0, bytes);
        at += body.length;
      }
      const found = find(position);
      return found ? found.body.subarray(position - found.position, position - found.position + bytes) : EMPTY;
    },
    readSpan: () => undefined,
    releaseBefore(position) {
      let gone = 0;
      let freed = 0;
      while (gone < kept.length && (kept[gone] as { position: number; body: Buffer }).position < position) {
        freed += (kept[gone] as { body: Buffer }).body.length;
        gone++;
      }
      kept.splice(0, gone);
      return freed;
    },
    bytes: () => kept.reduce((sum, k) => sum + k.body.length, 0),
    close() {
      kept.length = 0;
    },
  };
}
