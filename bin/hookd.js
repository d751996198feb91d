#!/usr/bin/env -S node --no-node-snapshot
// The hookd command. isolated-vm needs Node's startup snapshot off; when this file is run
// without the flag (e.g. `node bin/hookd.js`), it runs itself again with it.
// It runs the JavaScript that `npm run build` (and `npm ci`) wrote to dist/ while that is
// newer than every source file, and otherwise the TypeScript in src/ through tsx.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** dist/'s entry point when dist/ was built after the last change to src/, else undefined. */
function builtEntry() {
  const src = fileURLToPath(new URL('../src/', import.meta.url));
  let built;
  try {
    built = statSync(new URL('../dist/BUILT', import.meta.url)).mtimeMs;
  } catch {
    return undefined;
  }
  for (const file of readdirSync(src, { recursive: true })) {
    if (statSync(src + file).mtimeMs > built) return undefined;
  }
  return new URL('../dist/cli/main.js', import.meta.url).href;
}

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
  const built = builtEntry();
  if (!built) {
    const { register } = await import('tsx/esm/api');
    register();
  }
  const { main } = await import(built ?? '../src/cli/main.ts');
  process.exitCode = await main(process.argv.slice(2));
}
