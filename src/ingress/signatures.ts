import { createHmac } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { MappingConfig } from '../config/index.js';
import type { CompiledMapping } from '../mapping/index.js';
import { safeEqual } from './auth.js';

export type VerifyConfig = NonNullable<MappingConfig['verify']>;

/**
 * A verified webhook: the sender's id of this message to dedupe on (`X-GitHub-Delivery`,
 * `webhook-id`, Stripe's event id), when the sender gives one.
 */
export type Verification =
  | { readonly ok: true; readonly webhookId?: string }
  | { readonly ok: false; readonly reason: string };

const DEFAULT_TOLERANCE_S = 300;

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

const hmac = (algorithm: string, key: string | Buffer, data: Buffer | string) =>
  createHmac(algorithm, key).update(data);

/** Undefined when the timestamp is fresh; else why not, with the tolerance (never the expected value). */
function staleTimestamp(timestamp: string | undefined, config: VerifyConfig, nowSeconds: number): string | undefined {
  const t = Number(timestamp);
  const tolerance = config.toleranceSeconds ?? DEFAULT_TOLERANCE_S;
  if (!Number.isInteger(t)) return 'the timestamp is not a whole number of seconds';
  const off = nowSeconds - t;
  if (Math.abs(off) <= tolerance) return undefined;
  return `the timestamp is ${Math.abs(off)} s ${off > 0 ? 'old' : 'in the future'}; the tolerance is ${tolerance} s`;
}

/** Every signature was checked and none matched: the sender's secret differs from the mapping's. */
const MISMATCH = 'no signature matched (is the secret the same on both sides?)';

const fail = (reason: string): Verification => ({ ok: false, reason });

function github(config: VerifyConfig, headers: IncomingHttpHeaders, raw: Buffer): Verification {
  const given = header(headers, 'x-hub-signature-256');
  if (!given) return fail('missing X-Hub-Signature-256');
  const expected = `sha256=${hmac('sha256', config.secret, raw).digest('hex')}`;
  if (!safeEqual(given, expected)) return fail(MISMATCH);
  const id = header(headers, 'x-github-delivery');
  return { ok: true, ...(id ? { webhookId: id } : {}) };
}

/** GitLab sends the secret token itself (`X-Gitlab-Token`), compared in constant time. */
function gitlab(config: VerifyConfig, headers: IncomingHttpHeaders): Verification {
  const given = header(headers, 'x-gitlab-token');
  if (!given) return fail('missing X-Gitlab-Token');
  if (!safeEqual(given, config.secret))
    return fail('X-Gitlab-Token does not match (is the secret token the same on both sides?)');
  const id = header(headers, 'x-gitlab-event-uuid');
  return { ok: true, ...(id ? { webhookId: id } : {}) };
}

function stripe(config: VerifyConfig, headers: IncomingHttpHeaders, raw: Buffer, now: number): Verification {
  const given = header(headers, 'stripe-signature');
  if (!given) return fail('missing Stripe-Signature');
  const parts = given.split(',').map((p) => p.trim().split('=') as [string, string?]);
  const timestamp = parts.find(([k]) => k === 't')?.[1];
  const signatures = parts.filter(([k]) => k === 'v1').map(([, v]) => v ?? '');
  if (!timestamp || signatures.length === 0) return fail('Stripe-Signature has no t= or no v1= part');
  const stale = staleTimestamp(timestamp, config, now);
  if (stale) return fail(stale);
  const expected = hmac('sha256', config.secret, `${timestamp}.`).update(raw).digest('hex');
  if (!signatures.some((s) => safeEqual(s, expected))) return fail(MISMATCH);
  const id = /"id"\s*:\s*"(evt_[^"]+)"/.exec(raw.toString('utf8'))?.[1];
  return { ok: true, ...(id ? { webhookId: id } : {}) };
}

function slack(config: VerifyConfig, headers: IncomingHttpHeaders, raw: Buffer, now: number): Verification {
  const given = header(headers, 'x-slack-signature');
  const timestamp = header(headers, 'x-slack-request-timestamp');
  if (!given) return fail('missing X-Slack-Signature');
  if (!timestamp) return fail('missing X-Slack-Request-Timestamp');
  const stale = staleTimestamp(timestamp, config, now);
  if (stale) return fail(stale);
  const expected = `v0=${hmac('sha256', config.secret, `v0:${timestamp}:`).update(raw).digest('hex')}`;
  if (!safeEqual(given, expected)) return fail(MISMATCH);
  // Slack retries an event it thinks was lost (X-Slack-Retry-Num): its event_id dedupes them.
  const id = /"event_id"\s*:\s*"([^"]+)"/.exec(raw.toString('utf8'))?.[1];
  return { ok: true, ...(id ? { webhookId: id } : {}) };
}

