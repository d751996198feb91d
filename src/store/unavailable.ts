import { type HookdError, hookdError } from '../errors.js';

/** What a 503 `STORE_UNAVAILABLE` asks the sender to wait. */
const RETRY_AFTER_S = 5;

/** SQLite result codes of a store that cannot write now (a full disk, a lock, an I/O error, a read-only file). */
const SQLITE_UNAVAILABLE = /^SQLITE_(FULL|BUSY|LOCKED|IOERR|READONLY|CANTOPEN)/;
/** Node's codes for a database out of reach. */
const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE', 'EAI_AGAIN']);
/** Node's codes for a disk that cannot take a write now (the body log's segments beside SQLite). */
const DISK = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EROFS']);
/** PostgreSQL SQLSTATE classes of a server out of reach or refusing work: connection, resources, shutdown, disk full. */
const PG_UNAVAILABLE = /^(08|53|57P|58)/;

/** True when `err` says the store could not take a write now, not that the write itself is wrong. */
export function isStoreUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (
    typeof code === 'string' &&
    (SQLITE_UNAVAILABLE.test(code) || NETWORK.has(code) || DISK.has(code) || PG_UNAVAILABLE.test(code))
  )
    return true;
  // node-postgres's own words for a connection lost or never made.
  return /Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error/.test(
    err.message,
  );
}

/** Failures of a commit whose last statement was sent and never answered. */
const inDoubt = new WeakSet<object>();

/**
 * Marks `err`, the failure of a commit's last statement (a `COMMIT`, or a statement that commits
 * on its own), as a commit whose outcome is unknown when it is a store out of reach and the
 * server never answered: a frozen or partitioned server may have committed it, or may commit it
 * once it reads it. A server's own refusal (an SQLSTATE with its severity) committed nothing, and
 * neither did a statement pg never sent (a connection already broken). Returns `err`.
 */
export function commitInDoubt(err: unknown): unknown {
  if (!(err instanceof Error) || !isStoreUnavailable(err)) return err;
  if (typeof (err as { severity?: unknown }).severity === 'string') return err;
  if (/not queryable/.test(err.message)) return err;
  inDoubt.add(err);
  return err;
}

/** True when `err` is a commit whose outcome is unknown (commitInDoubt). */
export function isCommitInDoubt(err: unknown): boolean {
  return typeof err === 'object' && err !== null && inDoubt.has(err);
}

/**
 * What a failure says, in one line: its message; for Node's AggregateError of a host tried on
 * each of its addresses (`localhost`: ::1, then 127.0.0.1), whose own message is empty, the first
 * message of the errors it gathers, else its code.
 */
export function causeOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  if (err.message) return err.message;
  const gathered: unknown = (err as { errors?: unknown }).errors;
  const first = Array.isArray(gathered) ? gathered.find((e) => e instanceof Error && e.message) : undefined;
  return (first as Error | undefined)?.message ?? String((err as { code?: unknown }).code ?? err.name);
}

/**
 * The fields a log line gives a failure: a store out of reach by its cause alone (its outage is
 * logged once, and a stack per tick of every timer says nothing more), anything else as `err`.
 */
export function failureFields(err: unknown): { cause: string } | { err: unknown } {
  return isStoreUnavailable(err) ? { cause: causeOf(err) } : { err };
}

/**
 * The error an accept answers with: 503 `STORE_UNAVAILABLE` for a store out of service (nothing
 * was accepted), 503 `COMMIT_UNCONFIRMED` for a commit sent and never confirmed (it may have been:
 * docs/errors.md), both with Retry-After; else `err`.
 */
export function acceptError(err: unknown): unknown {
  if (!isStoreUnavailable(err)) return err;
  const options = { cause: err, headers: { 'retry-after': String(RETRY_AFTER_S) } };
  if (isCommitInDoubt(err)) {
    const unconfirmed: HookdError<'COMMIT_UNCONFIRMED'> = hookdError('COMMIT_UNCONFIRMED', undefined, options);
    return unconfirmed;
  }
  const unavailable: HookdError<'STORE_UNAVAILABLE'> = hookdError('STORE_UNAVAILABLE', undefined, options);
  return unavailable;
}
