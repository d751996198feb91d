import { createLogger } from '../log.js';
import { createMailWatcher, startClaimed } from '../mail/index.js';
import { createStore, sqliteBackend } from '../store/sqlite/index.js';
import { resolveConfig } from './config-source.js';
import type { CliIo } from './io.js';

/** `hookd mail watch`: the mail watch flow alone, in the foreground, posting to the gateway's `/hooks/mail`. */
export async function mailWatchCommand(options: { config?: string }, io: CliIo): Promise<number> {
  const { config } = resolveConfig(options.config, io, { createSecrets: false });
  const mail = config.hooks.mail;
  if (!mail?.watch) {
    io.err('hookd: hooks.mail.watch is not configured (see hookd mail setup --imap-host …)');
    return 1;
  }
  if (config.storage.kind === 'postgres') {
    io.err(
      'hookd: with storage.kind postgres the gateways watch mail themselves (one node at a time); run hookd serve',
    );
    return 1;
  }
  if (!config.hooks.token) {
    io.err('hookd: hooks.token is required to post to /hooks/mail');
    return 1;
  }
  const host = ['0.0.0.0', '::'].includes(config.server.host) ? '127.0.0.1' : config.server.host;
  if (!mail.watch.hookUrl && config.server.port === 0) {
    io.err('hookd: server.port is 0, so hooks.mail.watch.hookUrl must name the gateway');
    return 1;
  }
  const hookUrl =
    mail.watch.hookUrl ??
    `http://${host.includes(':') ? `[${host}]` : host}:${config.server.port}${config.hooks.path}/mail`;
  const log = createLogger({ level: config.log.level });
  const store = createStore({ path: config.storage.path, synchronous: config.storage.synchronous });
  const meta = sqliteBackend(store).meta;
  const account = mail.account ?? mail.watch.imap.user;
  const { watch } = mail;
  const { token } = config.hooks;
  const make = () => createMailWatcher({ account, watch, hookUrl, hookToken: token, meta, log });
  const watcher = await startClaimed(meta, { account, mailbox: watch.mailbox }, make, (pid) =>
    io.err(`hookd: process ${pid} watches this mailbox already (hookd serve starts a watcher: --no-mail-watch)`),
  );
  if (!watcher) {
    store.close();
    return 1;
  }
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  log.info({ signal, status: watcher.status() }, 'mail watch stopping');
  await watcher.stop();
  store.close();
  return 0;
}
