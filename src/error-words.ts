/**
 * The words of the error catalogue (src/errors.ts) that its entries share: the reasons a body,
 * a model's answer or a replay is refused, and how a transform's failure and a configuration's
 * problems are written.
 */

/** Why a body is refused (INVALID_BODY's `reason`). */
export const INVALID_BODY_WORDS = {
  'not-an-object': 'body must be a JSON object',
  'malformed-request': 'malformed HTTP request',
  'length-mismatch': 'the body does not match its Content-Length',
  'bad-request': 'bad request',
} as const;

/** Why a model's answer is unusable. */
export const MODEL_ANSWER_WORDS = {
  'no-content': 'the model answered without choices[0].message.content',
  'no-text': 'the model answered without a text block in its content',
  'invalid-json': 'the model server answered with invalid JSON',
  'too-large': 'the model server answered more than 8 MiB',
  'too-deep': 'the model server answered JSON nested deeper than 64 levels',
} as const;

/** Why a logged request cannot be replayed (docs/runtime.md#request-log-and-replay), and what the words name. */
export interface ReplayRefusal {
  readonly why: keyof typeof REPLAY_REFUSAL_WORDS;
  /** How it was answered at receipt (`not-authenticated`, `body-not-read`). */
  readonly answered?: string;
  /** The mapping its path and headers select now (`signature-*`, `token-required`). */
  readonly mapping?: string;
  /** The mappings whose signature let it in. */
  readonly openedBy?: string;
}

const NO_COPY = 'no whole copy was kept (only requests that failed on our side keep one)';
const GATEWAY_KEYED = 'or the gateway token, which keys its fingerprint, changed';
/** Why a logged request cannot be replayed, in words. */
export const REPLAY_REFUSAL_WORDS = {
  'not-authenticated': (r: ReplayRefusal) => `it was refused at receipt (${r.answered}) and never authenticated`,
  'no-receipt': () => 'its record does not say what authenticated it (it was logged by an older hookd)',
  'body-not-read': (r: ReplayRefusal) => `it was refused at receipt (${r.answered}) before its body was read`,
  'body-truncated': () => `its logged body was cut at hooks.log.maxBodyBytes and ${NO_COPY}`,
  'body-redacted': () => `its logged body was redacted (hooks.log.redact) and ${NO_COPY}`,
  'body-not-kept': (r: ReplayRefusal) =>
    `it was answered ${r.answered} at receipt, which keeps no body, and ${NO_COPY}`,
  'body-lost': () =>
    `its body is no longer where its record says (the database was restored or moved without its -bodies folder) and ${NO_COPY}`,
  'copy-redacted': () =>
    'the whole copy its failure kept has hooks.log.redact paths masked: it is not the body received',
  'query-token-disabled': () => 'it was authenticated by ?token=, which hooks.allowQueryToken: false now refuses',
  'token-changed': () => `the hook token that authenticated it is not today's (${GATEWAY_KEYED})`,
  'signature-changed': (r: ReplayRefusal) =>
    `mapping ${r.mapping}'s verify (its secret) is not the one its signature held for (${GATEWAY_KEYED})`,
  'signature-not-carried': (r: ReplayRefusal) =>
    `mapping ${r.mapping}, which its path and headers select now, is opened by its own signature, which it did not carry (it was authenticated by the signature of ${r.openedBy})`,
  'token-required': (r: ReplayRefusal) =>
    `mapping ${r.mapping}, which its path and headers select now, takes only the hook token; it was authenticated by the signature of ${r.openedBy}`,
} as const;

/** Error text in answers, logs and stored failures, at most 1 KiB (docs/operations.md#limits). */
export const MAX_ERROR_CHARS = 1024;
/** `text` cut to MAX_ERROR_CHARS, marked with an ellipsis when cut. */
export const capped = (text: string) => (text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}…` : text);

/** Where in its author's source a transform failed (docs/transforms.md#when-a-transform-throws). */
export interface TransformFailureSite {
  /** The innermost frame of the author's own code: a file relative to its transforms folder. */
  readonly location?: { readonly file: string; readonly line: number; readonly column: number };
  /** `at name (file:line:column)` of the author's frames, innermost first (no bundle or sandbox frames). */
  readonly frames?: readonly string[];
  /** Three numbered lines of the author's source around `location`, the failing one marked. */
  readonly codeFrame?: string;
}

/** The values of a TRANSFORM_FAILED: what went wrong, where, and in which mapping's transform. */
export interface TransformFailure extends TransformFailureSite {
  readonly reason: string;
  readonly timedOutAfterMs?: number;
  /** The mapping whose transform failed (set by the mapping engine). */
  readonly mapping?: string;
}

/** `file:line:column: ` of a transform's failure, or nothing when it has no location. */
export const siteOf = ({ location: at }: TransformFailureSite) => (at ? `${at.file}:${at.line}:${at.column}: ` : '');

/** A configuration's problems, one a line, under its file's name. */
export const configProblems = (p: { problems: readonly string[]; file?: string }) =>
  `${p.file ? `${p.file}: ` : ''}invalid configuration:\n${p.problems.map((line) => `  - ${line}`).join('\n')}`;
