/** The first size of a buffer a body is gathered into beyond its first chunk; it doubles from there. */
const FIRST_BYTES = 16 * 1024;

/**
 * `buffer` (its first `length` bytes a body's so far) with `chunk` after them: the same buffer
 * when it has room, else one twice as large (at most `limitBytes`, at least what both need) with
 * both copied. A body read chunk by chunk is gathered so, never kept a chunk at a time: a sender
 * writing a byte a segment would make every byte an object of its own, 100 times its size.
 */
export function appended(buffer: Buffer, length: number, chunk: Uint8Array, limitBytes: number): Buffer {
  let into = buffer;
  if (length + chunk.length > buffer.length) {
    into = Buffer.allocUnsafe(Math.max(length + chunk.length, Math.min(limitBytes, Math.max(2 * length, FIRST_BYTES))));
    buffer.copy(into, 0, 0, length);
  }
  into.set(chunk, length);
  return into;
}
