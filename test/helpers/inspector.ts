import { type MessageEvent, WebSocket } from 'undici';
import type { HookdProcess } from './hookd-process.js';

/**
 * The environment that opens a spawned hookd's inspector on a free loopback port, for
 * `memoryAfterGc`: pass it as `startHookd({ env: INSPECTABLE })`.
 */
export const INSPECTABLE: NodeJS.ProcessEnv = { NODE_OPTIONS: '--inspect=127.0.0.1:0' };

/** What a process holds, in MB. */
export interface Memory {
  readonly rssMb: number;
  readonly heapUsedMb: number;
  /** Memory of Buffers and other objects outside V8's heap. */
  readonly externalMb: number;
}

/** Sends one DevTools-protocol command and resolves with its result. */
function command(socket: WebSocket, id: number, method: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const onMessage = (event: MessageEvent) => {
      const message = JSON.parse(String(event.data)) as {
        id?: number;
        result?: Record<string, unknown>;
        error?: unknown;
      };
      if (message.id !== id) return;
      socket.removeEventListener('message', onMessage);
      if (message.error) reject(new Error(`${method}: ${JSON.stringify(message.error)}`));
      else resolve(message.result ?? {});
    };
    socket.addEventListener('message', onMessage);
    const params =
      method === 'Runtime.evaluate' ? { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true } : {};
    socket.send(JSON.stringify({ id, method, params }));
  });
}

/**
 * Collects every piece of garbage in an inspectable hookd (V8's full collection, which also hands
 * freed pages back), then reads its memory. Measures what the process keeps, not when V8 next
 * chooses to collect: on a loaded machine an idle process gave its heap back only a minute later.
 */
export async function memoryAfterGc(hookd: HookdProcess): Promise<Memory> {
  const url = /Debugger listening on (ws:\/\/\S+)/.exec(hookd.stderr())?.[1];
  if (!url) throw new Error(`hookd was not started with INSPECTABLE:\n${hookd.stderr()}`);
  const socket = new WebSocket(url);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve(), { once: true });
      socket.addEventListener('error', () => reject(new Error(`cannot reach the inspector at ${url}`)), { once: true });
    });
    await command(socket, 1, 'HeapProfiler.collectGarbage');
    const evaluated = (await command(socket, 2, 'Runtime.evaluate')) as { result: { value: string } };
    const usage = JSON.parse(evaluated.result.value) as { rss: number; heapUsed: number; external: number };
    const mb = (bytes: number) => bytes / 1024 / 1024;
    return { rssMb: mb(usage.rss), heapUsedMb: mb(usage.heapUsed), externalMb: mb(usage.external) };
  } finally {
    socket.close();
  }
}
