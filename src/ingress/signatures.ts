import type { IncomingHttpHeaders } from 'node:http';
import type { CompiledMapping } from '../mapping/index.js';
import { type Handshake, handshakeOf, signatureHeadersOf, verifySignature } from '../schemes/index.js';
import type { SignedDelivery } from './idempotency.js';

/** The mappings whose signature holds, and the sender's webhook id to dedupe on. */
export interface VerifiedWebhook {
  readonly mappings: ReadonlySet<string>;
  /** The sender's id of this delivery, and the scheme whose check gave it (its dedupe key's scope). */
  readonly delivery?: SignedDelivery;
  /** The credential headers whose check passed (a stored record marks them verified). */
  readonly verifiedHeaders: ReadonlySet<string>;
}

/** Why a mapping's signature did not hold (never an expected value). */
export interface SignatureFailure {
  readonly mapping: string;
  readonly reason: string;
}

/** No mapping's signature held: why, per mapping, to answer and log. */
export interface UnverifiedWebhook {
  readonly failures: readonly SignatureFailure[];
}

/** Checks the request against each mapping's `verify`. */
export function verifyWebhook(
  verifiers: readonly CompiledMapping[],
  headers: IncomingHttpHeaders,
  rawBody: Buffer,
): VerifiedWebhook | UnverifiedWebhook {
  const mappings = new Set<string>();
  const verifiedHeaders = new Set<string>();
  const failures: SignatureFailure[] = [];
  let delivery: SignedDelivery | undefined;
  for (const mapping of verifiers) {
    if (!mapping.verify) continue;
    const result = verifySignature(mapping.verify, headers, rawBody);
    if (!result.ok) {
      failures.push({ mapping: mapping.id, reason: result.reason });
      continue;
    }
    mappings.add(mapping.id);
    for (const name of signatureHeadersOf(mapping.verify)) if (headers[name] !== undefined) verifiedHeaders.add(name);
    if (!delivery && result.webhookId) delivery = { webhookId: result.webhookId, scheme: mapping.verify.scheme };
  }
  if (mappings.size === 0) return { failures };
  return { mappings, verifiedHeaders, ...(delivery ? { delivery } : {}) };
}

/**
 * The answer a verified request gets before any mapping when it is its sender's handshake (Slack's
 * URL check): asked of the scheme of each mapping whose signature held.
 */
export function handshakeFor(
  verifiers: readonly CompiledMapping[],
  verified: Pick<VerifiedWebhook, 'mappings'>,
  payload: unknown,
): Handshake | undefined {
  for (const mapping of verifiers) {
    if (!mapping.verify || !verified.mappings.has(mapping.id)) continue;
    const handshake = handshakeOf(mapping.verify, payload);
    if (handshake) return handshake;
  }
  return undefined;
}
