import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SentMessage {
  botToken: string;
  chat_id: string;
  text: string;
}

export interface FakeChat {
  /** The channel's apiBase. */
  readonly url: string;
  readonly sent: SentMessage[];
  /** sendMessage calls answered 429 so far. */
  readonly refused: number;
  /** Answer the next `count` sendMessage calls with 429 and this retry_after. */
  throttleNext(count: number, retryAfterSeconds: number): void;
  /** Answer the next `count` sendMessage calls with 400 "chat not found" (not retried). */
  refuseNext(count: number): void;
  /** Answer the next `count` sendMessage calls with 502 Bad Gateway (retried). */
  failNext(count: number): void;
  close(): Promise<void>;
}

/** A real Bot-API-style chat server (`POST /bot<token>/sendMessage`) on port 0. */
export async function startFakeChat(): Promise<FakeChat> {
  const sent: SentMessage[] = [];
  let throttled = 0;
  let refused = 0;
  let retryAfter = 0;
  let refusing = 0;
  let failing = 0;
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => {
      raw += c.toString();
    });
    req.on('end', () => {
      const match = /^\/bot([^/]+)\/sendMessage$/.exec(req.url ?? '');
      res.setHeader('content-type', 'application/json');
      if (!match || req.method !== 'POST') {
        res.writeHead(404).end(JSON.stringify({ ok: false, error_code: 404, description: 'Not Found' }));
        return;
      }
      if (refusing > 0) {
        refusing--;
        res
          .writeHead(400)
          .end(JSON.stringify({ ok: false, error_code: 400, description: 'Bad Request: chat not found' }));
        return;
      }
      if (failing > 0) {
        failing--;
        res.writeHead(502).end(JSON.stringify({ ok: false, error_code: 502, description: 'Bad Gateway' }));
        return;
      }
      if (throttled > 0) {
        throttled--;
        refused++;
        const tooMany = {
          ok: false,
          error_code: 429,
          description: 'Too Many Requests',
          parameters: { retry_after: retryAfter },
        };
        res.writeHead(429).end(JSON.stringify(tooMany));
        return;
      }
      const body = JSON.parse(raw) as { chat_id: string; text: string };
      sent.push({ botToken: match[1] as string, chat_id: String(body.chat_id), text: body.text });
      res.end(JSON.stringify({ ok: true, result: { message_id: sent.length } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    sent,
    get refused() {
      return refused;
    },
    refuseNext(count) {
      refusing = count;
    },
    failNext(count) {
      failing = count;
    },
    throttleNext(count, seconds) {
      throttled = count;
      retryAfter = seconds;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
