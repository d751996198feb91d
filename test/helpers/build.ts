import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './hookd-process.js';

/**
 * vitest's global setup: builds dist/ from the current src/ before any test runs, so that the
 * hookd processes e2e tests spawn start from the bundle, as an installed hookd does, instead of
 * compiling src/ through tsx each time (about 450 ms less per start). bin/hookd.js still runs
 * src/ when a file of it changes after this build.
 */
export function setup(): void {
  execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], { stdio: 'inherit' });
}
