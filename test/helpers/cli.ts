import type { CliIo } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';

/** Runs the CLI in-process with captured output. */
export async function runCli(
  argv: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = {
    out: (line) => {
      out += `${line}\n`;
    },
    err: (line) => {
      err += `${line}\n`;
    },
    env: options.env ?? {},
    cwd: options.cwd,
  };
  const code = await main(argv, io);
  return { code, out, err };
}
