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

export type { AlertsView, AlertView } from '../src/alert-views.js';
export type {
  BreakerView,
  DeliveryOutcome,
  FixtureItem,
  FixtureView,
  MappingView,
  OverviewView,
  RequestDetail,
  RequestView,
  RunAttemptView,
  RunListItem,
  RunOutcome,
  RunTranscript,
  RunView,
} from '../src/views.js';
