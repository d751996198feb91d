import { createLogger } from '../log.js';
import { startGateway } from '../main.js';
import { resolveConfig } from './config-source.js';
import type { CliIo } from './io.js';
import { gatewayTokenPlace, readyCurl } from './serve-hints.js';

/** `hookd serve [--config FILE]`: runs until SIGINT or SIGTERM. */
export async function serveCommand(options: { config?: string; mailWatch?: boolean }, io: CliIo): Promise<number> {
  const { config, embedded } = resolveConfig(options.config, io, { createSecrets: true });
  const log = createLogger({ level: config.log.level });
  const mailWatch = options.mailWatch !== false && io.env.HOOKD_SKIP_MAIL_WATCH !== '1';
  // A file is read again when it changes: its mappings reload, the rest waits for a restart.
  // The same file, by its path: one gone is a failed reload, never the embedded default.
  const { file } = config;
  const reload = file ? () => resolveConfig(file, io, { createSecrets: false }).config : undefined;
  const gateway = await startGateway(config, log, { mailWatch, ...(reload ? { reload } : {}) });
  // For people, on stderr: stdout holds the JSON log lines alone, for whatever reads them.
  const say = io.err;
  if (embedded?.created) {
    say(`hookd: generated a hook token (shown once; stored in ${embedded.tokenFile}):`);
    say(`  ${embedded.token}`);
  }
  const where = config.hooks.enabled ? ` (hooks under ${config.hooks.path}/)` : ' (hooks are off: hooks.enabled)';
  say(
    `hookd: ${embedded ? 'embedded default (builtin/echo model, no chat channel) ' : ''}listening on ${gateway.url}${where}`,
  );
  say(
    `hookd: the console is at ${gateway.url}/ui/ (sign in with the gateway token ${gatewayTokenPlace(config, io.cwd)})`,
  );
  const ready = readyCurl(config, gateway.url, embedded?.tokenFile);
  if (ready) {
    say(`hookd: try it (${ready.note}):`);
    say(`  ${ready.curl}`);
  }
  if (config.file) say(`hookd: ${config.file} is watched: its mappings, presets and plugins reload when it changes`);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
    // With a config file, SIGHUP reloads it (config-reload.ts); without one there is nothing to
    // reload, and it stops the gateway as gracefully as SIGTERM (it used to end it at once).
    if (!config.file) process.once('SIGHUP', resolve);
  });
  log.info({ signal }, 'shutting down');
  await gateway.close();
  log.flush();
  return 0;
}
