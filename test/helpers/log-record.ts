import type { RequestLogRecord } from '../../src/store/index.js';

/** A request log record `id` of an authenticated 200 to `/hooks/x` with `body`, kept whole; `fields` override. */
export function logRecord(id: string, body: string | Buffer, fields: Partial<RequestLogRecord> = {}): RequestLogRecord {
  return {
    id,
    receivedAt: 1000,
    path: 'x',
    url: '/hooks/x',
    status: 200,
    eventIds: [],
    runIds: [],
    durationMs: 1,
    headers: {},
    credentials: {},
    authenticated: true,
    body: Buffer.from(body),
    bodyBytes: Buffer.byteLength(body),
    truncated: false,
    redacted: false,
    bodyWhole: true,
    ...fields,
  };
}
