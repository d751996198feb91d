import type { RequestReceipt, StoredRequest } from '../actions/index.js';
import { hookdError, type ReplayRefusal } from '../errors.js';
import type { CredentialMark } from '../headers.js';
import type { CredentialFingerprints } from '../ingress/index.js';
import {
  classifyContentType,
  handshakeFor,
  type ParsedBody,
  parseBody,
  type SignedDelivery,
} from '../ingress/index.js';
import type { MappingEngine } from '../mapping/index.js';
import type { Handshake } from '../schemes/index.js';

/** What decides whether a logged request may be replayed: today's configuration. */
export interface ReplayRules {
  readonly mappings?: MappingEngine;
  readonly fingerprints: CredentialFingerprints;
  /** `hooks.allowQueryToken` now. */
  readonly allowQueryToken: boolean;
}

/** A logged request a replay may run: its path, URL, headers, whole body, and what it may enter. */
export interface Replayable {
  readonly subPath: string;
  readonly url: string;
  /** Every header, credentials `[masked]` (docs/security.md#what-is-masked). */
  readonly headers: Readonly<Record<string, string>>;
  readonly credentials: Readonly<Record<string, CredentialMark>>;
  readonly body: ParsedBody;
  readonly receipt: RequestReceipt;
  /**
   * The mappings its signature opens (and still opens); undefined when the hook token let it in,
   * which opens every mapping, as it does live.
   */
  readonly verified?: ReadonlySet<string>;
  /**
   * Its sender's handshake (Slack's URL check), which its signature was answered with live,
   * before any mapping: a replay answers it alike and runs nothing.
   */
  readonly handshake?: Handshake;
  /** Its sender's delivery id, when a signature that gave one let it in, with the scheme of the mapping it goes to. */
  readonly delivery?: SignedDelivery;
}

/** Statuses a request is refused with at the door, before or while it is authenticated. */
const DOOR_STATUSES = new Set([401, 403, 404, 405, 408, 413, 415, 429]);

const notAllowed = (requestId: string, refusal: ReplayRefusal) =>
  hookdError('REPLAY_NOT_ALLOWED', { requestId, refusal });

const answered = ({ status, code }: { status: number; code?: string }) => `${status}${code ? ` ${code}` : ''}`;

/**
 * The request as a replay runs it, or why it may not (docs/runtime.md#request-log-and-replay):
 * only a request that was authenticated and whose body was kept whole, into the mapping its path
 * and headers select now, under the auth rules it was let in by. A replay never does what a live
 * request with the same credentials could not.
 */
export function replayableOf(id: string, stored: StoredRequest, rules: ReplayRules): Replayable {
  const { record } = stored;
  // A sender may reuse a request id: the failure kept is this record's only when the record (the
  // newest of that id, the one its page shows) is that failure; else the record is replayed.
  const failure =
    stored.failure && (!record || (record.status >= 500 && record.code === stored.failure.code))
      ? stored.failure
      : undefined;
  // The whole body kept with a failure, else the logged one; and the receipt kept with that same
  // copy (a reused request id never lends one request's receipt to another's body).
  const source =
    failure ??
    (record && {
      subPath: record.path,
      url: record.url,
      headers: record.headers,
      credentials: record.credentials,
      body: record.body,
      receipt: record.receipt,
    });
  if (!source) throw hookdError('NOT_FOUND', { resource: 'request', id });
  const { receipt } = source;
  if (!receipt) {
    const door = !failure && record && (DOOR_STATUSES.has(record.status) || record.code === 'BUSY');
    throw notAllowed(id, door ? { why: 'not-authenticated', answered: answered(record) } : { why: 'no-receipt' });
  }
  if (!receipt.bodyRead) throw notAllowed(id, { why: 'body-not-read', answered: record ? answered(record) : '' });
  if (!failure && record?.truncated) throw notAllowed(id, { why: 'body-truncated' });
  if (!failure && record?.redacted) throw notAllowed(id, { why: 'body-redacted' });
  // A refused or 503 request keeps no body; a failure's copy with a redacted path is not the body received.
  if (!failure && record && !record.bodyWhole)
    throw notAllowed(id, { why: 'body-not-kept', answered: answered(record) });
  // A whole body read back short: the body log no longer holds it (a database restored without it).
  if (!failure && record && record.body.length !== record.bodyBytes) throw notAllowed(id, { why: 'body-lost' });
  if (failure?.redacted) throw notAllowed(id, { why: 'copy-redacted' });
  const mappingId = record?.mappingId;
  if (mappingId && rules.mappings && !rules.mappings.mappings.some((m) => m.id === mappingId))
    throw hookdError('REPLAY_MAPPING_GONE', { requestId: id, mappingId });
  const body = parsedBody(source.headers, source.body);
  const { subPath, url, headers, credentials } = source;
  const replayable = { subPath, url, headers, credentials, body, receipt };
  return { ...replayable, ...openedNow(id, replayable, rules) };
}

