import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * Runs an ES module `script` (its TypeScript imports through tsx) in a node process of its own,
 * where nothing else has touched the heap or started threads; resolves with what it printed.
 */
export async function runScript(script: string, nodeArgs: readonly string[] = []): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [
    ...nodeArgs,
    '--import',
    'tsx',
    '--input-type=module',
    '-e',
    script,
  ]);
  return stdout;
}
