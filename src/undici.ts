import type { request as Request } from 'undici';

let loaded: Promise<typeof Request> | undefined;

/** undici's `request`, loaded on first use: importing it costs about 100 ms of start-up. */
export async function undiciRequest(...args: Parameters<typeof Request>): ReturnType<typeof Request> {
  loaded ??= import('undici').then((m) => m.request);
  return (await loaded)(...args);
}
