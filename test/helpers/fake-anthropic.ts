import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request to the Messages API, as the fake took it. */
export interface MessagesRequest {
  model: string;
  max_tokens: number;
  system?: string;
  messages: { role: string; content: string }[];
  thinking?: { type: string; budget_tokens: number };
  headers: { 'x-api-key'?: string; 'anthropic-version'?: string };
}

/** What the fake answers: content blocks (text, thinking), or an error status with Anthropic's error body. */
export type AnthropicReply =
  | string
  | { blocks: { type: string; text?: string; thinking?: string }[] }
  | { status: number; message: string; retryAfter?: number };

export interface FakeAnthropic {
  /** The provider's baseUrl. */
  readonly url: string;
  readonly requests: MessagesRequest[];
  close(): Promise<void>;
}

const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

/** A real Anthropic Messages API (`POST /v1/messages`) on port 0; `fn` answers each request. */
export async function startFakeAnthropic(
  fn: (request: MessagesRequest, index: number) => AnthropicReply,
): Promise<FakeAnthropic> {
  const requests: MessagesRequest[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => {
      raw += c.toString();
    });
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.method !== 'POST' || req.url !== '/v1/messages') {
        res
          .writeHead(404)
          .end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'Not found' } }));
        return;
      }
      const body = JSON.parse(raw) as Omit<MessagesRequest, 'headers'>;
      const headers = {
        ...(typeof req.headers['x-api-key'] === 'string' ? { 'x-api-key': req.headers['x-api-key'] } : {}),
        ...(typeof req.headers['anthropic-version'] === 'string'
          ? { 'anthropic-version': req.headers['anthropic-version'] }
          : {}),
      };
      const request = { ...body, headers };
      requests.push(request);
      const reply = fn(request, requests.length - 1);
      if (typeof reply === 'object' && 'status' in reply) {
        const type = ERROR_TYPES[reply.status] ?? 'api_error';
        const extra = reply.retryAfter === undefined ? {} : { 'retry-after': String(reply.retryAfter) };
        res
          .writeHead(reply.status, extra)
          .end(JSON.stringify({ type: 'error', error: { type, message: reply.message } }));
        return;
      }
      const content = typeof reply === 'string' ? [{ type: 'text', text: reply }] : reply.blocks;
      res.end(
        JSON.stringify({
          id: `msg_${requests.length}`,
          type: 'message',
          role: 'assistant',
          model: body.model,
          content,
          stop_reason: 'end_turn',
          usage: { input_tokens: 10, output_tokens: 5 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
