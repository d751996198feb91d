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

/**
 * A response body as UTF-8 text, at most `maxBytes` of it: past that the body is dropped
 * (its connection closed), so a destination that answers without end cannot fill the memory.
 */
export async function readAtMost(
  body: AsyncIterable<Uint8Array> & { destroy(err?: Error): unknown },
  maxBytes: number,
): Promise<BoundedText> {
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for await (const chunk of body) {
    if (bytes + chunk.length > maxBytes) {
      chunks.push(chunk.subarray(0, maxBytes - bytes));
      body.destroy();
      return { text: Buffer.concat(chunks).toString('utf8'), cut: true };
    }
    chunks.push(chunk);
    bytes += chunk.length;
  }
  return { text: Buffer.concat(chunks).toString('utf8'), cut: false };
}
