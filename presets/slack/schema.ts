// The parts of a Slack Events API request this preset reads (validated before the transform
// runs; the transform types its payload from it). Only data: read as JSON5, never run.
export default {
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string' },
    team_id: { type: 'string' },
    event_id: { type: 'string' },
    challenge: { type: 'string' },
    event: {
      type: 'object',
      properties: {
        type: { type: 'string' },
        subtype: { type: 'string' },
        bot_id: { type: 'string' },
        user: { type: 'string' },
        text: { type: 'string' },
        channel: { type: 'string' },
        channel_type: { type: 'string' },
        ts: { type: 'string' },
        thread_ts: { type: 'string' },
      },
    },
  },
} as const;
