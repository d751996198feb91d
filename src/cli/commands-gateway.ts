import type { Command } from 'commander';
import type { AlertsOptions } from './alerts.js';
import type { CancelOptions } from './cancel.js';
import { CONFIG_OPTION, type CommandContext, load, URL_OPTION } from './commands.js';
import type { ReplayOptions } from './replay.js';
import type { RequestsOptions } from './requests.js';
import type { RunsOptions } from './runs.js';

/** The commands that read a running gateway's admin API with the gateway token (docs/cli.md). */

function requests({ program, run, io }: CommandContext): void {
  program
    .command('requests')
    .description('list the request log of a running gateway, newest first; --follow tails it live')
    .option(
      '-f, --follow',
      'print the last requests (--limit: default 10, or all of --since), then each new one as it is logged',
    )
    .option('--failed', 'only requests answered 4xx or 5xx')
    .option('--path <name>', 'only this hook name (wake, agent, github, …)')
    .option('-m, --mapping <id>', 'only requests this mapping took (its id)')
    .option('-e, --event-type <type>', 'only this event type (push, payment_intent.succeeded, …)')
    .option('--status <status>', 'only this status (500) or class (5xx)')
    .option('--since <when>', 'received since: a duration back (30m, 1h, 7d) or an ISO time')
    .option('-n, --limit <n>', 'at most this many (default 50; 10 to start --follow)')
    .option(...URL_OPTION)
    .option('--json', 'print the API answer as JSON; with --follow, one JSON object a line')
    .option(...CONFIG_OPTION)
    .action((opts: RequestsOptions) => run(async () => (await load.requests()).requestsCommand(opts, io)));
}

function replay({ program, run, io }: CommandContext): void {
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
    .option(...URL_OPTION)
    .option('--json', 'print the answers as JSON')
    .option(...CONFIG_OPTION)
    .action((ids: string[], opts: ReplayOptions) =>
      run(async () => (await load.replay()).replayCommand(ids, opts, io)),
    );
}

/** `hookd runs [id]`, and `hookd runs cancel <id>`. */
function runs({ program, run, io }: CommandContext): void {
  const runsCommand = program
    .command('runs')
    .description('list the agent runs of a running gateway, newest first; with an id, one run and its timeline')
    .argument('[id]', 'a run id: its timeline (queued, started, every failed try, finished) and its delivery')
    .option(
      '--status <status>',
      'queued, running, ok, error, timeout, cancelled, or failed (error, timeout or a failed delivery)',
    )
    .option('-m, --mapping <id>', 'only the runs of this mapping (its id)')
    .option('-n, --limit <n>', 'at most this many', '50')
    .option(...URL_OPTION)
    .option('--json', 'print the API answer as JSON')
    .option(...CONFIG_OPTION)
    .action((id: string | undefined, opts: RunsOptions) =>
      run(async () => {
        const commands = await load.runs();
        return id === undefined ? commands.runsCommand(opts, io) : commands.runCommand(id, opts, io);
      }),
    );
  runsCommand
    .command('cancel')
    .description('cancel an unfinished run: its model call is aborted, nothing is delivered')
    .argument('<id>', 'the run id (runId of the hook answer, or from hookd runs)')
    .option(...URL_OPTION)
    .option('--json', 'print the API answer as JSON')
    .option(...CONFIG_OPTION)
    // `runs` declares the same options: whichever of the two took them, they count.
    .action((id: string, _opts: CancelOptions, command: Command) =>
      run(async () => (await load.cancel()).cancelCommand(id, command.optsWithGlobals<CancelOptions>(), io)),
    );
}

function alerts({ program, run, io }: CommandContext): void {
  program
    .command('alerts')
    .description('the alerts still open, then the latest alert messages (firings and recoveries)')
    .option('--open', 'only the alerts still open')
    .option('-n, --limit <n>', 'at most this many recent messages', '20')
    .option(...URL_OPTION)
    .option('--json', 'print { open, recent } as JSON')
    .option(...CONFIG_OPTION)
    .action((opts: AlertsOptions) => run(async () => (await load.alerts()).alertsCommand(opts, io)));
}

/** Adds requests, replay, runs and alerts to the program. */
export function defineGatewayCommands(context: CommandContext): void {
  requests(context);
  replay(context);
  runs(context);
  alerts(context);
}
