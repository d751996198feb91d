import { createHmac } from 'node:crypto';
import type { RequestOpening } from '../actions/index.js';
import type { CompiledMapping } from '../mapping/index.js';
import type { TokenSource } from './auth.js';

/**
 * Fingerprints of the credentials that let hook requests in, kept in their receipts
 * (docs/runtime.md#request-log-and-replay): HMACs keyed by the gateway token, so that the store
 * holds neither a credential nor anything to test guesses of one against. A replay compares them
 * with today's: a credential changed since (a rotated hook token, a new `verify` secret) no
 * longer opens what it opened.
 */
export interface CredentialFingerprints {
  /** The hook token's. */
  readonly token: string;
  /** A mapping's `verify` (scheme, secret and the rest); '' for a mapping without one. */
  of(mapping: CompiledMapping): string;
}

/** Fingerprints keyed by `gatewayToken` (empty ones without it: nothing can be replayed then). */
export function createCredentialFingerprints(
  gatewayToken: string | undefined,
  hookToken: string,
): CredentialFingerprints {
  const fingerprint = (...parts: string[]) =>
    gatewayToken === undefined
      ? ''
      : createHmac('sha256', gatewayToken).update(parts.join('\u0000')).digest('base64url').slice(0, 22);
  const byMapping = new WeakMap<CompiledMapping, string>();
  return {
    token: fingerprint('hook-token', hookToken),
    of(mapping) {
      const known = byMapping.get(mapping);
      if (known !== undefined) return known;
      const settings = mapping.verify ? Object.entries(mapping.verify).sort(([a], [b]) => (a < b ? -1 : 1)) : [];
      const value = mapping.verify ? fingerprint('verify', mapping.id, JSON.stringify(settings)) : '';
      byMapping.set(mapping, value);
      return value;
    },
  };
}

/** Let in by the hook token, presented `via` there. */
export function openedByToken(via: TokenSource, fingerprints: CredentialFingerprints): RequestOpening {
  return { by: 'token', via, credential: fingerprints.token };
}

/** Let in by the signatures of `verified` (mapping ids) among `verifiers`. */
export function openedBySignature(
  verifiers: readonly CompiledMapping[],
  verified: ReadonlySet<string>,
  fingerprints: CredentialFingerprints,
): RequestOpening {
  const credentials: Record<string, string> = {};
  for (const mapping of verifiers) if (verified.has(mapping.id)) credentials[mapping.id] = fingerprints.of(mapping);
  return { by: 'signature', credentials };
}
