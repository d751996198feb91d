import { pathToFileURL } from 'node:url';

const PRELOAD = pathToFileURL(new URL('./skewed-clock.mjs', import.meta.url).pathname).href;

/** The environment of a spawned hookd whose wall clock is `skewMs` off (negative: behind), as a host's wrong clock. */
export function skewedClockEnv(skewMs: number): NodeJS.ProcessEnv {
  return {
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${PRELOAD}`.trim(),
    HOOKD_TEST_CLOCK_SKEW_MS: String(skewMs),
  };
}
