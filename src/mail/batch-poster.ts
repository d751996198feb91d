import { setTimeout as sleep } from 'node:timers/promises';
import { type BackoffBounds, backoffMs } from '../backoff.js';
import { hookdError } from '../errors.js';
import type { Logger } from '../log.js';
import { undiciRequest as request } from '../undici.js';
import type { UidRange } from './cursor-store.js';
import type { MailMessage } from './message.js';

/** One batch of parsed messages, named by the UIDVALIDITY and UID range it was cut from. */
export interface MailBatch extends UidRange {
  readonly uidValidity: string;
  readonly messages: readonly MailMessage[];
}

/** Posts batches to the hook until they count as delivered. */
export interface BatchPoster {
  /** Resolves once the hook has the batch; retries until then; rejects once stopped. */
  post(batch: MailBatch): Promise<void>;
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

/** A poster that sends each batch under an Idempotency-Key derived from its UID range. */
export function createBatchPoster(options: BatchPosterOptions): BatchPoster {
  const { account, mailbox, signal, log } = options;
  const pause = (ms: number) => sleep(ms, undefined, { signal }).catch(() => undefined);

  async function send(key: string, body: string): Promise<{ statusCode: number; answer: string }> {
    const res = await request(options.hookUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${options.hookToken}`,
        'content-type': 'application/json',
        'idempotency-key': key,
      },
      body,
      signal: AbortSignal.any([signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]),
    });
    return { statusCode: res.statusCode, answer: await res.body.text() };
  }

  return {
    async post(batch) {
      const body = JSON.stringify({
        source: 'mail',
        account,
        historyId: String(batch.lastUid),
        messages: batch.messages,
      });
      const key = `mail:${account}:${mailbox}:${batch.uidValidity}:${batch.firstUid}-${batch.lastUid}`;
      for (let attempt = 0; !signal.aborted; attempt++) {
        let error: string;
        try {
          const { statusCode, answer } = await send(key, body);
          if (isBatchDelivered(statusCode, answer)) return;
          error = `the hook answered ${statusCode}: ${answer.slice(0, 200)}`;
        } catch (err) {
          if (signal.aborted) break;
          error = `the hook is unreachable: ${(err as Error).message}`;
        }
        options.onError(error);
        log.warn({ attempt, err: error }, 'mail batch not accepted; retrying');
        await pause(backoffMs(attempt, options.backoff));
      }
      throw hookdError('SHUTTING_DOWN', { what: 'mail delivery' });
    },
  };
}
