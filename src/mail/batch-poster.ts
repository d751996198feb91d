import { setTimeout as sleep } from 'node:timers/promises';
import { type BackoffBounds, backoffMs } from '../backoff.js';
import { hookdError } from '../errors.js';
import type { Logger } from '../log.js';
import { maskerOf } from '../secret-text.js';
import { undiciRequest as request } from '../undici.js';
import type { UidRange } from './cursor-store.js';
import type { MailMessage } from './message.js';

/** One batch of parsed messages, named by the UIDVALIDITY and UID range it was cut from. */
export interface MailBatch extends UidRange {
  readonly uidValidity: string;
  readonly messages: readonly MailMessage[];
}

/** Posts batches to the hook until they count as delivered, or are refused for good. */
export interface BatchPoster {
  /**
   * Resolves once the hook has the batch, with how many of its messages it took: a batch the
   * hook refuses for good (`isRefusedForGood`) is posted again one message at a time, and a
   * message refused alone is skipped (logged at error with its UID). Retries anything else;
   * rejects once stopped.
   */
  post(batch: MailBatch): Promise<number>;
}

export interface BatchPosterOptions {
  readonly account: string;
  readonly mailbox: string;
  /** The gateway's `/hooks/mail`. */
  readonly hookUrl: string;
  readonly hookToken: string;
  readonly backoff: BackoffBounds;
  /** Stops the retries and aborts the request in flight. */
  readonly signal: AbortSignal;
  readonly log: Logger;
  /** Told why each attempt was not accepted (the watcher's `lastError`). */
  readonly onError: (message: string) => void;
  /** What is masked in what the hook answered (a proxy may quote it): by default the hook token. */
  readonly mask?: (text: string) => string;
}

const REQUEST_TIMEOUT_MS = 30_000;

/**
 * Whether the hook's answer means the batch is delivered: any 2xx, or a 409 other than
 * `IDEMPOTENCY_IN_FLIGHT` (the key was accepted before, with flags changed since). A 409
 * whose body is not JSON, or has no string `code`, counts as such an other 409: delivered.
 * @example isBatchDelivered(409, '{"ok":false,"error":"…","code":"IDEMPOTENCY_IN_FLIGHT"}') // false
 */
export function isBatchDelivered(statusCode: number, body: string): boolean {
  if (statusCode >= 200 && statusCode < 300) return true;
  if (statusCode !== 409) return false;
  return errorCode(body) !== 'IDEMPOTENCY_IN_FLIGHT';
}

/**
 * Whether the hook refuses this body whatever the retries: malformed (400), too large (413),
 * of a type or shape it does not take (415, 422). Not 401, 403 or 404: those refuse the
 * watcher's token or the preset, not the mail, and are retried until the configuration is
 * fixed; nor 408, 409 or 429, which pass.
 * @example isRefusedForGood(413) // true
 */
export function isRefusedForGood(statusCode: number): boolean {
  return statusCode === 400 || statusCode === 413 || statusCode === 415 || statusCode === 422;
}

/** An answer that refuses the watcher rather than the mail (docs/mail.md#exactly-once-in-practice). */
const refusesTheWatcher = (statusCode: number) => statusCode === 401 || statusCode === 403 || statusCode === 404;

/** The `code` of a `{ ok: false, error, code }` body, if the body is one. */
function errorCode(body: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { code } = parsed as { code?: unknown };
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

/** The UID of a message whose id is `<UIDVALIDITY>-<UID>`. */
export const uidOf = (message: MailMessage) => Number(message.id.slice(message.id.lastIndexOf('-') + 1));

/** One POST of `body` under `key`: the status and the answer's text. */
async function send(options: BatchPosterOptions, key: string, body: string) {
  const res = await request(options.hookUrl, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${options.hookToken}`,
      'content-type': 'application/json',
      'idempotency-key': key,
    },
    body,
    signal: AbortSignal.any([options.signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]),
  });
  return { statusCode: res.statusCode, answer: await res.body.text() };
}

/**
 * Posts the batch until the hook takes it (`undefined`) or refuses it for good (the refusal);
 * retries anything else with back-off; rejects once stopped.
 */
async function postUntilAnswered(options: BatchPosterOptions, batch: MailBatch): Promise<string | undefined> {
  const { account, mailbox, signal, log } = options;
  const mask = options.mask ?? maskerOf([options.hookToken]);
  const body = JSON.stringify({ source: 'mail', account, historyId: String(batch.lastUid), messages: batch.messages });
  const key = `mail:${account}:${mailbox}:${batch.uidValidity}:${batch.firstUid}-${batch.lastUid}`;
  for (let attempt = 0; !signal.aborted; attempt++) {
    let error: string;
    let level: 'warn' | 'error' = 'warn';
    try {
      const { statusCode, answer } = await send(options, key, body);
      if (isBatchDelivered(statusCode, answer)) return undefined;
      error = mask(`the hook answered ${statusCode}: ${answer.slice(0, 200)}`);
      if (isRefusedForGood(statusCode)) return error;
      if (refusesTheWatcher(statusCode)) level = 'error';
    } catch (err) {
      if (signal.aborted) break;
      error = mask(`the hook is unreachable: ${(err as Error).message}`);
    }
    options.onError(error);
    log[level](
      { attempt, err: error, firstUid: batch.firstUid, lastUid: batch.lastUid },
      'mail batch not accepted; retrying',
    );
    await sleep(backoffMs(attempt, options.backoff), undefined, { signal }).catch(() => undefined);
  }
  throw hookdError('SHUTTING_DOWN', { what: 'mail delivery' });
}

/** A poster that sends each batch under an Idempotency-Key derived from its UID range. */
export function createBatchPoster(options: BatchPosterOptions): BatchPoster {
  const { log } = options;
  async function post(batch: MailBatch): Promise<number> {
    const refusal = await postUntilAnswered(options, batch);
    if (refusal === undefined) return batch.messages.length;
    const [only] = batch.messages;
    if (only && batch.messages.length === 1) {
      const uid = uidOf(only);
      log.error({ uid, err: refusal }, 'mail message refused by the hook for good; skipped');
      options.onError(`message UID ${uid} was skipped: ${refusal}`);
      return 0;
    }
    log.warn(
      { firstUid: batch.firstUid, lastUid: batch.lastUid, err: refusal },
      'mail batch refused by the hook for good; posting its messages one at a time',
    );
    let took = 0;
    for (const message of batch.messages) {
      const uid = uidOf(message);
      took += await post({ uidValidity: batch.uidValidity, firstUid: uid, lastUid: uid, messages: [message] });
    }
    return took;
  }
  return { post };
}
