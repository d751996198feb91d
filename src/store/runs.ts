import type { AgentAction } from '../actions/index.js';
import type { DeliveryOutcome, DeliveryStatus, RunStatus } from '../views.js';
import type { RunAttempt } from './attempts.js';

export type { DeliveryOutcome, RunStatus } from '../views.js';

export interface RunRecord extends Omit<AgentAction, 'kind'> {
  readonly id: string;
  readonly status: RunStatus;
  readonly output?: string;
  readonly error?: string;
  readonly delivery?: DeliveryOutcome;
  readonly createdAt: number;
  readonly startedAt?: number;
  readonly finishedAt?: number;
  /** When its summary was posted: the run is over (a later redelivery aside). */
  readonly summarizedAt?: number;
  /** Why it waits, as stored while a breaker holds it (docs/runtime.md#waiting). */
  readonly waiting?: string;
  /** Not to be tried before this time (the end of the wait it stands in). */
  readonly notBefore?: number;
  /** When the operator asked to cancel it (docs/runtime.md#cancel). */
  readonly cancelRequestedAt?: number;
}

/** A row as the database answers it. */
export interface RunRow {
  id: string;
  session_key: string;
  name: string | null;
  message: string;
  model: string;
  thinking: string | null;
  timeout_seconds: number | null;
  wake_mode: string;
  deliver: number | boolean;
  channel: string;
  to: string | null;
  allow_unsafe_external_content: number | boolean;
  content_source: string;
  status: RunStatus;
  output: string | null;
  error: string | null;
  delivery: string | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  mapping_id: string | null;
  summarized_at: number | null;
  waiting: string | null;
  not_before: number | null;
  cancel_requested_at: number | null;
}

/** RunRow's columns, in its order. */
const RUN_ROW_KEYS = [
  'id',
  'session_key',
  'name',
  'message',
  'model',
  'thinking',
  'timeout_seconds',
  'wake_mode',
  'deliver',
  'channel',
  'to',
  'allow_unsafe_external_content',
  'content_source',
  'status',
  'output',
  'error',
  'delivery',
  'created_at',
  'started_at',
  'finished_at',
  'mapping_id',
  'summarized_at',
  'waiting',
  'not_before',
  'cancel_requested_at',
] as const satisfies readonly (keyof RunRow)[];
/** Fails to compile while RunRow has a column the list above lacks. */
const everyRunColumn: [Exclude<keyof RunRow, (typeof RUN_ROW_KEYS)[number]>] extends [never] ? true : never = true;
void everyRunColumn;

/** RunRow's columns as a select list: a run read as an array of values in this order (runRowOf). */
export const RUN_ROW_COLUMNS = RUN_ROW_KEYS.map((key) => `"${key}"`).join(', ');

/**
 * The row of RUN_ROW_COLUMNS' values. Read as an array (better-sqlite3's raw mode), a run costs
 * about 1.5 µs less than as an object built by the driver, one property at a time.
 */
export function runRowOf(values: readonly unknown[]): RunRow {
  const row: Record<string, unknown> = {};
  for (let i = 0; i < RUN_ROW_KEYS.length; i++) row[RUN_ROW_KEYS[i] as string] = values[i];
  return row as unknown as RunRow;
}

const optional = <K extends string, V>(key: K, value: V | null): { [P in K]?: V } =>
  (value === null ? {} : { [key]: value }) as { [P in K]?: V };

/** A row of `runs` (SQLite's or PostgreSQL's: a flag is 0/1 or a boolean) as a record. */
export function runOf(row: RunRow): RunRecord {
  return {
    id: row.id,
    sessionKey: row.session_key,
    ...optional('name', row.name),
    message: row.message,
    model: row.model,
    ...optional('thinking', row.thinking as AgentAction['thinking'] | null),
    ...optional('timeoutSeconds', row.timeout_seconds),
    wakeMode: row.wake_mode as AgentAction['wakeMode'],
    deliver: Boolean(row.deliver),
    channel: row.channel as AgentAction['channel'],
    ...optional('to', row.to),
    allowUnsafeExternalContent: Boolean(row.allow_unsafe_external_content),
    contentSource: row.content_source as AgentAction['contentSource'],
    status: row.status,
    ...optional('output', row.output),
    ...optional('error', row.error),
    ...optional('delivery', row.delivery === null ? null : (JSON.parse(row.delivery) as DeliveryOutcome)),
    createdAt: row.created_at,
    ...optional('startedAt', row.started_at),
    ...optional('finishedAt', row.finished_at),
    ...optional('mappingId', row.mapping_id),
    ...optional('summarizedAt', row.summarized_at),
    ...optional('waiting', row.waiting),
    ...optional('notBefore', row.not_before),
    ...optional('cancelRequestedAt', row.cancel_requested_at),
  };
}

/**
 * What starting an unfinished run needs to know of it; the rest is read when it starts. A
 * gateway restarted on a backlog of 50,000 runs read each whole (its 2 KB message) to keep five
 * fields.
 */
export type UnfinishedRun = Pick<RunRecord, 'id' | 'sessionKey' | 'mappingId' | 'model' | 'status'>;

/** The columns of `runs` an UnfinishedRun is read from. */
export const UNFINISHED_COLUMNS = 'id, session_key, mapping_id, model, status';

