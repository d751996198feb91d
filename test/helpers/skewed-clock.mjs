// Preloaded into a spawned hookd (`node --import`, see `skewedClockEnv` in skewed-clock.ts): its
// wall clock runs HOOKD_TEST_CLOCK_SKEW_MS off the machine's, as on a host whose clock is wrong.
// `Date.now()` and `new Date()` are moved; timers and `performance.now()` are not.
const skewMs = Number(process.env.HOOKD_TEST_CLOCK_SKEW_MS ?? 0);
const RealDate = Date;
const realNow = RealDate.now.bind(RealDate);

class SkewedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(realNow() + skewMs);
    else super(...args);
  }

  static now() {
    return realNow() + skewMs;
  }
}

globalThis.Date = SkewedDate;
