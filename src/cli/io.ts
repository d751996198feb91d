import { terminalSafe } from './terminal-text.js';

/** Where a command writes; tests pass their own. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/**
 * The process's own stdout, stderr, environment and folder. Every line is terminal-safe: no
 * text a plugin or a sender wrote can send the terminal a control sequence.
 */
export const processIo: CliIo = {
  out: (line) => process.stdout.write(`${terminalSafe(line)}\n`),
  err: (line) => process.stderr.write(`${terminalSafe(line)}\n`),
  env: process.env,
  cwd: process.cwd(),
};
