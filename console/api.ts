/** The admin API as the console calls it: the session cookie, and the page's CSRF token on POSTs. */

const csrf = document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')?.content ?? '';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface Answer<T> {
  readonly status: number;
  readonly body: T;
  readonly headers: Headers;
}

async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Answer<T>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method === 'POST') headers['x-csrf-token'] = csrf;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  // The session ended (signed out elsewhere, expired): the page shows the sign-in form.
  if (res.status === 401) {
    location.reload();
    throw new ApiError(401, 'ADMIN_UNAUTHORIZED', 'signed out');
  }
  const text = await res.text();
  const parsed = text === '' ? null : (JSON.parse(text) as T);
  return { status: res.status, body: parsed as T, headers: res.headers };
}

/** GET, throwing the API's error for anything but 2xx. */
export async function get<T>(path: string): Promise<T> {
  const answer = await call<T & { code?: string; error?: string }>('GET', path);
  if (answer.status >= 300) throw new ApiError(answer.status, answer.body?.code ?? '', answer.body?.error ?? '');
  return answer.body;
}

/** POST, returning every answer (a replay answers what a live request would, 4xx and 5xx too). */
export function post<T>(path: string, body?: unknown): Promise<Answer<T>> {
  return call<T>('POST', path, body);
}

export interface RequestItem {
  id: string;
  receivedAt: string;
  path: string;
  url: string;
  mappingId?: string;
  status: number;
  code?: string;
  eventIds: string[];
  runIds: string[];
  durationMs: number;
  bodyBytes: number;
  truncated: boolean;
  redacted: boolean;
  replayOf?: string;
  replayedAt?: string;
}

export interface Delivery {
  status: 'sent' | 'skipped' | 'failed';
  channel?: string;
  to?: string;
  reason?: string;
}

export interface RunItem {
  runId: string;
  sessionKey: string;
  name: string | null;
  status: string;
  model: string;
  output?: string;
  error?: string;
  delivery?: Delivery;
  mappingId?: string;
  createdAt?: string;
  startedAt?: string;
  finishedAt?: string;
}

export interface RequestDetail extends RequestItem {
  headers: Record<string, string>;
  body: string;
  events: { id: string; text: string; createdAt: string; consumed: boolean }[];
  runs: RunItem[];
  failure?: { code: string; error: string };
}

export interface Overview {
  requestsLastHour: { total: number; failed: number };
  runsByStatus: Record<string, number>;
  queueDepth: number | null;
  transforms: { calls: number; meanMs: number | null; p95AtMostMs: number | null } | null;
}

export interface MappingItem {
  id: string;
  configPath: string;
  path?: string;
  source?: string;
  headers?: string[];
  transform?: string;
  verify?: string;
  forEach?: string;
  schema: boolean;
}
