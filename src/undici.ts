import type { request as Request } from 'undici';

let loaded: Promise<typeof Request> | undefined;

/** undici's `request`, loaded on first use: importing it costs about 100 ms of start-up. */
export async function undiciRequest(...args: Parameters<typeof Request>): ReturnType<typeof Request> {
  loaded ??= import('undici').then((m) => m.request);
  return (await loaded)(...args);
}

/** What `readAtMost` read: the body's first bytes as text, and whether there were more. */
export interface BoundedText {
  readonly text: string;
  readonly cut: boolean;
}

/** The first size of `readAtMost`'s buffer; it doubles as the body grows, up to its bound. */
const FIRST_READ_BYTES = 16 * 1024;

/**
 * A response body as UTF-8 text, at most `maxBytes` of it: past that the body is dropped
 * (its connection closed), so a destination that answers without end cannot fill the memory.
 * Each chunk is copied into one buffer, never kept: a server that sends its body a byte a chunk
 * made 8 MiB cost 500 MB and more when every chunk (an object and its memory) was kept.
 */
export async function readAtMost(
  body: AsyncIterable<Uint8Array> & { destroy(err?: Error): unknown },
  maxBytes: number,
): Promise<BoundedText> {
  let kept = Buffer.allocUnsafe(Math.min(FIRST_READ_BYTES, maxBytes));
  let bytes = 0;
  for await (const chunk of body) {
    const room = maxBytes - bytes;
    const taken = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (bytes + taken.length > kept.length) {
      const grown = Buffer.allocUnsafe(Math.min(maxBytes, Math.max(kept.length * 2, bytes + taken.length)));
      kept.copy(grown, 0, 0, bytes);
      kept = grown;
    }
    kept.set(taken, bytes);
    bytes += taken.length;
    if (taken !== chunk) {
      body.destroy();
      return { text: kept.toString('utf8', 0, bytes), cut: true };
    }
  }
  return { text: kept.toString('utf8', 0, bytes), cut: false };
}
