// The payload Standard Webhooks recommends, as this preset reads it (validated before the
// transform runs; the transform types its payload from it). Only data: read as JSON5, never run.
export default {
  type: 'object',
  properties: {
    type: { type: 'string' },
    timestamp: { type: 'string' },
    data: { type: 'object', properties: { id: { type: 'string' } } },
  },
} as const;
