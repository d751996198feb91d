#!/usr/bin/env -S node --no-node-snapshot
// The hookd command. isolated-vm needs Node's startup snapshot off; when this file is run
// without the flag (e.g. `node bin/hookd.js`, or a shim that drops the shebang's options), it
// runs itself again with it.
// Installed from the package, it runs the JavaScript in dist/ (the package ships no src/). In
// a clone it runs dist/ while that is newer than every source file (`npm run build`, `npm
// start`), and otherwise the TypeScript in src/ through tsx, so an edit never runs stale code.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const DIST_ENTRY = new URL('../dist/cli/main.js', import.meta.url).href;

/** dist/'s entry point when there is no src/ or dist/ was built after its last change, else undefined. */
function builtEntry() {
  const src = fileURLToPath(new URL('../src/', import.meta.url));
  if (!existsSync(src)) return DIST_ENTRY;
  let built;
  try {
    built = statSync(new URL('../dist/BUILT', import.meta.url)).mtimeMs;
  } catch {
    return undefined;
  }
  for (const file of readdirSync(src, { recursive: true })) {
    if (statSync(src + file).mtimeMs > built) return undefined;
  }
  return DIST_ENTRY;
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
