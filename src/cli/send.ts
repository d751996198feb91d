import { setTimeout as sleep } from 'node:timers/promises';
import { createModelCatalog } from '../actions/index.js';
import { hookdError } from '../errors.js';
import { compileMappings } from '../mapping/index.js';
import { signDelivery } from '../schemes/index.js';
import { undiciRequest as request } from '../undici.js';
import type { RunView } from '../views.js';
import { resolveConfig } from './config-source.js';
import { type DeliveryOptions, readDelivery } from './delivery-input.js';
import { baseUrl, gatewayToken } from './gateway-client.js';
import type { CliIo } from './io.js';

export interface SendOptions extends DeliveryOptions {
  config?: string;
  url?: string;
  /** Seconds to wait for the runs the delivery made (0: do not wait). */
  wait: string;
  json?: boolean;
}

/** A run as `send` saw it: the admin API's view, or what the gateway answered instead. */
type SeenRun = Pick<RunView, 'runId' | 'output' | 'error' | 'delivery'> & { readonly status: string };

/**
 * `hookd send NAME`: sends a test delivery to a running gateway, signed with the mapping's
 * scheme and secret (or the hook token when it verifies none), and prints what it became: the
 * answer, then each run it started once finished (like `stripe trigger`).
 */
export async function sendCommand(name: string, options: SendOptions, io: CliIo): Promise<number> {
  // Only the keys it reads must resolve: a `${NAME}` of another mapping or a channel may stay unset here.
  const resolved = resolveConfig(options.config, io, { createSecrets: false, lenientEnv: true });
  const { config, need } = resolved;
  const subPath = name.replace(/^\/+|\/+$/g, '');
  const mappings = compileMappings(config, createModelCatalog(config));
  const mapping = mappings.find((m) => m.matchPath === subPath);
  if (!mapping && subPath !== 'wake' && subPath !== 'agent') {
    const known = mappings.flatMap((m) => (m.matchPath ? [m.matchPath] : []));
    throw hookdError('NOT_FOUND', {
      resource: 'mapping for hook',
      id: subPath,
      hint: `known: ${['wake', 'agent', ...known].join(', ')}`,
    });
  }
  const body = readDelivery(options, io, Buffer.from('{}'));
  const headers: Record<string, string> = { 'content-type': 'application/json', ...body.headers };
  // The mapping's own entry holds its signing secret (a preset's, in its hooks.presets entry).
  need('hooks.path', ...(mapping ? [mapping.configPath.replace(/ \(.*\)$/, '')] : []));
  if (mapping?.verify) Object.assign(headers, signDelivery(mapping.verify, body.raw));
  else {
    need('hooks.token');
    if (!config.hooks.token)
      throw hookdError('CLI_USAGE', {
        option: '--config',
        expected: 'a config with hooks.token',
        got: config.file ?? 'the embedded default',
      });
    headers.authorization = `Bearer ${config.hooks.token}`;
  }
  const base = baseUrl(resolved, options.url ?? io.env.HOOKD_URL);
  const waitS = Number(options.wait);
  // Read before sending: a token whose variable is not set stops the command before anything is sent.
  const token = waitS > 0 ? gatewayToken(resolved, io) : undefined;
  const url = `${base}${config.hooks.path}/${subPath}`;
  const res = await request(url, {
    method: 'POST',
    headers,
    body: body.raw,
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  const text = await res.body.text();
  let answer: Record<string, unknown> = {};
  try {
    answer = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Not JSON (a proxy's page): printed as it came.
  }
  const ok = res.statusCode >= 200 && res.statusCode < 300;
  const runIds = [answer.runId, ...((answer.runIds as unknown[]) ?? [])].filter(
    (id): id is string => typeof id === 'string',
  );
  const runs: SeenRun[] = [];
  if (ok && runIds.length > 0 && waitS > 0 && token) {
    for (const id of runIds) runs.push(await followRun(base, id, token, waitS));
  }
  if (options.json) {
    io.out(JSON.stringify({ url, status: res.statusCode, answer: text === '' ? null : answer, runs }, null, 2));
  } else {
    io.out(`POST ${url} → ${res.statusCode}${text ? ` ${text}` : ''}`);
    for (const run of runs) io.out(describeRun(run));
    if (ok && runIds.length > 0 && waitS > 0 && !token) {
      io.out('(set HOOKD_GATEWAY_TOKEN to see what the runs answered)');
    }
  }
  return ok && runs.every((r) => r.status === 'ok') ? 0 : 1;
}

/** Polls a run until it is summarised (its delivery outcome recorded) or `waitS` passes. */
async function followRun(base: string, runId: string, token: string, waitS: number): Promise<SeenRun> {
  const until = Date.now() + waitS * 1000;
  for (;;) {
    const res = await request(`${base}/api/runs/${encodeURIComponent(runId)}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const run = (await res.body.json()) as RunView;
    if (res.statusCode !== 200) return { runId, status: `unknown (HTTP ${res.statusCode})` };
    const finished = run.status !== 'queued' && run.status !== 'running' && run.delivery !== undefined;
    if (finished || Date.now() >= until) return run;
    await sleep(200);
  }
}

function describeRun(run: SeenRun): string {
  const excerpt = (text: string) => (text.length > 500 ? `${text.slice(0, 499)}…` : text);
  const what = run.output ?? run.error;
  const delivery = run.delivery
    ? `; delivery ${run.delivery.status}${run.delivery.reason ? ` (${run.delivery.reason})` : ''}`
    : '';
  return `run ${run.runId}: ${run.status}${delivery}${what ? `\n  ${excerpt(what).replace(/\n/g, '\n  ')}` : ''}`;
}
