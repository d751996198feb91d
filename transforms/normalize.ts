// A generic normaliser for senders with no mapping of their own (monitoring, scripts,
// home automation): finds a title and a body in common field names; critical alerts wake
// the main session at once, everything else is a wake for the next heartbeat.
import { defineTransform } from 'hookd/transform';

type Payload = Record<string, unknown>;

const TITLE_FIELDS = ['title', 'subject', 'summary', 'alertname', 'name', 'event'];
const BODY_FIELDS = ['message', 'text', 'body', 'description', 'details', 'content'];
const URGENT = new Set(['critical', 'fatal', 'emergency', 'high', 'error', 'firing', 'down']);

function pick(payload: Payload, fields: string[]): string | undefined {
  for (const field of fields) {
    const value = payload[field];
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
  }
  return undefined;
}

export default defineTransform<Payload | null>(({ payload, path }) => {
  // A body that is not an object (null, a list, a string) has no fields to find.
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return undefined;
  const title = pick(payload, TITLE_FIELDS);
  const body = pick(payload, BODY_FIELDS);
  if (!title && !body) return undefined; // fall back to the mapping's own templates
  const level = String(payload.severity ?? payload.level ?? payload.status ?? payload.state ?? '').toLowerCase();
  const source = typeof payload.source === 'string' ? payload.source : path;
  const detail = title && body && body !== title ? `${title} — ${body}` : (title ?? body);
  const text = [`[${source}]`, level ? `(${level})` : '', detail].filter(Boolean).join(' ');
  return { kind: 'wake', text, mode: URGENT.has(level) ? 'now' : 'next-heartbeat' };
});
