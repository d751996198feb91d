import { localTime } from '../src/time-format.js';
import type { RequestView, RunOutcome } from '../src/views.js';

/** `2025-05-01 14:03:22`: the local date and time, as the CLI prints it too. */
export const dateTime = (iso: string): string => localTime(iso);

/** A duration in the unit that reads best: `840 ms`, `12.4 s`, `3 min 5 s`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** The colour class of an HTTP status. */
export function statusClass(status: number): string {
  if (status >= 500) return 'bad';
  if (status >= 400) return 'warn';
  return 'good';
}

/** What a request's runs came to, as a row shows it: `ok · sent`, `running`, `error`, `mixed`. */
export function outcomeText(r: Pick<RequestView, 'outcome' | 'runIds'>): string {
  // A request the live stream just brought: its runs were accepted a moment ago.
  const outcome: RunOutcome | undefined = r.outcome ?? (r.runIds.length > 0 ? { status: 'queued' } : undefined);
  if (!outcome) return '—';
  const delivery = outcome.delivery ? ` · delivery ${outcome.delivery}` : '';
  return `${outcome.status}${delivery}`;
}

/** The colour class of an outcome: failed ones red, unfinished ones amber. */
export function outcomeClass(r: Pick<RequestView, 'outcome' | 'runIds'>): string {
  const o = r.outcome;
  if (!o) return r.runIds.length > 0 ? 'warn' : '';
  if (o.status === 'error' || o.status === 'timeout' || o.delivery === 'failed') return 'bad';
  if (o.status === 'ok') return o.delivery === 'mixed' ? 'warn' : 'good';
  return 'warn';
}

/**
 * Why a logged request cannot be replayed, or undefined when it can: only a request that was
 * let in and whose body was kept whole (docs/runtime.md#request-log-and-replay). `failureKept`:
 * a failed request's whole copy was kept beside its record (the request's page knows).
 */
export function replayBlocker(r: RequestView, failureKept = false): string | undefined {
  if (!r.authenticated) return 'refused at the door: nothing was let in to replay';
  if (r.bodyWhole || failureKept) return undefined;
  if (r.truncated) return 'its body was cut for the log (hooks.log.maxBodyBytes)';
  if (r.redacted) return 'its body was redacted for the log (hooks.log.redact)';
  return 'its body was not kept';
}

/** The length of the UTF-8 sequence at `at` when it is a valid one (shortest form, no surrogate), else 0. */
function sequenceAt(bytes: Uint8Array, at: number): number {
  const lead = bytes[at] as number;
  const length =
    lead < 0x80
      ? 1
      : lead >= 0xc2 && lead <= 0xdf
        ? 2
        : lead >= 0xe0 && lead <= 0xef
          ? 3
          : lead >= 0xf0 && lead <= 0xf4
            ? 4
            : 0;
  if (length <= 1) return length;
  for (let i = 1; i < length; i++) if (((bytes[at + i] ?? 0) & 0xc0) !== 0x80) return 0;
  const second = bytes[at + 1] as number;
  if (lead === 0xe0 && second < 0xa0) return 0; // overlong
  if (lead === 0xed && second > 0x9f) return 0; // a surrogate
  if (lead === 0xf0 && second < 0x90) return 0; // overlong
  if (lead === 0xf4 && second > 0x8f) return 0; // past U+10FFFF
  return length;
}

const hex = (byte: number) => `\\x${byte.toString(16).padStart(2, '0')}`;

/**
 * Bytes that are not all valid UTF-8, as text a page can show (docs/console.md#pages): each
 * valid character as it is, every other byte and every control character but new lines and
 * tabs as `\xNN`, a backslash as `\\`, so that nothing is hidden and nothing is ambiguous.
 */
export function bytesAsText(bytes: Uint8Array): string {
  const decoder = new TextDecoder();
  let out = '';
  for (let at = 0; at < bytes.length; ) {
    const length = sequenceAt(bytes, at);
    const byte = bytes[at] as number;
    if (length === 0) out += hex(byte);
    else if (length > 1) out += decoder.decode(bytes.subarray(at, at + length));
    else if (byte === 0x5c) out += '\\\\';
    else if ((byte < 0x20 && byte !== 0x0a && byte !== 0x09) || byte === 0x7f) out += hex(byte);
    else out += String.fromCharCode(byte);
    at += Math.max(1, length);
  }
  return out;
}

/** base64 text as its bytes. */
export function base64Bytes(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}
