import { hookdError } from '../errors.js';
import { gatewayTokenFile, readSecretAsClient } from '../store/index.js';
import { undiciRequest as request } from '../undici.js';
import { type ResolvedConfig, resolveConfig } from './config-source.js';
import type { CliIo } from './io.js';

/** What the commands that talk to a running gateway share: where it is, and how to print. */
export interface GatewayOptions {
  config?: string;
  url?: string;
  json?: boolean;
}

/** The gateway's base URL: `--url`, else `HOOKD_URL`, else `server.host:port` from the config. */
export function baseUrl({ config, need }: ResolvedConfig, url: string | undefined): string {
  if (url) return url.replace(/\/+$/, '');
  need('server.host', 'server.port');
  if (config.server.port === 0) {
    throw hookdError('CLI_USAGE', { option: '--url', expected: "the gateway's URL (server.port is 0)", got: '' });
  }
  const host = ['0.0.0.0', '::', ''].includes(config.server.host) ? '127.0.0.1' : config.server.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.server.port}`;
}

/** The gateway token: configured, `HOOKD_GATEWAY_TOKEN`, or the generated file beside the store. */
export function gatewayToken({ config, need }: ResolvedConfig, io: CliIo): string | undefined {
  need('gateway.auth.token');
  const configured = config.gateway.auth.token ?? io.env.HOOKD_GATEWAY_TOKEN;
  if (configured !== undefined) return configured;
  need('storage.path');
  const file = gatewayTokenFile(config.storage.path);
  return readSecretAsClient(file);
}

/** An admin API answer: status and parsed JSON (an error body when not 2xx). */
export interface AdminAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Record<string, unknown>;
}

/** Calls the admin API of a running gateway with the gateway token (docs/runtime.md#admin-api, docs/runtime.md#request-log-and-replay). */
export function adminClient(resolved: ResolvedConfig, io: CliIo, url: string | undefined) {
  const base = baseUrl(resolved, url ?? io.env.HOOKD_URL);
  const token = gatewayToken(resolved, io);
  if (!token) {
    throw hookdError('CLI_USAGE', {
      option: 'HOOKD_GATEWAY_TOKEN',
      expected: 'the gateway token (gateway.auth.token in the config, or this variable)',
      got: '',
    });
  }
  return {
    base,
    token,
    /** `json`: a JSON body to send. */
    async call(method: 'GET' | 'POST', path: string, json?: object): Promise<AdminAnswer> {
      const headers: Record<string, string> = { authorization: `Bearer ${token}` };
      if (json !== undefined) headers['content-type'] = 'application/json';
      const sent = json === undefined ? {} : { body: JSON.stringify(json) };
      const res = await request(`${base}${path}`, { method, headers, ...sent });
      const text = await res.body.text();
      let body: Record<string, unknown> = {};
      try {
        body = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
      } catch {
        body = { ok: false, error: text.slice(0, 200) };
      }
      return { status: res.statusCode, headers: res.headers, body };
    },
  };
}

export type AdminClient = ReturnType<typeof adminClient>;

/** The admin API of the gateway `options` point at; only the config keys it reads must resolve (docs/runtime.md#request-log-and-replay). */
export function gatewayClient(options: GatewayOptions, io: CliIo): AdminClient {
  return adminClient(resolveConfig(options.config, io, { createSecrets: false, lenientEnv: true }), io, options.url);
}

/** `?a=1&b=x` of the parameters that are set; empty when none is. */
export function query(params: Record<string, string | number | boolean | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** Prints an admin API error answer; returns the exit code (1). */
export function answerFailed(io: CliIo, answer: AdminAnswer): number {
  io.err(
    `hookd: the gateway answered ${answer.status}: ${String(answer.body.error ?? '')} (${String(answer.body.code ?? '')})`,
  );
  return 1;
}