/** What its credentials open today: every mapping for the hook token; else the mapping it goes to, if its signature did. */
function openedNow(id: string, request: Omit<Replayable, 'verified'>, rules: ReplayRules) {
  const { receipt } = request;
  if (receipt.by === 'token') {
    if (receipt.via === 'query' && !rules.allowQueryToken) throw notAllowed(id, { why: 'query-token-disabled' });
    if (receipt.credential !== rules.fingerprints.token) throw notAllowed(id, { why: 'token-changed' });
    return {};
  }
  const openedBy = Object.keys(receipt.credentials).join(', ');
  const builtIn = request.subPath === 'wake' || request.subPath === 'agent';
  if (builtIn) throw notAllowed(id, { why: 'token-required', mapping: request.subPath, openedBy });
  const answered = handshakeHeld(request, rules);
  if (answered) return answered;
  const mapping = rules.mappings?.resolve(request.subPath, request.body.payload, request.headers);
  // No mapping takes it now: the replay answers 404 NO_MAPPING, as a live request would.
  if (!mapping) return { verified: new Set<string>() };
  const held = receipt.credentials[mapping.id];
  if (held === undefined) {
    const why = mapping.verify ? 'signature-not-carried' : 'token-required';
    throw notAllowed(id, { why, mapping: mapping.id, openedBy });
  }
  if (held !== rules.fingerprints.of(mapping)) throw notAllowed(id, { why: 'signature-changed', mapping: mapping.id });
  const delivery =
    mapping.verify && receipt.webhookId !== undefined
      ? { delivery: { webhookId: receipt.webhookId, scheme: mapping.verify.scheme } }
      : {};
  return { verified: new Set([mapping.id]), ...delivery };
}

/**
 * The handshake a signed request was answered with live, before any mapping: asked of the
 * verifiers of its path whose signature it carries, unchanged today.
 */
function handshakeHeld(request: Omit<Replayable, 'verified'>, rules: ReplayRules) {
  const { receipt } = request;
  if (receipt.by !== 'signature' || !rules.mappings) return undefined;
  const verifiers = rules.mappings.verifiersFor(request.subPath);
  const held = verifiers.filter((m) => receipt.credentials[m.id] === rules.fingerprints.of(m)).map((m) => m.id);
  const verified = { mappings: new Set(held) };
  const handshake = handshakeFor(verifiers, verified, request.body.payload);
  return handshake ? { verified: verified.mappings, handshake } : undefined;
}

/** The body parsed as it was at receipt (it was read and parsed then: a 415 or 400 now is the replay's answer). */
function parsedBody(headers: Readonly<Record<string, string>>, raw: Buffer): ParsedBody {
  const contentType = headers['content-type'];
  const kind = classifyContentType(contentType);
  if (kind === undefined) throw hookdError('UNSUPPORTED_MEDIA_TYPE', { contentType: String(contentType) });
  if (raw.length === 0) return { payload: {}, rawBody: raw, payloadIsJsonOfRawBody: false };
  const outcome = parseBody(kind, raw);
  if (!outcome.ok) throw outcome.error;
  return outcome.body;
}
