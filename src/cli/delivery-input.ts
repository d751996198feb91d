import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { hookdError } from '../errors.js';
import type { CliIo } from './io.js';

/**
 * The request `hookd try` and `hookd send` make (docs/cli.md#hookd-try): a body from
 * `--payload FILE`, or a recorded delivery from `--fixture FILE`, and `--header K:V` on top.
 */

/** What the body and headers come from. */
export interface DeliveryOptions {
  readonly payload?: string;
  readonly fixture?: string;
  readonly header: readonly string[];
}

/** A request to make: its raw body and its headers (lower-case names). */
export interface DeliveryInput {
  readonly raw: Buffer;
  readonly headers: Record<string, string>;
}

/** Headers a recorded delivery may hold that describe its old connection, not the body: never sent again. */
const CONNECTION_HEADERS = new Set(['content-length', 'host', 'transfer-encoding', 'connection']);

const FIXTURE_SHAPE =
  'a fixture: { "headers"?: {…}, "payload": … } (a folder fixture) or { "headers": {…}, "body": … }';

/** `K:V` headers as an object with lower-case names. */
export function parseHeaders(entries: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const entry of entries) {
    const at = entry.indexOf(':');
    if (at <= 0) throw hookdError('CLI_USAGE', { option: '--header', expected: 'K:V', got: entry });
    headers[entry.slice(0, at).trim().toLowerCase()] = entry.slice(at + 1).trim();
  }
  return headers;
}

/**
 * A fixture file: a folder fixture (`transforms/fixtures/<mapping>/<case>.json`: `{ headers?,
 * payload, expect? }`) or a preset's recorded delivery (`{ headers, body }`, `body` an object
 * for JSON or the raw text). Either way, its headers and its body as sent.
 */
export function readFixture(file: string): DeliveryInput {
  let fixture: { headers?: unknown; payload?: unknown; body?: unknown };
  try {
    fixture = JSON.parse(readFileSync(file, 'utf8')) as typeof fixture;
  } catch (err) {
    throw hookdError('CLI_USAGE', { option: '--fixture', expected: FIXTURE_SHAPE, got: (err as Error).message });
  }
  const shaped =
    fixture !== null &&
    typeof fixture === 'object' &&
    'payload' in fixture !== 'body' in fixture &&
    (fixture.headers === undefined || (typeof fixture.headers === 'object' && fixture.headers !== null));
  if (!shaped) throw hookdError('CLI_USAGE', { option: '--fixture', expected: FIXTURE_SHAPE, got: file });
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(fixture.headers ?? {}))
    if (!CONNECTION_HEADERS.has(name.toLowerCase())) headers[name.toLowerCase()] = String(value);
  const body = 'body' in fixture ? fixture.body : fixture.payload;
  return { raw: Buffer.from(typeof body === 'string' && 'body' in fixture ? body : JSON.stringify(body)), headers };
}

/** The body and headers of `--payload` or `--fixture` (not both; `empty` when neither), `--header` last. */
export function readDelivery(options: DeliveryOptions, io: CliIo, empty?: Buffer): DeliveryInput {
  if (options.payload !== undefined && options.fixture !== undefined)
    throw hookdError('CLI_USAGE', { option: '--fixture', expected: 'either --fixture or --payload', got: 'both' });
  const given = parseHeaders(options.header);
  if (options.fixture !== undefined) {
    const fixture = readFixture(resolve(io.cwd, options.fixture));
    return { raw: fixture.raw, headers: { ...fixture.headers, ...given } };
  }
  if (options.payload === undefined) {
    if (empty) return { raw: empty, headers: given };
    throw hookdError('CLI_USAGE', {
      option: '--payload',
      expected: 'a body: --payload FILE or --fixture FILE',
      got: '',
    });
  }
  // `-` is standard input, as with curl's `-d @-`.
  return { raw: readFileSync(options.payload === '-' ? 0 : resolve(io.cwd, options.payload)), headers: given };
}
