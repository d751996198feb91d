/**
 * Schema migrations, applied in order inside one transaction each; `PRAGMA user_version`
 * records how many have run. Append only: never edit a migration that has shipped.
 */
/** The credential headers masked in records stored before they were (the migration that added `credentials`). */
const CREDENTIAL_NAMES =
  "'authorization', 'x-service-token', 'cookie', 'proxy-authorization', 'x-gitlab-token', 'x-hub-signature', 'x-hub-signature-256', 'stripe-signature', 'x-slack-signature', 'webhook-signature', 'svix-signature'";

export const migrations: readonly string[] = [
  `
  CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    session_key TEXT NOT NULL,
    text TEXT NOT NULL,
    origin TEXT NOT NULL,
    trusted INTEGER NOT NULL DEFAULT 0,
    content_source TEXT NOT NULL DEFAULT 'webhook',
    request_id TEXT,
    created_at INTEGER NOT NULL,
    consumed_at INTEGER
  );
  CREATE INDEX events_pending ON events (session_key, consumed_at, seq);

  CREATE TABLE runs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    session_key TEXT NOT NULL,
    name TEXT,
    message TEXT NOT NULL,
    model TEXT NOT NULL,
    thinking TEXT,
    timeout_seconds INTEGER,
    wake_mode TEXT NOT NULL,
    deliver INTEGER NOT NULL,
    channel TEXT NOT NULL,
    recipient TEXT,
    allow_unsafe INTEGER NOT NULL DEFAULT 0,
    content_source TEXT NOT NULL DEFAULT 'webhook',
    status TEXT NOT NULL,
    output TEXT,
    error TEXT,
    delivery TEXT,
    request_id TEXT,
    created_at INTEGER NOT NULL,
    started_at INTEGER,
    finished_at INTEGER
  );
  CREATE INDEX runs_status ON runs (status, seq);

  CREATE TABLE messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    session_key TEXT NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    run_id TEXT,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX messages_session ON messages (session_key, seq);

  CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  `,
  `
  ALTER TABLE runs ADD COLUMN summarized_at INTEGER;
  UPDATE runs SET summarized_at = finished_at WHERE status NOT IN ('queued', 'running');
  DROP INDEX runs_status;
  CREATE INDEX runs_pending ON runs (summarized_at, seq);
  `,
  `
  CREATE TABLE failed_deliveries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    request_id TEXT,
    sub_path TEXT NOT NULL,
    url TEXT NOT NULL,
    headers TEXT NOT NULL,
    body BLOB NOT NULL,
    code TEXT NOT NULL,
    error TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    replayed_at INTEGER
  );
  `,
  `
  CREATE TABLE idempotency (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    body_hash TEXT NOT NULL,
    status INTEGER NOT NULL,
    response TEXT,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (scope, key)
  ) WITHOUT ROWID;
  CREATE INDEX idempotency_expiry ON idempotency (expires_at);
  ALTER TABLE runs ADD COLUMN mapping_id TEXT;
  `,
  `
  ALTER TABLE events RENAME COLUMN trusted TO allow_unsafe_external_content;
  ALTER TABLE runs RENAME COLUMN allow_unsafe TO allow_unsafe_external_content;
  ALTER TABLE runs RENAME COLUMN recipient TO "to";
  ALTER TABLE failed_deliveries RENAME TO failed_requests;
  `,
  `
  CREATE TABLE requests (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL,
    received_at INTEGER NOT NULL,
    path TEXT NOT NULL,
    url TEXT NOT NULL,
    mapping_id TEXT,
    status INTEGER NOT NULL,
    code TEXT,
    event_ids TEXT,
    run_ids TEXT,
    duration_ms INTEGER NOT NULL,
    headers TEXT NOT NULL,
    body BLOB NOT NULL,
    body_bytes INTEGER NOT NULL,
    truncated INTEGER NOT NULL DEFAULT 0,
    redacted INTEGER NOT NULL DEFAULT 0,
    replay_of TEXT,
    replayed_at INTEGER
  );
  CREATE INDEX requests_id ON requests (id);
  CREATE INDEX requests_received ON requests (received_at);
  CREATE INDEX failed_requests_request ON failed_requests (request_id);

  CREATE TABLE console_sessions (
    token_hash TEXT PRIMARY KEY,
    csrf TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX console_sessions_expiry ON console_sessions (expires_at);
  `,
  `
  CREATE TABLE run_attempts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    at INTEGER NOT NULL,
    kind TEXT NOT NULL,
    n INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    status INTEGER,
    error TEXT
  );
  CREATE INDEX run_attempts_run ON run_attempts (run_id, seq);
  `,
  // A request's receipt (what let it in: the credential's fingerprint, its delivery id), kept with
  // its record and its kept failure, decides what a replay of it may do; a replay run anew on
  // purpose (--force) says so.
  `
  ALTER TABLE requests ADD COLUMN receipt TEXT;
  ALTER TABLE requests ADD COLUMN forced INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE failed_requests ADD COLUMN receipt TEXT;
  `,
  `
  CREATE TABLE alerts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    at INTEGER NOT NULL,
    kind TEXT NOT NULL,
    condition TEXT NOT NULL,
    source TEXT NOT NULL,
    count INTEGER NOT NULL,
    last_error TEXT,
    link TEXT NOT NULL,
    text TEXT NOT NULL,
    key TEXT UNIQUE,
    recovers TEXT UNIQUE
  );
  CREATE INDEX alerts_source ON alerts (condition, source, seq);
  `,
  // The request log and the kept failures: the client's address, refused requests (no body,
  // a reason, an aggregated count), whether a request was authenticated and its body kept whole,
  // credential headers by name only (docs/runtime.md#request-log-and-replay). Credential values
  // stored before are masked; an index for pruning failures by age.
  `
  ALTER TABLE requests ADD COLUMN client_address TEXT;
  ALTER TABLE requests ADD COLUMN authenticated INTEGER NOT NULL DEFAULT 1;
  ALTER TABLE requests ADD COLUMN body_whole INTEGER NOT NULL DEFAULT 1;
  ALTER TABLE requests ADD COLUMN reason TEXT;
  ALTER TABLE requests ADD COLUMN credentials TEXT;
  ALTER TABLE requests ADD COLUMN more_refused INTEGER;
  ALTER TABLE failed_requests ADD COLUMN client_address TEXT;
  ALTER TABLE failed_requests ADD COLUMN credentials TEXT;
  ALTER TABLE failed_requests ADD COLUMN redacted INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX failed_requests_created ON failed_requests (created_at);
  UPDATE requests SET headers = (SELECT json_group_object(key, CASE WHEN key IN (CREDENTIALS) THEN '[masked]' ELSE value END)
      FROM json_each(requests.headers))
    WHERE EXISTS (SELECT 1 FROM json_each(requests.headers) WHERE key IN (CREDENTIALS));
  UPDATE failed_requests SET headers = (SELECT json_group_object(key, CASE WHEN key IN (CREDENTIALS) THEN '[masked]' ELSE value END)
      FROM json_each(failed_requests.headers))
    WHERE EXISTS (SELECT 1 FROM json_each(failed_requests.headers) WHERE key IN (CREDENTIALS));
  `.replaceAll('CREDENTIALS', CREDENTIAL_NAMES),
  // A request's event type, as its mapping reads it (docs/mappings.md#event-types).
  `
  ALTER TABLE requests ADD COLUMN event_type TEXT;
  `,
  // Refused requests' records: a bound of their own, pruned by their own index; they keep header
  // names and the URL's path only, as records stored before are cut to
  // (docs/runtime.md#request-log-and-replay).
  `
  CREATE INDEX requests_refused ON requests (received_at, seq) WHERE NOT authenticated;
  UPDATE requests SET
    headers = (SELECT json_group_object(key, CASE WHEN value = '[masked]' THEN value ELSE '' END)
      FROM json_each(requests.headers)),
    url = substr(CASE WHEN instr(url, '?') > 0 THEN substr(url, 1, instr(url, '?') - 1) ELSE url END, 1, 256)
    WHERE NOT authenticated;
  `,
  // Runs that wait (a breaker holds them) say why and until when; the operator may cancel a run
  // (docs/runtime.md#waiting, docs/runtime.md#cancel).
  `
  ALTER TABLE runs ADD COLUMN waiting TEXT;
  ALTER TABLE runs ADD COLUMN not_before INTEGER;
  ALTER TABLE runs ADD COLUMN cancel_requested_at INTEGER;
  `,
  // A record's body is kept in the body log beside the database (src/store/sqlite/bodies.ts):
  // its position and length there. Records stored before keep theirs in `body`.
  `
  ALTER TABLE requests ADD COLUMN body_at INTEGER;
  ALTER TABLE requests ADD COLUMN body_len INTEGER;
  `,
];
