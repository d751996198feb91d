import type { IncomingHttpHeaders } from 'node:http';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';

/**
 * A verified webhook: the sender's id of this message to dedupe on (GitHub's delivery id, a
 * Standard Webhooks message id, Stripe's event id), when the sender gives one; else why not.
 */
export type Verification =
  | { readonly ok: true; readonly webhookId?: string }
  | { readonly ok: false; readonly reason: string };

/** What every scheme's settings hold: a mapping's `verify.scheme` and its secret. */
export interface SchemeConfig {
  readonly scheme: string;
  readonly secret: string;
}

/** A scheme's settings: the common ones and those of its `configSchema`. */
export type ConfigOf<P extends Readonly<Record<string, JSONSchema>>> = SchemeConfig &
  FromSchema<{ type: 'object'; additionalProperties: false; properties: P }>;

/** A delivery to sign (`hookd send`, a recorded fixture replayed). */
export interface SignOptions {
  /** The delivery's time, where the scheme signs one. */
  readonly nowSeconds: number;
  /** The delivery's id, where the scheme carries one. */
  readonly id: string;
  /** A recorded delivery's headers (lower-cased): its id and header style are kept when re-signed. */
  readonly recorded?: Readonly<Record<string, string>>;
}

/** What a stored record, a template, a transform and a log line never show (docs/security.md#what-is-masked). */
export interface SchemeMasks {
  /** Header names masked whatever a mapping's settings (lower case). */
  readonly headers: readonly string[];
  /** Prefixes of header names masked too (a sender's family of signature headers). */
  readonly prefixes?: readonly string[];
  /** Headers that carry the secret itself, not a proof of it: redacted wherever a log line holds headers. */
  readonly secrets?: readonly string[];
}

/** An answer a sender expects before any mapping, once its signature holds (Slack's URL check). */
export interface Handshake {
  /** The request's event type in the log, the sender's own name for the handshake. */
  readonly eventType: string;
  /** The JSON body of the 200 answer. */
  readonly body: Readonly<Record<string, unknown>>;
}

/**
 * One signature scheme (docs/security.md#provider-signatures): its part of a mapping's `verify`,
 * how a sender signs and how hookd checks, and the headers it reads, writes and masks. Adding
 * one is a file in src/schemes/ and a line in the registry (docs/presets.md#adding-a-signature-scheme).
 */
export interface SignatureScheme<C extends SchemeConfig = SchemeConfig> {
  /** Its `verify.scheme`; also the name of its module (`src/schemes/<name>.ts`). */
  readonly name: string;
  /** Its keys of `verify` besides `scheme` and `secret`, as JSON Schema properties. */
  readonly configSchema: Readonly<Record<string, object>>;
  /** Every header it reads or writes (lower case). */
  readonly headers: readonly string[];
  readonly masks: SchemeMasks;
  /** Checks the signature over the raw bytes; never reveals the expected value. */
  verify(config: C, headers: IncomingHttpHeaders, raw: Buffer, nowSeconds: number): Verification;
  /** The headers a sender would put on `raw`, computed the way the provider's own library does. */
  sign(config: C, raw: Buffer, options: SignOptions): Record<string, string>;
  /** The credential headers its check reads: a record marks them verified when it passes. */
  signatureHeaders(config: C): readonly string[];
  /** The answer a verified request gets before any mapping, when it is a handshake. */
  handshake?(payload: unknown): Handshake | undefined;
  /** What is wrong with a secret of the form it expects, checked at config load; never quotes it. */
  secretProblem?(secret: string): string | undefined;
}
