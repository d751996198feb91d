// The payload of an uptime monitor's webhook: hookd validates every delivery against it
// (`schema: 'transforms/uptime.schema.ts'` on the mapping: 400 PAYLOAD_INVALID otherwise), and
// uptime.ts types its payload from the same object with json-schema-to-ts. hookd reads this
// file as JSON5 data and never runs it: it holds only `export default { … } as const`.
export default {
  type: 'object',
  required: ['monitor', 'status'],
  properties: {
    monitor: { type: 'string', minLength: 1 },
    status: { type: 'string', enum: ['up', 'down'] },
    url: { type: 'string' },
    responseMs: { type: 'integer', minimum: 0 },
  },
} as const;
