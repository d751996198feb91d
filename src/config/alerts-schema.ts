/**
 * `hooks.alerts` (docs/operations.md#alerts): which failures send a message to the operator's
 * chat, how many make an alert and within what window. Part of the config schema (schema.ts).
 */

const WINDOW = 'a duration such as 30s, 10m, 1h';
const window = (fallback: string) =>
  ({ type: 'string', pattern: '^[1-9][0-9]*(ms|s|m|h|d)$', description: WINDOW, default: fallback }) as const;
const enabled = { type: 'boolean', default: true } as const;

/** N failures of one source within a window. */
const countCondition = (count: number, within: string) =>
  ({
    type: 'object',
    additionalProperties: false,
    default: {},
    properties: { enabled, count: { type: 'integer', minimum: 1, default: count }, window: window(within) },
  }) as const;

export const alertsSchema = {
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    // No default: load.ts turns alerts on when the alerts' channel has a recipient.
    enabled: { type: 'boolean' },
    // No default: load.ts fills in the one channel alerts can go through.
    channel: { type: 'string', minLength: 1 },
    to: { type: 'string', minLength: 1 },
    consoleUrl: { type: 'string', pattern: '^https?://', description: 'an http(s) URL' },
    every: {
      description: 'a duration such as 30m, 1h, or 0 for no gap',
      anyOf: [
        { type: 'string', pattern: '^(0|[1-9][0-9]*(ms|s|m|h|d))$', description: 'a duration such as 30m, 1h, or 0' },
        { type: 'integer', const: 0 },
      ],
      default: '30m',
    },
    mappingFailures: countCondition(5, '10m'),
    signatureFailures: countCondition(5, '10m'),
    modelUnreachable: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: { enabled, window: window('2m') },
    },
    deliveryFailures: countCondition(3, '10m'),
  },
} as const;
