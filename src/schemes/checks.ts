import { createHmac, hash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Verification } from './scheme.js';

/** What the schemes share to check a signature: reading a header, an HMAC, a constant-time compare, a timestamp. */

const DEFAULT_TOLERANCE_S = 300;

/** `verify.toleranceSeconds`, for the schemes that sign a timestamp (default 300). */
export const toleranceSchema = { type: 'integer', minimum: 0 } as const;

/** A header's value, the first one when it is repeated. */
export function headerOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** An HMAC of `data` under `key`, more of it added by `.update()`. */
export const hmac = (algorithm: string, key: string | Buffer, data: Buffer | string) =>
  createHmac(algorithm, key).update(data);

const digest = (value: string) => hash('sha256', value, 'buffer');

/** Constant-time equality of two strings of any length (hashing first, so lengths do not leak either). */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/** Every signature was checked and none matched: the sender's secret differs from the mapping's. */
export const MISMATCH = 'no signature matched (is the secret the same on both sides?)';

/** A refusal, and why (never the expected value). */
export const fail = (reason: string): Verification => ({ ok: false, reason });

/** A signature that held, with the sender's id of the message when it gave one. */
export const held = (webhookId: string | undefined): Verification => ({
  ok: true,
  ...(webhookId ? { webhookId } : {}),
});

/** Undefined when the timestamp is fresh; else why not, with the tolerance (never the expected value). */
export function staleTimestamp(
  timestamp: string | undefined,
  toleranceSeconds: number | undefined,
  nowSeconds: number,
): string | undefined {
  const t = Number(timestamp);
  const tolerance = toleranceSeconds ?? DEFAULT_TOLERANCE_S;
  if (!Number.isInteger(t)) return 'the timestamp is not a whole number of seconds';
  const off = nowSeconds - t;
  if (Math.abs(off) <= tolerance) return undefined;
  return `the timestamp is ${Math.abs(off)} s ${off > 0 ? 'old' : 'in the future'}; the tolerance is ${tolerance} s`;
}
