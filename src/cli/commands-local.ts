import { CONFIG_OPTION, type CommandContext, collect, load, URL_OPTION } from './commands.js';
import type { MailSetupOptions } from './mail-setup.js';
import type { SendOptions } from './send.js';
import type { TestOptions } from './test.js';
import type { TryOptions } from './try.js';

/** The commands that run the gateway, or work on a config and its folder (docs/cli.md). */

function serve({ program, run, io }: CommandContext): void {
  program
    .command('serve')
    .description('run the gateway (the embedded default without a config)')
    .option(
      '-c, --config <file>',
      'config file (JSON5); default: $HOOKD_CONFIG, else ./hookd.json5, else the embedded default',
    )
    .option('--no-mail-watch', 'do not start the mail watcher even when hooks.mail.watch is configured')
    .action((opts: { config?: string; mailWatch?: boolean }) =>
      run(async () => (await load.serve()).serveCommand(opts, io)),
    );
}

function checkAndInit({ program, run, io }: CommandContext): void {
  program
    .command('check')
    .description('validate a config and compile its templates and transforms')
    .option(...CONFIG_OPTION)
    .option('--json', 'print the findings as JSON (for editors and scripts)')
    .action((opts: { config?: string; json?: boolean }) =>
      run(async () => (await load.check()).checkCommand(opts, io)),
    );
  program
    .command('init')
    .description('write a folder of your own: hookd.json5, a typed example transform with its fixtures, package.json')
    .argument('[dir]', 'the folder (made when missing)', '.')
    .option('--force', "overwrite the scaffold's files when they exist")
    .action((dir: string, opts: { force?: boolean }) =>
      run(async () => (await load.init()).initCommand(dir, opts, io)),
    );
}

function test({ program, run, io }: CommandContext): void {
  program
    .command('test')
    .description("run the config's fixtures (<transformsDir>/fixtures/<mapping>/<case>.json) through their mappings")
    .argument('[mappings...]', 'mapping ids (default: every folder of fixtures)')
    .option('-u, --update', 'record what each case becomes as its expect')
    .option('--json', 'print every case and its outcome as JSON')
    .option(...CONFIG_OPTION)
    .action((names: string[], opts: TestOptions) => run(async () => (await load.test()).testCommand(names, opts, io)));
}

function tryAndSend({ program, run, io }: CommandContext): void {
  program
    .command('try')
    .description('dry-run the mapping engine for a hook name and print the resulting actions (nothing is dispatched)')
    .argument('<name>', 'the hook name, as in /hooks/<name>')
    .option('-p, --payload <file>', 'the request body (a file, or - for standard input)')
    .option(
      '-f, --fixture <file>',
      'a recorded delivery: { headers?, payload } (a folder fixture) or { headers, body }',
    )
    .option('-H, --header <K:V>', 'a request header (repeatable)', collect, [])
    .option('-q, --query <K=V>', 'a query parameter (repeatable)', collect, [])
    .option('--json', "print an error as JSON on stdout, with a failed transform's location, frames and code frame")
    .option(...CONFIG_OPTION)
    .action((name: string, opts: TryOptions) => run(async () => (await load.try()).tryCommand(name, opts, io)));
  program
    .command('send')
    .description(
      "send a test delivery to a running gateway, signed with the mapping's scheme and secret (or the hook token), and print what it became",
    )
    .argument('<name>', 'the hook name, as in /hooks/<name>')
    .option('-p, --payload <file>', 'the request body (a file, or - for standard input); default {}')
    .option(
      '-f, --fixture <file>',
      'a recorded delivery: { headers?, payload } (a folder fixture) or { headers, body }',
    )
    .option('-H, --header <K:V>', 'a request header (repeatable)', collect, [])
    .option(...URL_OPTION)
    .option('-w, --wait <seconds>', 'how long to wait for the runs it starts (0: do not wait)', '30')
    .option('--json', 'print the answer and the runs as JSON')
    .option(...CONFIG_OPTION)
    .action((name: string, opts: SendOptions) => run(async () => (await load.send()).sendCommand(name, opts, io)));
}

function presets({ program, run, io }: CommandContext): void {
  const group = program.command('presets').description('the built-in preset plugins (docs/presets.md)');
  group
    .command('list')
    .description("list the built-in presets, and the config's plugins")
    .option(...CONFIG_OPTION)
    .action((opts: { config?: string }) => run(async () => (await load.presets()).presetsListCommand(opts.config, io)));
  group
    .command('new')
    .description('write a preset folder NAME/ in the current folder that passes presets test')
    .argument('<name>', 'the preset (lower-case letters, digits, dashes)')
    .action((name: string) => run(async () => (await load.presets()).presetsNewCommand(name, io)));
  group
    .command('show')
    .description("print a preset's README, options and mappings")
    .argument('<name>', 'the preset')
    .action((name: string) => run(async () => (await load.presets()).presetsShowCommand(name, io)));
  group
    .command('test')
    .description("replay presets' recorded fixtures through the engine; non-zero with a diff on any mismatch")
    .argument('[names...]', 'built-in presets by name, or preset folders by path (default: every built-in one)')
    .action((names: string[]) => run(async () => (await load.presets()).presetsTestCommand(names, io)));
}

function mail({ program, run, io }: CommandContext): void {
  const group = program.command('mail').description('the mail preset and its watch flow');
  group
    .command('watch')
    .description('watch the configured IMAP mailbox and post new mail to /hooks/mail (foreground)')
    .option(...CONFIG_OPTION)
    .action((opts: { config?: string }) => run(async () => (await load.mailWatch()).mailWatchCommand(opts, io)));
  group
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
    .action((opts: MailSetupOptions) => run(async () => (await load.mailSetup()).mailSetupCommand(opts, io)));
}

function tokenAndCompletion({ program, run, io }: CommandContext): void {
  program
    .command('token')
    .description('print a new random token')
    .action(() => run(async () => (await load.token()).tokenCommand(io)));
  program
    .command('completion')
    .description('print a shell completion script: source <(hookd completion bash)')
    .argument('<shell>', 'bash, zsh or fish')
    .action((shell: string) => run(async () => (await load.completion()).completionCommand(shell, program, io)));
}

/** Adds serve, check, init, test, try, send, presets and mail to the program. */
export function defineLocalCommands(context: CommandContext): void {
  serve(context);
  checkAndInit(context);
  test(context);
  tryAndSend(context);
  presets(context);
  mail(context);
}

/** Adds token and completion: the last in the list of commands. */
export function defineUtilityCommands(context: CommandContext): void {
  tokenAndCompletion(context);
}
