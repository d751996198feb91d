/**
 * The admin API's JSON shapes (docs/runtime.md#admin-api): what the gateway answers and what
 * the console and the CLI read, declared once. The console and the CLI import these as types
 * only; times are ISO strings.
 */

/** A run's states, in the order a run moves through them (`cancelled`: ended by the operator). */
export const RUN_STATUSES = ['queued', 'running', 'ok', 'error', 'timeout', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** What became of a run's reply: sent, not sent on purpose (and why), or failed after retries. */
export const DELIVERY_STATUSES = ['sent', 'skipped', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** A reply's delivery, as recorded on its run. */
export interface DeliveryOutcome {
  readonly status: DeliveryStatus;
  readonly channel?: string;
  readonly to?: string;
  readonly reason?: string;
}

/** One message of a session's transcript. */
export interface SessionMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

/** What a failed attempt tried: the run's model call, or the delivery of its reply. */
export const ATTEMPT_KINDS = ['model', 'delivery'] as const;
export type AttemptKind = (typeof ATTEMPT_KINDS)[number];

/** A failed try of a run's model call or delivery (docs/runtime.md#attempts), oldest first. */
export interface RunAttemptView {
  readonly at: string;
  readonly kind: AttemptKind;
  /** 1 for the first try of its call or delivery. */
  readonly n: number;
  /** The failure's error code (docs/errors.md): `MODEL_REFUSED`, `CHANNEL_UNREACHABLE`, … */
  readonly outcome: string;
  /** The HTTP status, when the server answered. */
  readonly status?: number;
  /** The network error, or the start of the answer (at most 300 characters, secrets masked). */
  readonly error?: string;
}

/** `GET /api/runs/:runId`. */
export interface RunView {
  readonly runId: string;
  readonly sessionKey: string;
  readonly name: string | null;
  readonly status: RunStatus;
  readonly model: string;
  readonly output?: string;
  readonly error?: string;
  readonly delivery?: DeliveryOutcome;
  /** Every failed try of its model call and of its delivery, oldest first. */
  readonly attempts: readonly RunAttemptView[];
  /**
   * While the model call or the delivery is being retried: `retrying (attempt 3, last: HTTP 500 …)`
   * (`retrying delivery (…)` for the delivery).
   */
  readonly retrying?: string;
  /**
   * Why an unfinished run is not trying right now (docs/runtime.md#waiting): `breaker open for
   * openai/gpt-4o until 2026-…Z`, `waiting for a run slot (4 of 4 in use)`, `waiting for a slot of
   * ops (4 of 4 in use)`; absent while a try is in flight.
   */
  readonly waiting?: string;
  /** The operator asked to cancel it and the node running it has not ended it yet (several nodes). */
  readonly cancelling?: boolean;
}

/** A run in a list, a request's detail or the live log: the run with its mapping and times. */
export interface RunListItem extends RunView {
  readonly mappingId?: string;
  readonly createdAt: string;
  readonly startedAt?: string;
  readonly finishedAt?: string;
}

/** What a circuit breaker guards: a model (`provider/model`) or a channel (its id). */
export const TARGET_KINDS = ['model', 'channel'] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];

/** A circuit breaker's states (docs/runtime.md#circuit-breakers). */
export const BREAKER_STATES = ['closed', 'open', 'half-open'] as const;
export type BreakerState = (typeof BREAKER_STATES)[number];

/** A destination's circuit breaker, as `/healthz`, `GET /api/overview` and the console show it. */
export interface BreakerView {
  /** `provider/model`, or a channel's id. */
  readonly target: string;
  readonly kind: TargetKind;
  readonly state: BreakerState;
  /** Failed tries in a row. */
  readonly failures: number;
  /** While open: when its next probe may go. */
  readonly openUntil?: string;
  /** Its last failed try: a code, an HTTP status, a network error (never a server's answer). */
  readonly lastError?: string;
  /** Runs and deliveries waiting for it on this node. */
  readonly waiting: number;
}

/** A system event as the admin API shows it. */
export interface EventView {
  readonly id: string;
  readonly text: string;
  readonly createdAt: string;
  readonly consumed: boolean;
}

/** `GET /api/main/events`: the main session's events, oldest first. */
export interface MainEventsView {
  /** The newest `limit` events, oldest first. */
  readonly events: readonly EventView[];
  /** Older events are kept and not listed. */
  readonly more: boolean;
}

/** `GET /api/runs/:runId/transcript`: what a run sent and received, and its times. */
export interface RunTranscript {
  readonly runId: string;
  readonly sessionKey: string;
  readonly createdAt: string;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  readonly messages: readonly SessionMessage[];
}

/**
 * What became of the runs a request made (docs/runtime.md#request-log-and-replay): their status
 * and their replies' delivery, each `mixed` when its runs differ.
 */
export interface RunOutcome {
  readonly status: RunStatus | 'mixed';
  /** Absent while none of its runs has a delivery outcome. */
  readonly delivery?: DeliveryStatus | 'mixed';
}

/** A request log record in a list (docs/runtime.md#request-log-and-replay): no headers, no body. */
export interface RequestView {
  readonly id: string;
  readonly receivedAt: string;
  /** The hook name (the sub-path under `hooks.path`). */
  readonly path: string;
  /** The path and query as received, without `token`. */
  readonly url: string;
  /** The client's address (as `server.trustProxy` makes it). */
  readonly client?: string;
  readonly mappingId?: string;
  /** What the sender says happened (`push`, `payment_intent.succeeded`): authenticated requests only. */
  readonly eventType?: string;
  readonly status: number;
  readonly code?: string;
  /** Why it was refused: its answer's message. */
  readonly reason?: string;
  readonly eventIds: readonly string[];
  readonly runIds: readonly string[];
  readonly durationMs: number;
  /** It presented the hook token or a valid signature; false for a request refused at the door. */
  readonly authenticated: boolean;
  readonly bodyBytes: number;
  readonly truncated: boolean;
  readonly redacted: boolean;
  /** The body kept is the body received: kept at all, not cut, not redacted. */
  readonly bodyWhole: boolean;
  /** A record standing for this many more refused requests of a minute. */
  readonly moreRefused?: number;
  /** The request this one replayed. */
  readonly replayOf?: string;
  /** A replay run anew on purpose (`--force`), past the answer its idempotency key remembered. */
  readonly forced?: boolean;
  /** When a replay of this one was accepted. */
  readonly replayedAt?: string;
  /** What became of its runs; absent when it made none. */
  readonly outcome?: RunOutcome;
}

/** `GET /api/requests/:id`: the record with its headers, body, actions, runs and deliveries. */
export interface RequestDetail extends RequestView {
  /** Every header; a credential's value is `[masked]`. */
  readonly headers: Readonly<Record<string, string>>;
  /** The credential headers by name, and whether each one's check (token, signature) passed. */
  readonly credentials: Readonly<Record<string, { readonly verified: boolean }>>;
  /** The body as kept (capped, redacted): its UTF-8 text, or its bytes in base64 when they are not valid UTF-8. */
  readonly body: string;
  /** `base64`: `body` holds the bytes in base64 (they are not valid UTF-8 text). */
  readonly bodyEncoding?: 'base64';
  readonly events: readonly EventView[];
  readonly runs: readonly RunListItem[];
  /** Set when it failed on our side and its whole body was kept for replay. */
  readonly failure?: { readonly code: string; readonly error: string };
}

/** `GET /api/sessions/:key`: a session's transcript. */
export interface SessionView {
  readonly key: string;
  /** The newest `limit` messages, oldest first. */
  readonly messages: readonly SessionMessage[];
  /** Older messages are kept and not listed. */
  readonly more: boolean;
}

/** `GET /api/sessions`: sessions with a transcript, most recently active first. */
export interface SessionsView {
  readonly sessions: readonly { readonly key: string; readonly messages: number; readonly lastAt: string }[];
}

/** `GET /api/overview`: the console's health strip. */
export interface OverviewView {
  readonly requestsLastHour: { readonly total: number; readonly failed: number };
  readonly runsByStatus: Readonly<Record<string, number>>;
  /** Runs queued or executing on this node; null when the runtime is not attached. */
  readonly queueDepth: number | null;
  readonly transforms: {
    readonly calls: number;
    readonly meanMs: number | null;
    readonly p95AtMostMs: number | null;
  } | null;
  /** This node's breakers that hold tries back (open or half-open). */
  readonly breakers: readonly BreakerView[];
}

/** `GET /api/mappings`: one mapping as the console lists it. */
export interface MappingView {
  readonly id: string;
  readonly configPath: string;
  readonly path?: string;
  readonly source?: string;
  readonly headers?: readonly string[];
  readonly transform?: string;
  readonly verify?: string;
  readonly forEach?: string;
  readonly schema: boolean;
  /** How it reads its requests' event type: `header x-github-event`, `path type`, `transform`. */
  readonly eventType?: string;
  /** A preset's mapping: its preset's name (`github`, a plugin's `acme`). */
  readonly preset?: string;
  /**
   * Its fixtures, for the playground: a preset's recorded ones (`GET /api/presets/:name/fixtures/:fixture`),
   * then the config folder's own (`GET /api/mappings/:id/fixtures/:fixture`).
   */
  readonly fixtures?: readonly FixtureItem[];
}

/** A fixture, by name (its file's name without `.json`): a preset's recorded delivery, or a case of the config's folder. */
export interface FixtureItem {
  readonly name: string;
  readonly description?: string;
  /** `preset`: its preset's `fixtures/`; `folder`: `<transformsDir>/fixtures/<mapping>/`, what `hookd test` runs. */
  readonly kind: 'preset' | 'folder';
}

/** `GET /api/presets/:name/fixtures/:fixture`, `GET /api/mappings/:id/fixtures/:fixture`: a delivery, as its sender sent it. */
export interface FixtureView {
  readonly headers: Readonly<Record<string, string>>;
  /** The payload: JSON as an object, any other body as its text. */
  readonly body: unknown;
}
