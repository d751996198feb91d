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

import type { DeliveryStatus, MappingView, RequestDetail, RequestView, RunStatus } from '../src/views.js';

/** What a request's runs came to (one status for all, `mixed` when they differ). */
export interface RunOutcome {
  readonly status: RunStatus | 'mixed';
  readonly delivery?: DeliveryStatus | 'mixed';
}

/** A request log row as the admin API lists it, with its event type and its runs' outcome. */
export type RequestRow = RequestView & { readonly eventType?: string; readonly outcome?: RunOutcome };
/** `GET /api/presets/:name/fixtures/:fixture`: a preset's recorded request. */
export interface FixtureView {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
}
/** A request's page. */
export type RequestPageView = RequestDetail & RequestRow;
/** A mapping as listed, with how it reads its event type and the fixtures of its preset. */
export type MappingRow = MappingView & {
  readonly eventType?: string;
  /** The preset it comes from, by name. */
  readonly preset?: string;
  readonly fixtures?: readonly { readonly name: string; readonly description?: string }[];
};

export type {
  AlertsView,
  AlertView,
  DeliveryOutcome,
  MappingView,
  OverviewView,
  RequestDetail,
  RequestView,
  RunAttemptView,
  RunListItem,
  RunTranscript,
  RunView,
} from '../src/views.js';
