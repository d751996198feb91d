import { type GatewayOptions, gatewayClient } from './gateway-client.js';
import type { CliIo } from './io.js';

export type CancelOptions = GatewayOptions;

/**
 * `hookd runs cancel <id>` (docs/runtime.md#cancel): ends an unfinished run of a running gateway as
 * cancelled; exit code 1 when the gateway refuses (an unknown run, one that has finished).
 */
export async function cancelCommand(runId: string, options: CancelOptions, io: CliIo): Promise<number> {
  const gateway = gatewayClient(options, io);
  const answer = await gateway.call('POST', `/api/runs/${encodeURIComponent(runId)}/cancel`);
  if (options.json) io.out(JSON.stringify(answer.body, null, 2));
  if (answer.status >= 300) {
    io.err(
      `hookd: the gateway answered ${answer.status}: ${String(answer.body.error ?? '')} (${String(answer.body.code ?? '')})`,
    );
    return 1;
  }
  if (options.json) return 0;
  io.out(
    answer.body.status === 'cancelled'
      ? `run ${runId} cancelled`
      : `run ${runId} is being cancelled: the node running it ends it at its next lease renewal`,
  );
  return 0;
}
