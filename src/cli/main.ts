import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { isHookdError } from '../errors.js';
import { defineGatewayCommands } from './commands-gateway.js';
import { defineLocalCommands, defineUtilityCommands } from './commands-local.js';
import { printConfigProblems } from './findings.js';
import { type CliIo, processIo } from './io.js';

/** hookd's version, from its package.json (at the package root: dist/cli and src/cli sit as deep). */
export function hookdVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
    .version;
}

/** The program with every command, its output going to `io` (docs/cli.md). */
export function buildProgram(io: CliIo, run: (body: () => Promise<number>) => Promise<void>): Command {
  const program = new Command()
    .name('hookd')
    .description('Self-hosted webhook gateway for a personal AI-assistant runtime')
    .version(hookdVersion(), '-V, --version', "print hookd's version")
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });
  defineLocalCommands({ program, run, io });
  defineGatewayCommands({ program, run, io });
  defineUtilityCommands({ program, run, io });
  return program;
}

/** Runs the hookd CLI with `argv` (without node and script); resolves to the exit code. */
export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  let exitCode = 0;
  const program = buildProgram(io, async (body) => {
    exitCode = await body();
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    if (isHookdError(err, 'CONFIG_INVALID')) {
      printConfigProblems(err.params.problems, err.params.file, io);
      return 1;
    }
    io.err(`hookd: ${io.env.HOOKD_DEBUG ? ((err as Error).stack ?? String(err)) : (err as Error).message}`);
    return 1;
  }
}
