#!/usr/bin/env -S node --no-node-snapshot
// The hookd command. isolated-vm needs Node's startup snapshot off; when this file is run
// without the flag (e.g. `node bin/hookd.js`), it runs itself again with it.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const flag = '--no-node-snapshot';
if (!process.execArgv.includes(flag) && !(process.env.NODE_OPTIONS ?? '').includes(flag)) {
  const child = spawn(
    process.execPath,
    [flag, ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    {
      stdio: 'inherit',
    },
  );
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('../src/cli/main.ts');
  process.exitCode = await main(process.argv.slice(2));
}
