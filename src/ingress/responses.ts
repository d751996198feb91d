import type { Accepted } from '../actions/index.js';

/** A response to send (or to remember for an idempotent replay): status and JSON body, null for 204. */
export interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown> | null;
}

/** The success body of one accepted action (docs/http.md). */
export function responseFor(accepted: Accepted): Record<string, unknown> {
  return accepted.kind === 'wake'
    ? { ok: true, mode: accepted.mode, eventId: accepted.eventId }
    : { ok: true, runId: accepted.runId, sessionKey: accepted.sessionKey };
}

/** A fan-out's body: arrays of event ids and/or run ids (with their session keys). */
export function fanOutResponse(accepted: readonly Accepted[]): Record<string, unknown> {
  const eventIds: string[] = [];
  const runIds: string[] = [];
  const sessionKeys: string[] = [];
  for (const a of accepted) {
    if (a.kind === 'wake') eventIds.push(a.eventId);
    else {
      runIds.push(a.runId);
      sessionKeys.push(a.sessionKey);
    }
  }
  return {
    ok: true,
    ...(eventIds.length > 0 ? { eventIds } : {}),
    ...(runIds.length > 0 ? { runIds, sessionKeys } : {}),
  };
}

/** 204 for nothing; 200/202 with one body, or arrays for a fan-out (202 when any run is among them). */
export function answerFor(accepted: readonly Accepted[], fanOut: boolean): Answer {
  if (accepted.length === 0) return { status: 204, body: null };
  const status = accepted.some((a) => a.kind === 'agent') ? 202 : 200;
  if (!fanOut && accepted.length === 1) return { status, body: responseFor(accepted[0] as Accepted) };
  return { status, body: fanOutResponse(accepted) };
}
