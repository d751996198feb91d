import { type HookdError, isHookdError } from '../errors.js';

/**
 * What `hookd try` and `hookd test` print of a request's error (docs/transforms.md#when-a-transform-throws):
 * the message with its code and status; for a transform that threw, where its author's code
 * threw, the frames and the code frame; for a payload the schema refused, every problem.
 */

/** A payload's problem against its mapping's schema. */
export interface SchemaProblemView {
  readonly pointer: string;
  readonly problem: string;
}

/** `{ code, message, location?, frames?, codeFrame?, problems? }`: the error as JSON. */
export function structuredError(e: HookdError, problems?: readonly SchemaProblemView[]): Record<string, unknown> {
  const error = { code: e.code, message: e.message, ...(problems && problems.length > 0 ? { problems } : {}) };
  if (!isHookdError(e, 'TRANSFORM_FAILED')) return error;
  const { location, frames, codeFrame } = e.params;
  return {
    ...error,
    ...(location ? { location } : {}),
    ...(frames ? { frames } : {}),
    ...(codeFrame ? { codeFrame } : {}),
  };
}

/** The error's headline for people: its message, code and status. */
export const errorHeadline = (e: HookdError): string => `${e.message} (${e.code}, HTTP ${e.statusCode})`;

/** What follows the headline: every schema problem when there are several, a failed transform's frames and code frame. */
export function errorDetails(e: HookdError, problems?: readonly SchemaProblemView[]): string[] {
  const lines: string[] = [];
  if (problems && problems.length > 1) {
    lines.push(`every problem the schema finds (${problems.length}):`);
    for (const p of problems) lines.push(`  ${p.pointer || '(the payload)'}: ${p.problem}`);
  }
  if (isHookdError(e, 'TRANSFORM_FAILED')) {
    for (const frame of e.params.frames ?? []) lines.push(`    ${frame}`);
    if (e.params.codeFrame) lines.push('', ...e.params.codeFrame.split('\n'));
  }
  return lines;
}
