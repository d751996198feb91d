/**
 * The parts of the config schema (schema.ts) that describe the hook endpoints' own sources: a
 * mapping and `hooks.mail`, with the model and action fragments they share with `agents`.
 */

import {
  ACTION_KINDS,
  CONTENT_SOURCES,
  TEMPLATED_FIELDS,
  type TemplatedField,
  THINKING_LEVELS,
  WAKE_MODES,
} from '../action-shape.js';
import { verifySchema } from '../schemes/index.js';
import { HTTP_URL } from './keys.js';

export const modelRef = {
  type: 'string',
  pattern: '^[A-Za-z0-9_.-]+/[^\\s/][^\\s]*$',
  description: 'a model reference of the form provider/model',
} as const;

export const thinking = { type: 'string', enum: THINKING_LEVELS } as const;
const wakeMode = { type: 'string', enum: WAKE_MODES } as const;

/** A mapping's mustache templates: one string key per templated action field (src/action-shape.ts). */
const templates = Object.fromEntries(TEMPLATED_FIELDS.map(({ template }) => [template, { type: 'string' }])) as {
  readonly [K in TemplatedField['template']]: { readonly type: 'string' };
};

/**
 * How a mapping reads its request's event type (docs/mappings.md#event-types): one header, or one
 * dotted JSON path of the payload. A preset's manifest declares it with the same shape.
 */
export const eventTypeSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  maxProperties: 1,
  description: 'one of header (a header name) or path (a dotted JSON path of the payload)',
  properties: {
    header: { type: 'string', pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]+$", description: 'a header name' },
    path: { type: 'string', pattern: '^[^.\\s]+(\\.[^.\\s]+)*$', description: 'a dotted JSON path such as event.type' },
  },
} as const;

export const mappingSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    id: { type: 'string', minLength: 1 },
    match: {
      type: 'object',
      additionalProperties: false,
      properties: {
        path: { type: 'string' },
        source: { type: 'string' },
        headers: {
          type: 'object',
          description: 'header names (any case) to values, alternatives separated by |',
          additionalProperties: { type: 'string', minLength: 1 },
        },
      },
    },
    schema: {
      anyOf: [
        { type: 'string', minLength: 1 },
        { type: 'object', additionalProperties: true },
      ],
      description: 'a JSON Schema of the payload: an object, or the path of a JSON file',
    },
    action: { type: 'string', enum: ACTION_KINDS },
    wakeMode,
    ...templates,
    model: { type: 'string', minLength: 1 },
    deliver: { type: 'boolean' },
    timeoutSeconds: { type: 'number', exclusiveMinimum: 0, maximum: 86_400 },
    allowUnsafeExternalContent: { type: 'boolean' },
    transform: {
      type: 'object',
      additionalProperties: false,
      required: ['module'],
      properties: { module: { type: 'string', minLength: 1 }, export: { type: 'string', minLength: 1 } },
    },
    forEach: { type: 'string', minLength: 1 },
    verify: verifySchema,
    maxBodyBytes: { type: 'integer', minimum: 1 },
    maxConcurrent: { type: 'integer', minimum: 1 },
    contentSource: { type: 'string', enum: CONTENT_SOURCES },
    eventType: eventTypeSchema,
  },
} as const;

export const mailSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    account: { type: 'string', minLength: 1 },
    model: modelRef,
    thinking,
    allowUnsafeExternalContent: { type: 'boolean' },
    watch: {
      type: 'object',
      additionalProperties: false,
      required: ['imap'],
      properties: {
        imap: {
          type: 'object',
          additionalProperties: false,
          required: ['host', 'user', 'password'],
          properties: {
            host: { type: 'string', minLength: 1 },
            port: { type: 'integer', minimum: 1, maximum: 65535 },
            secure: { type: 'boolean' },
            user: { type: 'string', minLength: 1 },
            password: { type: 'string' },
          },
        },
        mailbox: { type: 'string', minLength: 1, default: 'INBOX' },
        includeBody: { type: 'boolean', default: true },
        maxBodyBytes: { type: 'integer', minimum: 1, default: 20000 },
        batchSize: { type: 'integer', minimum: 1, maximum: 100, default: 25 },
        hookUrl: HTTP_URL,
        pollIntervalSeconds: { type: 'integer', minimum: 1, maximum: 86_400, default: 60 },
      },
    },
  },
} as const;

/** An entry of `hooks.presets`: a preset's name, or its name with the operator's keys and its options. */
export const presetEntrySchema = {
  anyOf: [
    { type: 'string', pattern: '^[a-z0-9][a-z0-9-]*$' },
    {
      type: 'object',
      required: ['name'],
      additionalProperties: true,
      properties: {
        name: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]*$' },
        secret: { type: 'string', minLength: 1 },
        path: { type: 'string', minLength: 1 },
        sessionKey: { type: 'string', minLength: 1 },
        model: { type: 'string', minLength: 1 },
        thinking,
        deliver: { type: 'boolean' },
        channel: mappingSchema.properties.channel,
        to: { type: 'string', minLength: 1 },
        allowUnsafeExternalContent: { type: 'boolean' },
        maxBodyBytes: mappingSchema.properties.maxBodyBytes,
        maxConcurrent: mappingSchema.properties.maxConcurrent,
        timeoutSeconds: mappingSchema.properties.timeoutSeconds,
      },
    },
  ],
  description: 'a preset name, or { name, secret?, path?, sessionKey?, …its options }',
} as const;

/** An entry of `hooks.plugins`: an npm package or a folder, or that with what the operator grants it. */
export const pluginEntrySchema = {
  description: 'an npm package name or a folder, or { name, allowUnsafeExternalContent? }',
  anyOf: [
    { type: 'string', minLength: 1 },
    {
      type: 'object',
      required: ['name'],
      additionalProperties: false,
      properties: {
        name: { type: 'string', minLength: 1 },
        // The operator's say: without it, a plugin's mapping may not turn the safety wrapper off.
        allowUnsafeExternalContent: { type: 'boolean' },
      },
    },
  ],
} as const;
