import type { request as Request } from 'undici';
import { appended } from './byte-buffer.js';

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

/**
 * A response body as UTF-8 text, at most `maxBytes` of it: past that the body is dropped
 * (its connection closed), so a destination that answers without end cannot fill the memory.
 * Its chunks are gathered into one buffer (`appended`): a server that sent its body a byte a chunk
 * made 8 MiB cost 500 MB and more when every chunk was kept.
 */
export async function readAtMost(
  body: AsyncIterable<Uint8Array> & { destroy(err?: Error): unknown },
  maxBytes: number,
): Promise<BoundedText> {
  let kept: Buffer = Buffer.alloc(0);
  let bytes = 0;
  for await (const chunk of body) {
    const room = maxBytes - bytes;
    const taken = chunk.length > room ? chunk.subarray(0, room) : chunk;
    kept = appended(kept, bytes, taken, maxBytes);
    bytes += taken.length;
    if (taken !== chunk) {
      body.destroy();
      return { text: kept.toString('utf8', 0, bytes), cut: true };
    }
  }
  return { text: kept.toString('utf8', 0, bytes), cut: false };
}
