import { createHmac } from 'node:crypto';
import type { RequestOpening, RequestReceipt } from '../actions/index.js';
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

const tokenReceipts = new WeakMap<CredentialFingerprints, Map<string, RequestReceipt>>();

/**
 * The receipt of a request let in by the hook token presented `via` there, before (`bodyRead`
 * false) or once its body was read: one frozen object per way and state, shared by every such
 * request, so that none is built per request and its stored text is written once
 * (src/store/receipts.ts).
 */
export function tokenReceipt(
  via: TokenSource,
  bodyRead: boolean,
  fingerprints: CredentialFingerprints,
): RequestReceipt {
  let known = tokenReceipts.get(fingerprints);
  if (!known) {
    known = new Map();
    tokenReceipts.set(fingerprints, known);
  }
  const key = `${via}:${bodyRead}`;
  let receipt = known.get(key);
  if (!receipt) {
    receipt = Object.freeze({ ...openedByToken(via, fingerprints), bodyRead });
    known.set(key, receipt);
  }
  return receipt;
}

/** `receipt` once its request's body was read. */
export function bodyReadReceipt(receipt: RequestReceipt, fingerprints: CredentialFingerprints): RequestReceipt {
  if (receipt.bodyRead) return receipt;
  const shared = receipt.by === 'token' && receipt.webhookId === undefined && receipt.replayKey === undefined;
  return shared ? tokenReceipt(receipt.via, true, fingerprints) : { ...receipt, bodyRead: true };
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
