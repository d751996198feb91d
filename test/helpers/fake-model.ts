import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ChatRequest {
  model: string;
  messages: { role: string; content: string }[];
  reasoning_effort?: string;
  authorization?: string;
}

/** What the fake answers: a reply text (now or after `delayMs`), an HTTP error, or a stall (no answer until closed). */
export type FakeReply =
  | string
  | { text: string; delayMs: number }
  | { status: number; body?: unknown; retryAfter?: number }
  | { stall: true };

export interface FakeModel {
  /** The provider's baseUrl. */
  readonly url: string;
  readonly requests: ChatRequest[];
  /** Requests whose client went away before they were answered (an aborted call). */
  readonly abandoned: number;
  respond(fn: (request: ChatRequest, index: number) => FakeReply): void;
  close(): Promise<void>;
}

/** OpenAI's answer to a request longer than the model's context. */
export const CONTEXT_REFUSAL = {
  error: {
    message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 150000 tokens.",
    type: 'invalid_request_error',
    param: 'messages',
    code: 'context_length_exceeded',
  },
};

/** The characters of a request's messages, as hookd counts its prompt budget. */
export const charsOf = (request: ChatRequest): number => request.messages.reduce((n, m) => n + m.content.length, 0);

export interface FakeModelOptions {
  /**
   * Requests whose messages hold more characters than this are refused with HTTP 400 and
   * `CONTEXT_REFUSAL` (still recorded in `requests`), before the responder is asked.
   */
  readonly maxContextChars?: number;
}

/** A real OpenAI-compatible `/chat/completions` server on port 0. */
export async function startFakeModel(
  fn?: (request: ChatRequest, index: number) => FakeReply,
  options: FakeModelOptions = {},
): Promise<FakeModel> {
  const requests: ChatRequest[] = [];
  const sockets = new Set<Socket>();
  let abandoned = 0;
  let responder = fn ?? ((_req: ChatRequest, i: number) => `reply ${i + 1}`);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (c: Buffer) => {
      raw += c.toString();
    });
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(raw) as ChatRequest;
      res.on('close', () => {
        if (!res.writableFinished) abandoned++;
      });
      if (req.headers.authorization) body.authorization = req.headers.authorization;
      const index = requests.push(body) - 1;
      const tooLong = options.maxContextChars !== undefined && charsOf(body) > options.maxContextChars;
      const reply: FakeReply = tooLong ? { status: 400, body: CONTEXT_REFUSAL } : responder(body, index);
      const answer = (content: string) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: `c${index}`,
            object: 'chat.completion',
            choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          }),
        );
      };
      if (typeof reply === 'string') answer(reply);
      else if ('text' in reply) setTimeout(() => answer(reply.text), reply.delayMs);
      else if ('status' in reply) {
        res.writeHead(reply.status, {
          'content-type': 'application/json',
          ...(reply.retryAfter === undefined ? {} : { 'retry-after': String(reply.retryAfter) }),
        });
        res.end(JSON.stringify('body' in reply ? reply.body : { error: { message: 'fake error' } }));
      }
      // A stall answers nothing; close() destroys the socket.
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    get abandoned() {
      return abandoned;
    },
    respond(next) {
      responder = next;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The last user message of a request. */
export function lastUser(request: ChatRequest | undefined): string {
  return [...(request?.messages ?? [])].reverse().find((m) => m.role === 'user')?.content ?? '';
}

/** True for a heartbeat turn (the default heartbeat prompt). */
export function isHeartbeat(request: ChatRequest): boolean {
  return lastUser(request).startsWith('Heartbeat check.');
}
