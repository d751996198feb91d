import { Command, CommanderError } from 'commander';
import { isHookdError } from '../errors.js';
import type { CancelOptions } from './cancel.js';
import { type CliIo, processIo } from './io.js';
import type { MailSetupOptions } from './mail-setup.js';
import type { ReplayOptions, RequestsOptions, RunsOptions } from './requests.js';
import type { SendOptions } from './send.js';
import type { TestOptions } from './test.js';
import type { TryOptions } from './try.js';

// Each command is loaded when it runs: `hookd token` need not load the gateway.
const commands = {
  serve: () => import('./serve.js'),
  check: () => import('./check.js'),
  try: () => import('./try.js'),
  send: () => import('./send.js'),
  presets: () => import('./presets.js'),
  mailSetup: () => import('./mail-setup.js'),
  mailWatch: () => import('./mail-watch.js'),
  token: () => import('./token.js'),
  init: () => import('./init.js'),
  test: () => import('./test.js'),
  log: () => import('./requests.js'),
  cancel: () => import('./cancel.js'),
};

const collect = (value: string, previous: string[]) => [...previous, value];

/** Runs the hookd CLI with `argv` (without node and script); resolves to the exit code. */
export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  let exitCode = 0;
  const run = (fn: () => Promise<number>) => async () => {
    exitCode = await fn();
  };
  const program = new Command()
    .name('hookd')
    .description('Self-hosted webhook gateway for a personal AI-assistant runtime')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });

  program
    .command('serve')
    .description('run the gateway (the embedded default without a config)')
    .option(
      '-c, --config <file>',
      'config file (JSON5); default: $HOOKD_CONFIG, else ./hookd.json5, else the embedded default',
    )
    .option('--no-mail-watch', 'do not start the mail watcher even when hooks.mail.watch is configured')
    .action((opts: { config?: string; mailWatch?: boolean }) =>
      run(async () => (await commands.serve()).serveCommand(opts, io))(),
    );
  program
    .command('check')
    .description('validate a config and compile its templates and transforms')
    .option('-c, --config <file>', 'config file (JSON5); default: $HOOKD_CONFIG, else ./hookd.json5')
    .option('--json', 'print the findings as JSON (for editors and scripts)')
    .action((opts: { config?: string; json?: boolean }) =>
      run(async () => (await commands.check()).checkCommand(opts, io))(),
    );
  program
    .command('init')
    .description('write a folder of your own: hookd.json5, a typed example transform with its fixtures, package.json')
    .argument('[dir]', 'the folder (made when missing)', '.')
    .option('--force', "overwrite the scaffold's files when they exist")
    .action((dir: string, opts: { force?: boolean }) =>
      run(async () => (await commands.init()).initCommand(dir, opts, io))(),
    );
  program
    .command('test')
    .description("run the config's fixtures (<transformsDir>/fixtures/<mapping>/<case>.json) through their mappings")
    .argument('[mappings...]', 'mapping ids (default: every folder of fixtures)')
    .option('-u, --update', 'record what each case becomes as its expect')
    .option('-c, --config <file>', 'config file (JSON5); default: $HOOKD_CONFIG, else ./hookd.json5')
    .action((names: string[], opts: TestOptions) =>
      run(async () => (await commands.test()).testCommand(names, opts, io))(),
    );
  program
    .command('try')
    .description('dry-run the mapping engine for a hook name and print the resulting actions (nothing is dispatched)')
    .argument('<name>', 'the hook name, as in /hooks/<name>')
    .requiredOption('-p, --payload <file>', 'the request body (a file, or - for standard input)')
    .option('-H, --header <K:V>', 'a request header (repeatable)', collect, [])
    .option('-q, --query <K=V>', 'a query parameter (repeatable)', collect, [])
    .option('--json', "print an error as JSON on stdout, with a failed transform's location, frames and code frame")
    .option('-c, --config <file>', 'config file (JSON5); default: $HOOKD_CONFIG, else ./hookd.json5')
    .action((name: string, opts: TryOptions) => run(async () => (await commands.try()).tryCommand(name, opts, io))());
  program
    .command('send')
    .description(
      "send a test delivery to a running gateway, signed with the mapping's scheme and secret (or the hook token), and print what it became",
    )
    .argument('<name>', 'the hook name, as in /hooks/<name>')
    .option('-p, --payload <file>', 'the request body (a file, or - for standard input); default {}')
    .option('-f, --fixture <file>', 'a recorded delivery: { "headers": {…}, "payload": {…} } or a raw "body"')
    .option('-H, --header <K:V>', 'a request header (repeatable)', collect, [])
    .option('-u, --url <url>', "the gateway's URL; default $HOOKD_URL, else http://<server.host>:<server.port>")
    .option('-w, --wait <seconds>', 'how long to wait for the runs it starts (0: do not wait)', '30')
    .option('--json', 'print the answer and the runs as JSON')
    .option('-c, --config <file>', 'config file (JSON5); default: $HOOKD_CONFIG, else ./hookd.json5')
    .action((name: string, opts: SendOptions) =>
      run(async () => (await commands.send()).sendCommand(name, opts, io))(),
    );
  const presets = program.command('presets').description('the built-in preset plugins (docs/presets.md)');
  presets
    .command('list')
    .description("list the built-in presets, and the config's plugins")
    .option('-c, --config <file>', 'config file (JSON5); default: $HOOKD_CONFIG, else ./hookd.json5')
    .action((opts: { config?: string }) =>
      run(async () => (await commands.presets()).presetsListCommand(opts.config, io))(),
    );
  presets
    .command('new')
    .description('write a preset folder NAME/ in the current folder that passes presets test')
    .argument('<name>', 'the preset (lower-case letters, digits, dashes)')
    .action((name: string) => run(async () => (await commands.presets()).presetsNewCommand(name, io))());
  presets
    .command('show')
    .description("print a preset's README, options and mappings")
    .argument('<name>', 'the preset')
    .action((name: string) => run(async () => (await commands.presets()).presetsShowCommand(name, io))());
  presets
    .command('test')
    .description("replay presets' recorded fixtures through the engine; non-zero with a diff on any mismatch")
    .argument('[names...]', 'built-in presets by name, or preset folders by path (default: every built-in one)')
    .action((names: string[]) => run(async () => (await commands.presets()).presetsTestCommand(names, io))());
  const mail = program.command('mail').description('the mail preset and its watch flow');
  mail
    .command('watch')
    .description('watch the configured IMAP mailbox and post new mail to /hooks/mail (foreground)')
    .option('-c, --config <file>', 'config file (JSON5); default: $HOOKD_CONFIG, else ./hookd.json5')
    .action((opts: { config?: string }) => run(async () => (await commands.mailWatch()).mailWatchCommand(opts, io))());
  mail
    .command('setup')
    .description("write hooks.mail and enable the mail preset, keeping the file's comments")
    .requiredOption('--account <address>', 'the mail account')
    .option('--model <ref>', 'model for mail runs (provider/model)')
    .option('--thinking <level>', 'thinking level for mail runs')
    .option('--imap-host <host>', 'IMAP server to watch (enables hooks.mail.watch)')
    .option('--imap-port <port>', 'IMAP port (default 993, or 143 with --no-imap-secure)')
    .option('--no-imap-secure', 'plain IMAP instead of TLS')
    .option('--imap-user <user>', 'IMAP user name (default: the account)')
    .option('--imap-password-env <name>', 'environment variable holding the IMAP password', 'HOOKD_IMAP_PASSWORD')
    .option('--mailbox <name>', 'mailbox to watch (default INBOX)')
    .option('-c, --config <file>', 'config file to edit; default: $HOOKD_CONFIG, else ./hookd.json5')
    .action((opts: MailSetupOptions) => run(async () => (await commands.mailSetup()).mailSetupCommand(opts, io))());
  const GATEWAY_URL = "the gateway's URL; default $HOOKD_URL, else http://<server.host>:<server.port>";
  program
    .command('requests')
    .description('list the request log of a running gateway, newest first (needs the gateway token)')
    .option('--failed', 'only requests answered 4xx or 5xx')
    .option('--path <name>', 'only this hook name (wake, agent, github, …)')
    .option('--status <status>', 'only this status (500) or class (5xx)')
    .option('--since <when>', 'received since: a duration back (30m, 1h, 7d) or an ISO time')
    .option('-n, --limit <n>', 'at most this many', '50')
    .option('-u, --url <url>', GATEWAY_URL)
    .option('--json', 'print the API answer as JSON')
    .option('-c, --config <file>', 'config file (JSON5); default: $HOOKD_CONFIG, else ./hookd.json5')
    .action((opts: RequestsOptions) => run(async () => (await commands.log()).requestsCommand(opts, io))());
  program
    .command('replay')
    .description(
      'replay logged requests through the current mappings and transforms, under the auth rules and the idempotency key each was received with',
    )
    .argument('[ids...]', 'request ids (the x-request-id of their answers)')
    .option('--failed', 'every request that failed on our side (5xx) and was not replayed yet, oldest first')
    .option('--since <when>', 'with --failed: received since (30m, 1h, 7d, or an ISO time)')
    .option('-n, --limit <n>', 'with --failed: at most this many', '100')
    .option('--force', "run anew, even when the request (its sender's retry, or another replay) already ran")
    .option('-u, --url <url>', GATEWAY_URL)
    .option('--json', 'print the answers as JSON')
    .option('-c, --config <file>', 'config file (JSON5); default: $HOOKD_CONFIG, else ./hookd.json5')
    .action((ids: string[], opts: ReplayOptions) =>
      run(async () => (await commands.log()).replayCommand(ids, opts, io))(),
    );
  const runs = program
    .command('runs')
    .description('list the agent runs of a running gateway, newest first; `runs cancel <id>` cancels one')
    .option(
      '--status <status>',
      'queued, running, ok, error, timeout, cancelled, or failed (error, timeout or a failed delivery)',
    )
    .option('-n, --limit <n>', 'at most this many', '50')
    .option('-u, --url <url>', GATEWAY_URL)
    .option('--json', 'print the API answer as JSON')
    .option('-c, --config <file>', 'config file (JSON5); default: $HOOKD_CONFIG, else ./hookd.json5')
    .action((opts: RunsOptions) => run(async () => (await commands.log()).runsCommand(opts, io))());
  runs
    .command('cancel')
    .description('cancel an unfinished run: its model call is aborted, nothing is delivered')
    .argument('<id>', 'the run id (runId of the hook answer, or from hookd runs)')
    .option('-u, --url <url>', GATEWAY_URL)
    .option('--json', 'print the API answer as JSON')
    .option('-c, --config <file>', 'config file (JSON5); default: $HOOKD_CONFIG, else ./hookd.json5')
    // `runs` declares the same options: whichever of the two took them, they count.
    .action((id: string, _opts: CancelOptions, command: Command) =>
      run(async () => (await commands.cancel()).cancelCommand(id, command.optsWithGlobals<CancelOptions>(), io))(),
    );
  program
    .command('token')
    .description('print a new random token')
    .action(() => run(async () => (await commands.token()).tokenCommand(io))());

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    if (isHookdError(err, 'CONFIG_INVALID')) {
      io.err(`hookd: ${err.message}`);
      return 1;
    }
    io.err(`hookd: ${io.env.HOOKD_DEBUG ? ((err as Error).stack ?? String(err)) : (err as Error).message}`);
    return 1;
  }
}
