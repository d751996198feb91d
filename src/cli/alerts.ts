import type { AlertView } from '../alert-views.js';
import { localTime } from '../time-format.js';
import { answerFailed, type GatewayOptions, gatewayClient, query } from './gateway-client.js';
import type { CliIo } from './io.js';
import { excerpt, table } from './table.js';

export interface AlertsOptions extends GatewayOptions {
  open?: boolean;
  limit: string;
}

/** The longest last error a row shows (the whole one: `--json`). */
const ERROR_CHARS = 80;

const cellsOf = (a: AlertView) => [
  localTime(a.at),
  a.condition,
  a.source,
  String(a.count),
  excerpt(a.lastError ?? '-', ERROR_CHARS),
];

/**
 * `hookd alerts`: the alerts still firing (with the console page to look at), then the most
 * recent alert messages, firings and recoveries alike (docs/operations.md#alerts).
 */
export async function alertsCommand(options: AlertsOptions, io: CliIo): Promise<number> {
  const gateway = gatewayClient(options, io);
  const open = await gateway.call('GET', `/api/alerts${query({ open: true, limit: 500 })}`);
  if (open.status !== 200) return answerFailed(io, open);
  const recent = options.open ? undefined : await gateway.call('GET', `/api/alerts${query({ limit: options.limit })}`);
  if (recent && recent.status !== 200) return answerFailed(io, recent);
  const firing = open.body.alerts as AlertView[];
  const messages = (recent?.body.alerts ?? []) as AlertView[];
  if (options.json) {
    io.out(JSON.stringify({ open: firing, ...(recent ? { recent: messages } : {}) }, null, 2));
    return 0;
  }
  if (firing.length === 0) io.out('no alert is open');
  else {
    io.out(`open (${firing.length})`);
    const rows = firing.map((a) => [...cellsOf(a), a.link]);
    for (const line of table(['SINCE', 'CONDITION', 'SOURCE', 'COUNT', 'LAST ERROR', 'LOOK AT'], rows))
      io.out(`  ${line}`);
  }
  if (!recent) return 0;
  if (messages.length === 0) {
    io.out('no alert was sent');
    return 0;
  }
  io.out('recent');
  const rows = messages.map((a) => [a.kind, ...cellsOf(a)]);
  for (const line of table(['KIND', 'AT', 'CONDITION', 'SOURCE', 'COUNT', 'LAST ERROR'], rows)) io.out(`  ${line}`);
  return 0;
}
