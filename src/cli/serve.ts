import { createLogger } from '../log.js';
import { startGateway } from '../main.js';
import { gatewayTokenFile } from '../store/index.js';
import { resolveConfig } from './config-source.js';
import type { CliIo } from './io.js';

/** `hookd serve [--config FILE]`: runs until SIGINT or SIGTERM. */
export async function serveCommand(options: { config?: string; mailWatch?: boolean }, io: CliIo): Promise<number> {
  const { config, embedded } = resolveConfig(options.config, io, { createSecrets: true });
  const log = createLogger({ level: config.log.level });
  const mailWatch = options.mailWatch !== false && io.env.HOOKD_SKIP_MAIL_WATCH !== '1';
  const gateway = await startGateway(config, log, { mailWatch });
  if (embedded) {
    if (embedded.created) {
      io.out(`hookd: generated a hook token (shown once; stored in ${embedded.tokenFile}):`);
      io.out(`  ${embedded.token}`);
    }
    io.out('hookd: embedded default running (builtin/echo model, no chat channel). Try:');
    io.out(
      `  curl -sS -X POST ${gateway.url}${config.hooks.path}/wake -H "Authorization: Bearer $(cat '${embedded.tokenFile}')" -H 'Content-Type: application/json' -d '{"text":"Hello from curl"}'`,
    );
    io.out(
      `hookd: the console is at ${gateway.url}/ui/ (sign in with the gateway token in ${gatewayTokenFile(config.storage.path)})`,
    );
  }
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  log.info({ signal }, 'shutting down');
  await gateway.close();
  log.flush();
  return 0;
}
