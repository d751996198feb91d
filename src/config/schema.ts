/**
 * The one JSON Schema of hookd's configuration (docs/configuration.md). Types are derived from it
 * (types.ts); defaults live here so that validation fills them in.
 * A `description` on a constrained string is what error messages say was expected.
 * A mapping's and `hooks.mail`'s parts are in hook-schemas.ts.
 */

import { DEFAULT_SESSION_KEY_PREFIXES } from '../action-shape.js';
import { alertsSchema } from './alerts-schema.js';
import { mailSchema, mappingSchema, modelRef, pluginEntrySchema, presetEntrySchema, thinking } from './hook-schemas.js';
import { HTTP_URL } from './keys.js';

const DURATION = 'a duration such as 45s, 10m, 1h, or 0 to turn it off';
/** The longest time a Node timer waits (2^31 − 1 ms, about 24.8 days): a longer one fires at once. */
export const TIMER_MAX_MS = 2_147_483_647;
const duration = {
  description: DURATION,
  anyOf: [
    { type: 'string', pattern: '^(0|[1-9][0-9]*(ms|s|m|h|d))$', description: DURATION },
    { type: 'integer', const: 0 },
  ],
} as const;

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    server: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        host: { type: 'string', minLength: 1, default: '127.0.0.1' },
        port: { type: 'integer', minimum: 0, maximum: 65535, default: 8787 },
        headersTimeoutMs: { type: 'integer', minimum: 1000, maximum: TIMER_MAX_MS, default: 10_000 },
        requestTimeoutMs: { type: 'integer', minimum: 1000, maximum: TIMER_MAX_MS, default: 30_000 },
        maxConnections: { type: 'integer', minimum: 1, default: 4096 },
        maxConnectionsPerClient: { type: 'integer', minimum: 1, default: 1024 },
        allowedHosts: {
          description: 'names the console, the admin API, /metrics and /healthz answer to beyond loopback ones',
          type: 'array',
          items: { type: 'string', minLength: 1 },
          default: [],
        },
        trustProxy: {
          description: 'false, a hop count, or a list of proxy addresses (IP or CIDR)',
          anyOf: [
            { type: 'boolean' },
            { type: 'integer', minimum: 0 },
            { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1 },
          ],
          default: false,
        },
      },
    },
    gateway: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        auth: {
          type: 'object',
          additionalProperties: false,
          default: {},
          properties: { token: { type: 'string', minLength: 16, description: 'a token of at least 16 characters' } },
        },
      },
    },
    hooks: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        enabled: { type: 'boolean', default: false },
        token: { type: 'string', minLength: 16, description: 'a token of at least 16 characters' },
        path: { type: 'string', default: '/hooks' },
        maxBodyBytes: { type: 'integer', minimum: 1, default: 262144 },
        allowQueryToken: { type: 'boolean', default: true },
        allowedSessionKeyPrefixes: {
          type: 'array',
          items: { type: 'string', minLength: 1 },
          minItems: 1,
          default: [...DEFAULT_SESSION_KEY_PREFIXES],
        },
        presets: {
          type: 'array',
          default: [],
          items: presetEntrySchema,
        },
        mappings: { type: 'array', items: mappingSchema, default: [] },
        plugins: {
          type: 'array',
          default: [],
          items: pluginEntrySchema,
          description: 'preset plugins: npm package names (resolved from the config folder) or folders',
        },
        transformsDir: { type: 'string', minLength: 1, default: 'transforms' },
        transforms: {
          type: 'object',
          additionalProperties: false,
          default: {},
          properties: {
            timeoutMs: { type: 'integer', minimum: 1, maximum: TIMER_MAX_MS, default: 1000 },
            memoryLimitMb: { type: 'integer', minimum: 8, default: 128 },
            maxInFlight: { type: 'integer', minimum: 1, default: 8 },
            maxResultBytes: { type: 'integer', minimum: 1024, default: 1_048_576 },
            allowWasm: { type: 'boolean', default: false },
            // A process of their own, restarted when V8 aborts it (docs/transforms.md#isolation).
            isolation: { type: 'string', enum: ['inline', 'process'], default: 'inline' },
          },
        },
        // Bounds on the bodies read before their signature is checked (docs/security.md#hostile-input).
        verifiedPaths: {
          type: 'object',
          additionalProperties: false,
          default: {},
          properties: {
            maxPendingBytes: { type: 'integer', minimum: 1024, default: 16_777_216 },
            maxPendingPerClient: { type: 'integer', minimum: 1, default: 4 },
            bodyTimeoutMs: { type: 'integer', minimum: 500, maximum: TIMER_MAX_MS, default: 5000 },
          },
        },
        idempotency: {
          type: 'object',
          additionalProperties: false,
          default: {},
          properties: { ttlSeconds: { type: 'integer', minimum: 1, default: 86400 } },
        },
        log: {
          type: 'object',
          additionalProperties: false,
          default: {},
          properties: {
            enabled: { type: 'boolean', default: true },
            maxBodyBytes: { type: 'integer', minimum: 0, default: 65536 },
            redact: {
              type: 'array',
              default: [],
              items: { type: 'string', pattern: '^[^.]+(\\.[^.]+)*$' },
              description: 'JSON paths such as card.number or items.*.secret',
            },
            retentionDays: { type: 'number', exclusiveMinimum: 0, default: 7 },
            maxRows: { type: 'integer', minimum: 1, default: 100000 },
            maxBytes: { type: 'integer', minimum: 65536, default: 1073741824 },
            refusedPerMinute: { type: 'integer', minimum: 0, default: 60 },
            refusedShare: { type: 'number', minimum: 0.01, maximum: 0.5, default: 0.125 },
          },
        },
        mail: mailSchema,
        alerts: alertsSchema,
      },
    },
    agents: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        defaults: {
          type: 'object',
          additionalProperties: false,
          default: {},
          properties: {
            model: { ...modelRef, default: 'builtin/echo' },
            models: {
              description: 'a list of model references, or a map of model reference to { alias }',
              anyOf: [
                { type: 'array', items: modelRef },
                {
                  type: 'object',
                  propertyNames: modelRef,
                  additionalProperties: {
                    type: 'object',
                    additionalProperties: false,
                    properties: { alias: { type: 'string', minLength: 1 } },
                  },
                },
              ],
            },
            thinking,
            timeoutSeconds: { type: 'number', exclusiveMinimum: 0, maximum: 86_400, default: 600 },
            maxConcurrentRuns: { type: 'integer', minimum: 1, default: 4 },
            maxQueuedRuns: { type: 'integer', minimum: 1, default: 10000 },
            maxPromptChars: { type: 'integer', minimum: 10_000, default: 200_000 },
            heartbeat: {
              type: 'object',
              additionalProperties: false,
              default: {},
              properties: {
                every: { ...duration, default: '30m' },
                ackMaxChars: { type: 'integer', minimum: 0, default: 300 },
                maxPromptChars: { type: 'integer', minimum: 10_000, default: 200_000 },
                prompt: { type: 'string', minLength: 1 },
              },
            },
          },
        },
      },
    },
    models: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        providers: {
          type: 'object',
          default: {},
          propertyNames: {
            pattern: '^[A-Za-z0-9_.-]+$',
            description: 'a provider name of letters, digits, _, . and -',
          },
          // The keys every provider has; its API's module checks `api` and its own keys (docs/runtime.md#providers).
          additionalProperties: {
            type: 'object',
            additionalProperties: true,
            required: ['baseUrl', 'api'],
            properties: {
              api: { type: 'string', minLength: 1 },
              baseUrl: HTTP_URL,
              apiKey: { type: 'string' },
              maxTokens: { type: 'integer', minimum: 1, default: 4096 },
              maxConcurrent: { type: 'integer', minimum: 1 },
            },
          },
        },
      },
    },
    channels: {
      type: 'object',
      default: {},
      propertyNames: {
        pattern: '^(?!last$)[A-Za-z0-9_-]+$',
        description: 'a channel id of letters, digits, _ and - (not last)',
      },
      // The keys every channel has; its kind's module checks `kind` and its own keys (docs/channels.md).
      additionalProperties: {
        type: 'object',
        additionalProperties: true,
        properties: {
          kind: { type: 'string', minLength: 1 },
          defaultTo: { type: 'string', minLength: 1 },
          maxConcurrent: { type: 'integer', minimum: 1 },
        },
      },
    },
    storage: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        kind: {
          description: 'sqlite (embedded, the default) or postgres (several nodes on one database, docs/scale.md)',
          type: 'string',
          enum: ['sqlite', 'postgres'],
          default: 'sqlite',
        },
        path: { type: 'string', minLength: 1, default: 'data/hookd.db' },
        synchronous: { type: 'string', enum: ['normal', 'full'], default: 'normal' },
        url: { description: 'postgres://user:password@host:port/database', type: 'string', minLength: 1 },
        leaseSeconds: {
          description:
            "postgres: how long a node holds a run or the heartbeat without renewing; a dead node's work is taken over after it",
          type: 'integer',
          minimum: 2,
          maximum: 3600,
          default: 30,
        },
        poolSize: {
          description:
            'postgres: connections a node keeps to the database at most, the one that listens for notifications included',
          type: 'integer',
          minimum: 3,
          maximum: 100,
          default: 10,
        },
      },
    },
    log: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        level: {
          type: 'string',
          enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
          default: 'info',
        },
      },
    },
  },
} as const;

/** How the config validator is compiled (at start-up from src/, ahead of time by the build). */
export const validatorOptions = {
  allErrors: true,
  useDefaults: true,
  strict: false,
  verbose: true,
  // The schema is a constant, checked against the meta-schema by a unit test instead.
  validateSchema: false,
} as const;
