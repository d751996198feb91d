import type { ImapFlowError } from 'imapflow';
import { type BackoffBounds, backoffMs } from '../backoff.js';
import { bounded } from './message.js';

/** The steps of a session, named in its errors: where it was when it failed. */
export type SessionStep = 'connect and log in' | 'open the mailbox' | 'search' | 'fetch' | 'post' | 'wait for mail';

/**
 * Back-off after a refused login: 5 minutes doubling to 30. A wrong password stays wrong, and
 * providers lock or throttle an account that fails to log in every few seconds.
 */
export const AUTH_BACKOFF: BackoffBounds = { minMs: 5 * 60_000, maxMs: 30 * 60_000 };

/**
 * What went wrong, for the log and `lastError`: the step, the message, and what the IMAP
 * server said (its text and response code, a refused login, a BYE's reason), which imapflow
 * keeps beside a message that alone says only "Command failed".
 * @example describeImapError(err, 'open the mailbox')
 * // 'open the mailbox failed: Command failed; the server said "Mailbox doesn\'t exist: Nope" [NONEXISTENT]'
 */
export function describeImapError(err: unknown, step: SessionStep): string {
  const e = (err ?? {}) as ImapFlowError;
  let text = `${step} failed: ${e.message ?? String(err)}`;
  const said = e.responseText ?? (typeof e.response === 'string' ? e.response : undefined);
  if (said && !text.includes(said)) text += `; the server said "${bounded(said, 300)}"`;
  if (e.serverResponseCode) text += ` [${e.serverResponseCode}]`;
  if (e.reason) text += `; the server closed the connection: ${bounded(e.reason, 300)}`;
  if (e.authenticationFailed) text += '; the login was refused';
  if (e.code && !text.includes(e.code)) text += ` (${e.code})`;
  return text;
}

/** Whether the error is a refused login (the server's AUTHENTICATIONFAILED, or imapflow's flag). */
export function isLoginRefused(err: unknown): boolean {
  const e = (err ?? {}) as ImapFlowError;
  return e.authenticationFailed === true || e.serverResponseCode === 'AUTHENTICATIONFAILED';
}

/** The wait before reconnect number `attempt`: `AUTH_BACKOFF` after a refused login, else `bounds`. */
export function reconnectWaitMs(attempt: number, bounds: BackoffBounds, loginRefused: boolean): number {
  return loginRefused
    ? Math.max(backoffMs(attempt, bounds), backoffMs(attempt, AUTH_BACKOFF))
    : backoffMs(attempt, bounds);
}
