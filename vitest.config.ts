import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'transforms/**/*.test.ts'],
    // Spawned hookd processes start from a fresh dist/ (see test/helpers/build.ts).
    globalSetup: ['test/helpers/build.ts'],
    // isolated-vm needs Node's startup snapshot off; worker threads cannot take the flag.
    pool: 'forks',
    // Two files at once on two cores (the default leaves one core to the main process, which
    // idles). Three cut the wall time from 87 to 74 s here, but made timing-bound e2e tests fail
    // on a fresh clone.
    maxWorkers: 2,
    execArgv: ['--no-node-snapshot'],
    // What a test may take before it counts as hung: an e2e test is many steps (a gateway
    // started, a CLI spawned ten times), each several times slower on a loaded machine, where
    // 20 s were missed. Bounds that are the product's own are stated in the tests.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // expect.poll waits for a state to be reached, not for a deadline: its default of 1 s was
    // missed on a loaded machine (a run done but seen after 1 s). A poll that bounds a time
    // says so with its own timeout.
    expect: { poll: { timeout: 10_000 } },
  },
});
