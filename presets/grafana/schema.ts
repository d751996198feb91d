// Grafana alerting's webhook payload, as this preset reads it (validated before the transform
// runs; the transform types its payload from it). Only data: read as JSON5, never run.
export default {
  type: 'object',
  required: ['status', 'alerts'],
  properties: {
    status: { type: 'string', enum: ['firing', 'resolved'] },
    title: { type: 'string' },
    alerts: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          status: { type: 'string' },
          labels: { type: 'object', additionalProperties: { type: 'string' } },
          annotations: { type: 'object', additionalProperties: { type: 'string' } },
          startsAt: { type: 'string' },
          valueString: { type: 'string' },
          panelURL: { type: 'string' },
          dashboardURL: { type: 'string' },
          generatorURL: { type: 'string' },
          fingerprint: { type: 'string' },
        },
      },
    },
    commonLabels: { type: 'object', additionalProperties: { type: 'string' } },
    externalURL: { type: 'string' },
  },
} as const;
