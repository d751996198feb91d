import { setTimeout as sleep } from 'node:timers/promises';
import { type BackoffBounds, backoffMs } from '../backoff.js';
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
          if (statusCode >= 200 && statusCode < 300) return;
          // 409 for another body: this key was accepted before (flags changed since): delivered.
          // 409 while the first is still in flight: not yet; retry.
          if (statusCode === 409 && !answer.includes('"IDEMPOTENCY_IN_FLIGHT"')) return;
          error = `the hook answered ${statusCode}: ${answer.slice(0, 200)}`;
        } catch (err) {
          if (signal.aborted) break;
          error = `the hook is unreachable: ${(err as Error).message}`;
        }
        options.onError(error);
        log.warn({ attempt, err: error }, 'mail batch not accepted; retrying');
        await pause(backoffMs(attempt, options.backoff));
      }
      throw new Error('stopped');
    },
  };
}
