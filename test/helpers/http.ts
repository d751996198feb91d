import { request } from 'undici';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
  text: string;
}

/** POSTs (or sends `method`) and returns status, headers and the parsed JSON body. */
export async function call(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer; json?: unknown } = {},
): Promise<Answer> {
  const headers = { ...options.headers };
  let body = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  const res = await request(url, {
    method: (options.method ?? 'POST') as 'POST',
    headers,
    ...(body === undefined ? {} : { body }),
  });
  const text = await res.body.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Not JSON: the test looks at `text`.
  }
  return { status: res.statusCode, headers: res.headers, body: parsed, text };
}

/** Polls `probe` every 50 ms until it returns something other than undefined; throws after `ms` (10 s: a wait for a state, not a deadline). */
export async function until<T>(probe: () => Promise<T | undefined>, what: string, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
