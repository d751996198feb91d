import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'transforms/**/*.test.ts'],
    // Spawned hookd processes start from a fresh dist/ (see test/helpers/build.ts).
    globalSetup: ['test/helpers/build.ts'],
    // isolated-vm needs Node's startup snapshot off; worker threads cannot take the flag.
    pool: 'forks',
    // Three files at once on two cores: most of an end-to-end file's time is spent waiting on the
    // processes and servers it spawned (87 s of wall time with two, 74 s with three, here).
    maxWorkers: 3,
    execArgv: ['--no-node-snapshot'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