function standardWebhooks(config: VerifyConfig, headers: IncomingHttpHeaders, raw: Buffer, now: number): Verification {
  // Svix-hosted senders put the same three values in svix-* headers.
  const prefix =
    header(headers, 'webhook-id') === undefined && header(headers, 'svix-id') !== undefined ? 'svix' : 'webhook';
  const id = header(headers, `${prefix}-id`);
  const timestamp = header(headers, `${prefix}-timestamp`);
  const given = header(headers, `${prefix}-signature`);
  if (!id || !timestamp || !given) {
    const named = { [`${prefix}-id`]: id, [`${prefix}-timestamp`]: timestamp, [`${prefix}-signature`]: given };
    return fail(
      `missing ${Object.keys(named)
        .filter((name) => !named[name as keyof typeof named])
        .join(', ')}`,
    );
  }
  const stale = staleTimestamp(timestamp, config, now);
  if (stale) return fail(stale);
  const key = config.secret.startsWith('whsec_')
    ? Buffer.from(config.secret.slice(6), 'base64')
    : Buffer.from(config.secret);
  const expected = hmac('sha256', key, `${id}.${timestamp}.`).update(raw).digest('base64');
  const candidates = given
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => s.slice(3));
  if (candidates.length === 0) return fail('webhook-signature has no v1, signature');
  return candidates.some((s) => safeEqual(s, expected)) ? { ok: true, webhookId: id } : fail(MISMATCH);
}

function generic(config: VerifyConfig, headers: IncomingHttpHeaders, raw: Buffer): Verification {
  const name = (config.header ?? 'x-signature').toLowerCase();
  const given = header(headers, name);
  if (!given) return fail(`missing ${name}`);
  const digest = hmac(config.algorithm ?? 'sha256', config.secret, raw).digest(config.encoding ?? 'hex');
  return safeEqual(given, `${config.prefix ?? ''}${digest}`) ? { ok: true } : fail(MISMATCH);
}

/** Verifies a webhook's signature over the raw bytes (docs/security.md#provider-signatures). Never reveals the expected value. */
export function verifySignature(
  config: VerifyConfig,
  headers: IncomingHttpHeaders,
  raw: Buffer,
  nowSeconds = Math.floor(Date.now() / 1000),
): Verification {
  switch (config.scheme) {
    case 'github':
      return github(config, headers, raw);
    case 'gitlab':
      return gitlab(config, headers);
    case 'stripe':
      return stripe(config, headers, raw, nowSeconds);
    case 'slack':
      return slack(config, headers, raw, nowSeconds);
    case 'standard-webhooks':
      return standardWebhooks(config, headers, raw, nowSeconds);
    case 'hmac':
      return generic(config, headers, raw);
  }
}

/**
 * The credential headers a scheme's check reads (docs/security.md#what-is-masked): when the
 * check passes, these are the ones a stored record marks verified.
 */
export function signatureHeaders(config: VerifyConfig): readonly string[] {
  switch (config.scheme) {
    case 'github':
      return ['x-hub-signature-256'];
    case 'gitlab':
      return ['x-gitlab-token'];
    case 'stripe':
      return ['stripe-signature'];
    case 'slack':
      return ['x-slack-signature'];
    case 'standard-webhooks':
      return ['webhook-signature', 'svix-signature'];
    case 'hmac':
      return [(config.header ?? 'x-signature').toLowerCase()];
  }
}

/** The mappings whose signature holds, and the sender's webhook id to dedupe on. */
export interface VerifiedWebhook {
  readonly mappings: ReadonlySet<string>;
  readonly webhookId?: string;
  /** The credential headers whose check passed (a stored record marks them verified). */
  readonly verifiedHeaders: ReadonlySet<string>;
}

/** Why a mapping's signature did not hold (never an expected value). */
export interface SignatureFailure {
  readonly mapping: string;
  readonly reason: string;
}

/** No mapping's signature held: why, per mapping, to answer and log. */
export interface UnverifiedWebhook {
  readonly failures: readonly SignatureFailure[];
}

/** Checks the request against each mapping's `verify`. */
export function verifyWebhook(
  verifiers: readonly CompiledMapping[],
  headers: IncomingHttpHeaders,
  rawBody: Buffer,
): VerifiedWebhook | UnverifiedWebhook {
  const mappings = new Set<string>();
  const verifiedHeaders = new Set<string>();
  const failures: SignatureFailure[] = [];
  let webhookId: string | undefined;
  for (const mapping of verifiers) {
    if (!mapping.verify) continue;
    const result = verifySignature(mapping.verify, headers, rawBody);
    if (!result.ok) {
      failures.push({ mapping: mapping.id, reason: result.reason });
      continue;
    }
    mappings.add(mapping.id);
    for (const name of signatureHeaders(mapping.verify)) if (headers[name] !== undefined) verifiedHeaders.add(name);
    webhookId ??= result.webhookId;
  }
  if (mappings.size === 0) return { failures };
  return { mappings, verifiedHeaders, ...(webhookId ? { webhookId } : {}) };
}

/** Slack's `url_verification` handshake: answered with its challenge once the signature holds. */
export function slackChallenge(
  verifiers: readonly CompiledMapping[],
  verified: VerifiedWebhook,
  payload: unknown,
): string | undefined {
  const bySlack = verifiers.some((m) => verified.mappings.has(m.id) && m.verify?.scheme === 'slack');
  const p = payload as { type?: unknown; challenge?: unknown } | null;
  return bySlack && p?.type === 'url_verification' && typeof p.challenge === 'string' ? p.challenge : undefined;
}
