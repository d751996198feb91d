// Alertmanager's webhook payload (version 4), as this preset reads it (validated before the
// transform runs; the transform types its payload from it). Only data: read as JSON5, never run.
export default {
  type: 'object',
  required: ['status', 'alerts'],
  properties: {
    status: { type: 'string', enum: ['firing', 'resolved'] },
    receiver: { type: 'string' },
    alerts: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          status: { type: 'string' },
          labels: { type: 'object', additionalProperties: { type: 'string' } },
          annotations: { type: 'object', additionalProperties: { type: 'string' } },
          startsAt: { type: 'string' },
          generatorURL: { type: 'string' },
          fingerprint: { type: 'string' },
        },
      },
    },
    groupLabels: { type: 'object', additionalProperties: { type: 'string' } },
    commonLabels: { type: 'object', additionalProperties: { type: 'string' } },
    commonAnnotations: { type: 'object', additionalProperties: { type: 'string' } },
    externalURL: { type: 'string' },
    truncatedAlerts: { type: 'integer' },
  },
} as const;