/** A row of UNFINISHED_COLUMNS as an unfinished run. */
export function unfinishedOf(
  row: Pick<RunRow, 'id' | 'session_key' | 'mapping_id' | 'model' | 'status'>,
): UnfinishedRun {
  return {
    id: row.id,
    sessionKey: row.session_key,
    ...optional('mappingId', row.mapping_id),
    model: row.model,
    status: row.status,
  };
}

/** A run as the sink stores it: the agent action, its id, request and time. */
export type NewRun = Omit<AgentAction, 'kind'> & {
  readonly id: string;
  readonly requestId?: string;
  readonly createdAt: number;
};

/** The run a hook request's agent action queues (both stores' sinks). */
export function hookRun(action: AgentAction, id: string, requestId: string, createdAt: number): NewRun {
  // Every field named, so that every run has one shape: a rest-and-spread copy of the action
  // built an object of its own shape per run, slow to build and slower still for runRow to read.
  return {
    id,
    sessionKey: action.sessionKey,
    name: action.name,
    message: action.message,
    model: action.model,
    thinking: action.thinking,
    timeoutSeconds: action.timeoutSeconds,
    wakeMode: action.wakeMode,
    deliver: action.deliver,
    channel: action.channel,
    to: action.to,
    allowUnsafeExternalContent: action.allowUnsafeExternalContent,
    contentSource: action.contentSource,
    requestId,
    createdAt,
    mappingId: action.mappingId,
  };
}

/** A run's final status and what it produced. */
export interface RunResult {
  readonly status: Exclude<RunStatus, 'queued' | 'running' | 'cancelled'>;
  readonly output?: string;
  readonly error?: string;
}

/** Agent runs, from `queued` to a final status. */
export interface RunRepository {
  insert(run: NewRun): void;
  get(id: string): RunRecord | undefined;
  /** Runs not yet summarized in the main session (queued, running, or stopped before their summary), oldest first. */
  unfinished(): UnfinishedRun[];
  markRunning(id: string, at: number): void;
  finish(id: string, result: RunResult, at: number): void;
  markSummarized(id: string, at: number): void;
  recordDelivery(id: string, delivery: DeliveryOutcome): void;
  /**
   * Records why an unfinished run waits, and until when (docs/runtime.md#waiting); null clears
   * it once it tries again.
   */
  recordWait(id: string, wait: RunWait | null): void;
  /**
   * Ends an unsummarized run as `cancelled` with `error`, whatever it had reached (a reply is
   * kept), its delivery (unless one was recorded) `skipped` because `cancelled`; its summary
   * follows in the same commit (docs/runtime.md#cancel).
   */
  cancel(id: string, error: string, at: number): void;
  /** Asks the node running an unsummarized run to cancel it (several nodes, docs/scale.md). */
  requestCancel(id: string, at: number): void;
  /** Records a failed try of a run's model call or delivery (docs/runtime.md#attempts). */
  recordAttempt(attempt: RunAttempt): void;
  /** The failed tries of these runs, oldest first. */
  attempts(runIds: readonly string[]): RunAttempt[];
  countByStatus(): Record<string, number>;
  /** Newest first: by status, older than a position (the cursor of the page before). */
  list(filter: RunListFilter): (RunRecord & { readonly seq: number })[];
  /** The status and delivery status of these runs, in one query (any order; unknown ids left out). */
  outcomes(runIds: readonly string[]): RunStatusRow[];
}

/** The delivery outcome of a run cancelled before one was recorded, as stored. */
export const CANCELLED_DELIVERY = JSON.stringify({ status: 'skipped', reason: 'cancelled' });

/** Why a run waits, as stored: the reason shown, and when the wait ends when that is known. */
export interface RunWait {
  readonly reason: string;
  readonly until?: number;
}

/** A run's status and its delivery's, as a request's outcome sums them up. */
export interface RunStatusRow {
  readonly id: string;
  readonly status: RunStatus;
  readonly delivery?: DeliveryStatus;
}

/** A row of an outcomes query (both stores): the delivery's status read out of its JSON. */
export function runStatusOf(row: { id: string; status: RunStatus; delivery: string | null }): RunStatusRow {
  return {
    id: row.id,
    status: row.status,
    ...(row.delivery === null ? {} : { delivery: row.delivery as DeliveryStatus }),
  };
}

export interface RunListFilter {
  /** `failed`: ended with error or timeout, or its delivery failed. */
  readonly status?: RunStatus | 'failed';
  /** Only the runs of this mapping (its id). */
  readonly mapping?: string;
  readonly beforeSeq?: number;
  /** Only runs after this one: a filtered list looks at a window of runs at a time. */
  readonly afterSeq?: number;
  readonly limit: number;
}

/** The columns a new run is inserted with (its status is `queued`), in `runRow`'s order; both stores. */
export const RUN_COLUMNS = `id, session_key, name, message, model, thinking, timeout_seconds, wake_mode, deliver,
  channel, "to", allow_unsafe_external_content, content_source, request_id, created_at, mapping_id`;

/** A new run's values for an insert; flags as 0/1, which SQLite and PostgreSQL both take. */
export function runRow(run: NewRun): unknown[] {
  return [
    run.id,
    run.sessionKey,
    run.name ?? null,
    run.message,
    run.model,
    run.thinking ?? null,
    run.timeoutSeconds ?? null,
    run.wakeMode,
    run.deliver ? 1 : 0,
    run.channel,
    run.to ?? null,
    run.allowUnsafeExternalContent ? 1 : 0,
    run.contentSource,
    run.requestId ?? null,
    run.createdAt,
    run.mappingId ?? null,
  ];
}
