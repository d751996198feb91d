import { Command, CommanderError } from 'commander';
import { ConfigError } from '../errors.js';
import { checkCommand } from './check.js';
import { type CliIo, processIo } from './io.js';
import { serveCommand } from './serve.js';
import { tokenCommand } from './token.js';

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
    .option('-c, --config <file>', 'config file (JSON5); default: $HOOKD_CONFIG, else the embedded default')
    .action((opts: { config?: string }) => run(() => serveCommand(opts, io))());
  program
    .command('check')
    .description('validate a config and compile its templates and transforms')
    .option('-c, --config <file>', 'config file (JSON5); default: $HOOKD_CONFIG')
    .action((opts: { config?: string }) => run(() => checkCommand(opts, io))());
  program
    .command('token')
    .description('print a new random token')
    .action(() => run(() => tokenCommand(io))());

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    if (err instanceof ConfigError) {
      io.err(`hookd: ${err.message}`);
      return 1;
    }
    io.err(`hookd: ${(err as Error).stack ?? String(err)}`);
    return 1;
  }
}
