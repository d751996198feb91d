/**
 * The PostgreSQL schema (docs/scale.md), applied by `migratePostgres` under an advisory lock, one
 * transaction per migration; `hookd_schema.version` records how many have run. Append only:
 * never edit a migration that has shipped. The tables mirror the SQLite store's (times are
 * epoch milliseconds, JSON is text), plus what several nodes need: run leases and the leases
 * of the single-owner jobs (the main session's heartbeat, the mail watcher).
 */
/** The credential headers masked in records stored before they were. */
const CREDENTIAL_NAMES =
  "ARRAY['authorization', 'x-service-token', 'cookie', 'proxy-authorization', 'x-gitlab-token', 'x-hub-signature', 'x-hub-signature-256', 'stripe-signature', 'x-slack-signature', 'webhook-signature', 'svix-signature']";

export const pgMigrations: readonly string[] = [
  `
  CREATE TABLE events (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    session_key TEXT NOT NULL,
    text TEXT NOT NULL,
    origin TEXT NOT NULL,
    allow_unsafe_external_content BOOLEAN NOT NULL DEFAULT FALSE,
    content_source TEXT NOT NULL DEFAULT 'webhook',
    request_id TEXT,
    created_at BIGINT NOT NULL,
    consumed_at BIGINT
  );
  CREATE INDEX events_pending ON events (session_key, consumed_at, seq);

  CREATE TABLE runs (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    session_key TEXT NOT NULL,
    name TEXT,
    message TEXT NOT NULL,
    model TEXT NOT NULL,
    thinking TEXT,
    timeout_seconds INTEGER,
    wake_mode TEXT NOT NULL,
    deliver BOOLEAN NOT NULL,
    channel TEXT NOT NULL,
    "to" TEXT,
    allow_unsafe_external_content BOOLEAN NOT NULL DEFAULT FALSE,
    content_source TEXT NOT NULL DEFAULT 'webhook',
    status TEXT NOT NULL,
    output TEXT,
    error TEXT,
    delivery TEXT,
    request_id TEXT,
    mapping_id TEXT,
    created_at BIGINT NOT NULL,
    started_at BIGINT,
    finished_at BIGINT,
    summarized_at BIGINT,
    -- The node executing the run and until when; another node may take it once that passed.
    lease_owner TEXT,
    lease_until BIGINT
  );
  CREATE INDEX runs_pending ON runs (summarized_at, seq);
  CREATE INDEX runs_claimable ON runs (seq) WHERE status IN ('queued', 'running');

  CREATE TABLE messages (
    seq BIGSERIAL PRIMARY KEY,
    session_key TEXT NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    run_id TEXT,
    created_at BIGINT NOT NULL
  );
  CREATE INDEX messages_session ON messages (session_key, seq);

  CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );

  CREATE TABLE failed_requests (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    request_id TEXT,
    sub_path TEXT NOT NULL,
    url TEXT NOT NULL,
    headers TEXT NOT NULL,
    body BYTEA NOT NULL,
    code TEXT NOT NULL,
    error TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    replayed_at BIGINT
  );
  CREATE INDEX failed_requests_request ON failed_requests (request_id);

  CREATE TABLE idempotency (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    body_hash TEXT NOT NULL,
    status INTEGER NOT NULL,
    response TEXT,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (scope, key)
  );
  CREATE INDEX idempotency_expiry ON idempotency (expires_at);

  CREATE TABLE requests (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL,
    received_at BIGINT NOT NULL,
    path TEXT NOT NULL,
    url TEXT NOT NULL,
    mapping_id TEXT,
    status INTEGER NOT NULL,
    code TEXT,
    event_ids TEXT,
    run_ids TEXT,
    duration_ms INTEGER NOT NULL,
    headers TEXT NOT NULL,
    body BYTEA NOT NULL,
    body_bytes INTEGER NOT NULL,
    truncated BOOLEAN NOT NULL DEFAULT FALSE,
    redacted BOOLEAN NOT NULL DEFAULT FALSE,
    replay_of TEXT,
    replayed_at BIGINT
  );
  CREATE INDEX requests_id ON requests (id);
  CREATE INDEX requests_received ON requests (received_at);

  CREATE TABLE console_sessions (
    token_hash TEXT PRIMARY KEY,
    csrf TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
  );
  CREATE INDEX console_sessions_expiry ON console_sessions (expires_at);

  -- Jobs one node runs at a time (the heartbeat of the main session, the mail watcher).
  CREATE TABLE leases (
    name TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    until BIGINT NOT NULL
  );
  `,
  // The claim takes only the oldest open run of a session key (runs of one session run one after
  // another across nodes): this index answers "is there an older open run of this session".
  `
  CREATE INDEX runs_session_open ON runs (session_key, seq) WHERE summarized_at IS NULL;
  `,
  // A run's turn (its user and assistant messages) is stored once, even when a node that lost the
  // run's lease records it after the node that took the run over.
  `
  CREATE UNIQUE INDEX messages_run_turn ON messages (run_id, role) WHERE run_id IS NOT NULL;
  `,
  // A failed try of a run's model call or delivery, one row each (docs/runtime.md#attempts).
  `
  CREATE TABLE run_attempts (
    seq BIGSERIAL PRIMARY KEY,
    run_id TEXT NOT NULL,
    at BIGINT NOT NULL,
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
  ALTER TABLE requests ADD COLUMN forced BOOLEAN NOT NULL DEFAULT FALSE;
  ALTER TABLE failed_requests ADD COLUMN receipt TEXT;
  `,
  // Alert messages, append only (docs/operations.md#alerts): a firing's key and a recovery's
  // firing are unique, so that nodes deciding the same message at once store (and send) it once.
  `
  CREATE TABLE alerts (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    at BIGINT NOT NULL,
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
  ALTER TABLE requests ADD COLUMN authenticated BOOLEAN NOT NULL DEFAULT TRUE;
  ALTER TABLE requests ADD COLUMN body_whole BOOLEAN NOT NULL DEFAULT TRUE;
  ALTER TABLE requests ADD COLUMN reason TEXT;
  ALTER TABLE requests ADD COLUMN credentials TEXT;
  ALTER TABLE requests ADD COLUMN more_refused INTEGER;
  ALTER TABLE failed_requests ADD COLUMN client_address TEXT;
  ALTER TABLE failed_requests ADD COLUMN credentials TEXT;
  ALTER TABLE failed_requests ADD COLUMN redacted BOOLEAN NOT NULL DEFAULT FALSE;
  CREATE INDEX failed_requests_created ON failed_requests (created_at);
  UPDATE requests SET headers = (SELECT jsonb_object_agg(key, CASE WHEN key = ANY(CREDENTIALS) THEN '"[masked]"'::jsonb
      ELSE value END) FROM jsonb_each(requests.headers::jsonb))::text
    WHERE requests.headers::jsonb ?| CREDENTIALS;
  UPDATE failed_requests SET headers = (SELECT jsonb_object_agg(key, CASE WHEN key = ANY(CREDENTIALS) THEN '"[masked]"'::jsonb
      ELSE value END) FROM jsonb_each(failed_requests.headers::jsonb))::text
    WHERE failed_requests.headers::jsonb ?| CREDENTIALS;
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
    headers = COALESCE((SELECT jsonb_object_agg(key, CASE WHEN value = '"[masked]"'::jsonb THEN value ELSE '""'::jsonb END)
      FROM jsonb_each(requests.headers::jsonb)), '{}'::jsonb)::text,
    url = left(split_part(url, '?', 1), 256)
    WHERE NOT authenticated;
  `,
  // Runs that wait (a breaker holds them) say why and until when; the operator may cancel a run
  // (docs/runtime.md#waiting, docs/runtime.md#cancel).
  `
  ALTER TABLE runs ADD COLUMN waiting TEXT;
  ALTER TABLE runs ADD COLUMN not_before BIGINT;
  ALTER TABLE runs ADD COLUMN cancel_requested_at BIGINT;
  CREATE INDEX runs_open_source ON runs ((COALESCE(mapping_id, '')), seq) WHERE summarized_at IS NULL;
  `,
];
