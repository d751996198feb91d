import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { type HookdError, isHookdError } from '../../../src/errors.js';
import type { TransformHostOptions } from '../../../src/transforms/host.js';
import { createProcessTransformHost, type TransformHost } from '../../../src/transforms/index.js';
import { makeTempDir } from '../../helpers/hookd-process.js';
import { childrenOf, hostConfig, transformContext } from '../../helpers/transforms.js';

/**
 * The transform process as it ends and starts again (docs/transforms.md#isolation): whom an end
 * is blamed on, what a call that waited for a restart is given, what a restarted process loads
 * when a file broke meanwhile, and what a host being replaced lets finish.
 */

// `greedy` makes V8 abort (one allocation over memoryLimitMb, after last-resort collections that
// take over a second on a loaded machine: the tests that need the abort give it 4–5 s); `stuck` holds the thread in a
// built-in that never checks the time limit, as does `replaceBomb` (at once: a BigInt's power
// may be cut at the event loop's slice, its formatting never); `spin` runs for `ms` (the time limit cuts it).
const CALLS = `
export function greedy({ payload }: { payload: { count: number } }) {
  return { message: String(new Array(payload.count).fill(0).length) };
}
export function stuck({ payload }: { payload: { digits?: number } }) {
  if (!payload.digits) return { message: 'stuck says hello' };
  return { message: (10n ** BigInt(payload.digits)).toString().slice(0, 5) };
}
export function replaceBomb({ payload }: { payload: { size?: number } }) {
  if (payload.size) 'a'.repeat(payload.size).replace(/a/g, 'b');
  return null;
}
export function spin({ payload }: { payload: { ms: number } }) {
  const end = Date.now() + payload.ms;
  while (Date.now() < end) {}
  return { message: 'spun' };
}
`;
const FINE = `export default () => ({ message: 'fine' });`;

const context = transformContext;
const errorOf = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (err: HookdError<'TRANSFORM_FAILED'>) => err,
  );
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const fn of cleanups.splice(0).reverse()) fn();
});

/** A host in `process` isolation over a temp folder holding `files`, with mappings `greedy`, `stuck`, `spin`, `replaceBomb` and `fine`. */
async function hostOf(
  files: Record<string, string>,
  limits: Record<string, number>,
  extra: Partial<TransformHostOptions> = {},
): Promise<{ host: TransformHost; dir: string; ends: string[] }> {
  const { dir, cleanup } = makeTempDir();
  cleanups.push(cleanup);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const mapping = (id: string, module: string, name?: string) => ({
    id,
    transform: { module, ...(name ? { export: name } : {}) },
  });
  const config = loadConfig({
    data: {
      hooks: {
        transformsDir: dir,
        transforms: { memoryLimitMb: 32, ...limits },
        mappings: [
          mapping('greedy', 'calls.ts', 'greedy'),
          mapping('stuck', 'calls.ts', 'stuck'),
          mapping('spin', 'calls.ts', 'spin'),
          mapping('replaceBomb', 'calls.ts', 'replaceBomb'),
          mapping('fine', 'fine.ts'),
        ],
      },
    },
    env: {},
  });
  const ends: string[] = [];
  const host = await createProcessTransformHost({
    ...hostConfig(config),
    log: pino({ level: 'silent' }),
    onProcessEnd: (end) => ends.push(end),
    ...extra,
  });
  cleanups.push(() => host.close());
  return { host, dir, ends };
}

/** Mapping `key`'s answer once a process takes the call (calls made while it restarts may find it starting). */
async function taken(host: TransformHost, key: string, payload: unknown = {}): Promise<unknown> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      return await host.run(key, context(payload));
    } catch (err) {
      if (!/restart|ended/.test((err as Error).message) || Date.now() > deadline) throw err;
      await sleep(50);
    }
  }
}

/**
 * Rounds of a call of spin off the event loop and, 15 ms later, the bomb holding the process's
 * thread, which keeps spin's answer from being sent: spin's time is up first, but it is not to
 * blame. Until the bomb is refused: three rounds, and up to three more (a loaded machine can cut
 * the bomb itself at the slice before it reaches the replace: it then runs off the loop after
 * spin, which answers). `before` runs first in each round.
 */
async function bombBesideSpin(host: TransformHost, before: () => Promise<void>): Promise<void> {
  for (let round = 0; round < 6; round++) {
    await taken(host, 'fine');
    // Compiles the bomb's function (its call below goes straight into the replace), or finds it refused.
    const refused = await errorOf(host.run('replaceBomb', context({})));
    if (refused) return void expect(refused.message).toMatch(/its calls are refused until/);
    await before();
    const beside = errorOf(host.run('spin', context({ ms: 300 })));
    await sleep(15);
    await Promise.all([beside, errorOf(host.run('replaceBomb', context({ size: 2 ** 23 })))]);
  }
}

/** The gateway's transform processes (this process's children running src/transforms/child.ts). */
const transformProcesses = () => childrenOf(process.pid, 'transforms/child.ts');

describe('an end of the transform process', () => {
  it('that this side caused for want of an answer is blamed on the call that holds it, not on calls beside it', async () => {
    const { host } = await hostOf({ 'calls.ts': CALLS, 'fine.ts': FINE }, { timeoutMs: 300 });
    for (let round = 0; round < 3; round++) {
      await taken(host, 'fine');
      // `fine` is sent while `stuck` holds the process's thread, and is running when the process is
      // stopped; whichever of the two runs out of time first (the shorter budget), `stuck` is blamed.
      const stuckFirst = round !== 1;
      const stuck = errorOf(host.run('stuck', context({ digits: 20_000_000 }), stuckFirst ? 100 : undefined));
      const beside = errorOf(host.run('fine', context({}), stuckFirst ? undefined : 100));
      const [first, second] = stuckFirst ? [await stuck, await beside] : [await beside, await stuck];
      expect(first?.message).toMatch(/no answer within 1100 ms/);
      expect(second?.message).toMatch(/the transform process ended \(SIGKILL\) while this call ran/);
    }
    await expect(taken(host, 'fine')).resolves.toEqual({ message: 'fine' });
    await expect(host.run('stuck', context({}))).rejects.toThrow(/its calls are refused until/);
  }, 90_000);

  it('is blamed on the call that holds the thread, not on an older one running off the loop beside it', async () => {
    const { host } = await hostOf({ 'calls.ts': CALLS, 'fine.ts': FINE }, { timeoutMs: 1000 });
    await bombBesideSpin(host, async () => {
      // Two calls past the event loop's slice (after an isolate's cold ones) send spin's calls off it.
      await taken(host, 'spin', { ms: 1 });
      for (let i = 0; i < 5; i++) await host.run('spin', context({ ms: 20 }));
    });
    expect(await taken(host, 'spin', { ms: 1 })).toEqual({ message: 'spun' });
    await expect(host.run('replaceBomb', context({}))).rejects.toThrow(/its calls are refused until/);
  }, 120_000);

  it('is blamed on the call that holds the thread, not on an older one cut at the slice and run again off the loop', async () => {
    const { host } = await hostOf({ 'calls.ts': CALLS, 'fine.ts': FINE }, { timeoutMs: 1000 });
    // Each round starts a fresh process: spin's isolate is cold, so its calls are not off the loop
    // yet; this one is cut at the event loop's slice and runs again off it.
    await bombBesideSpin(host, async () => undefined);
    expect(await taken(host, 'spin', { ms: 1 })).toEqual({ message: 'spun' });
    await expect(host.run('replaceBomb', context({}))).rejects.toThrow(/its calls are refused until/);
  }, 120_000);

  it('is not brought about by a burst of quick calls: they wait their turn outside the process', async () => {
    const { host, ends } = await hostOf({ 'calls.ts': CALLS, 'fine.ts': FINE }, { timeoutMs: 1000 });
    // 3 s of calls on the process's loop, where a call's time and grace are 2 s: queued in the
    // process, the last thousands of them were answered too late and it was stopped.
    const answers = await Promise.allSettled(Array.from({ length: 1000 }, () => host.run('spin', context({ ms: 3 }))));
    expect(answers.filter((answer) => answer.status === 'rejected')).toEqual([]);
    expect(ends).toEqual([]);
  }, 60_000);

  it('leaves a call that waited for the restart only what is left of its time', async () => {
    const { host } = await hostOf({ 'calls.ts': CALLS, 'fine.ts': FINE }, { timeoutMs: 4000 });
    // Sent the moment the abort is seen: it waits for the next process.
    const waited = (await host
      .run('greedy', context({ count: 2 ** 27 }))
      .catch(() => errorOf(host.run('spin', context({ ms: 60_000 }))))) as HookdError<'TRANSFORM_FAILED'> | undefined;
    expect(isHookdError(waited, 'TRANSFORM_FAILED')).toBe(true);
    const given = waited?.params.timedOutAfterMs;
    // Either it was given less than the limit, or the restart took the whole of it.
    if (given === undefined) expect(waited?.message).toMatch(/did not take this call in time/);
    else expect(given).toBeLessThan(4000);
  }, 60_000);
});

describe('a restarted transform process', () => {
  it("runs a mapping's last good code when its file broke meanwhile, as a reload keeps it", async () => {
    const { host, dir } = await hostOf({ 'calls.ts': CALLS, 'fine.ts': FINE }, { timeoutMs: 5000 });
    writeFileSync(join(dir, 'fine.ts'), 'export default () => ({ message: ');
    await expect(host.run('greedy', context({ count: 2 ** 27 }))).rejects.toThrow(/SIGABRT/);
    expect(await taken(host, 'fine')).toEqual({ message: 'fine' });
  }, 60_000);

  it("runs a mapping's last good code when its file compiles but no longer loads", async () => {
    const { host, dir } = await hostOf({ 'calls.ts': CALLS, 'fine.ts': FINE }, { timeoutMs: 5000 });
    writeFileSync(join(dir, 'fine.ts'), `throw new Error('broken at load');\n${FINE}`);
    await expect(host.run('greedy', context({ count: 2 ** 27 }))).rejects.toThrow(/SIGABRT/);
    expect(await taken(host, 'fine')).toEqual({ message: 'fine' });
  }, 60_000);

  it('fails the calls waiting for it at once when it cannot start', async () => {
    // Loads only within the first seconds (10: a loaded machine took over 4 to start it): the
    // restart's load throws.
    const until = Date.now() + 10_000;
    const { host } = await hostOf(
      { 'calls.ts': `if (Date.now() > ${until}) throw new Error('loaded too late');\n${CALLS}`, 'fine.ts': FINE },
      { timeoutMs: 5000 },
    );
    await sleep(until - Date.now() + 100);
    // Timed from the end the greedy call sees, not its start: V8's abort alone took 2-5 s on a
    // loaded machine. A call that waited for its limit would take 5 s more than the restart.
    let started = 0;
    const waiting = (await host.run('greedy', context({ count: 2 ** 27 })).catch(() => {
      started = Date.now();
      return errorOf(host.run('fine', context({})));
    })) as HookdError | undefined;
    expect(waiting?.message).toMatch(/could not start/);
    expect(Date.now() - started).toBeLessThan(5000);
  }, 60_000);
});

// Top-level code that makes one allocation over the memory limit: V8 aborts as the module loads.
const ABORTS_AT_LOAD = `const table = new Array(2 ** 27).fill(0);\nexport default () => ({ message: 'v2 ' + table.length });`;

describe('new code whose load ends the transform process', () => {
  it('is set aside: its mapping runs its last good code, the others go on, and the log names it', async () => {
    const lines: { msg: string; mappings?: string[]; modules?: string[] }[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const { host, dir, ends } = await hostOf(
      { 'calls.ts': CALLS, 'fine.ts': FINE },
      { timeoutMs: 3000 },
      { watch: true, debounceMs: 50, log },
    );
    expect(await host.run('fine', context({}))).toEqual({ message: 'fine' });
    writeFileSync(join(dir, 'fine.ts'), ABORTS_AT_LOAD);
    await expect.poll(() => ends.length, { timeout: 20_000 }).toBe(1);
    expect(await taken(host, 'fine')).toEqual({ message: 'fine' });
    expect(await taken(host, 'spin', { ms: 1 })).toEqual({ message: 'spun' });
    // Loaded again, it would have ended the next process by now, and the one after.
    await sleep(3000);
    expect(ends).toEqual(['SIGABRT']);
    expect(lines.find((line) => line.msg.startsWith('the transform process ended while it loaded'))).toMatchObject({
      mappings: ['fine'],
      modules: ['fine.ts'],
    });
    // No call is blamed for it: none is refused.
    expect(await taken(host, 'fine')).toEqual({ message: 'fine' });
    // Other code in the file is loaded again.
    writeFileSync(join(dir, 'fine.ts'), `export default () => ({ message: 'v3' });`);
    await expect.poll(() => taken(host, 'fine'), { timeout: 20_000 }).toEqual({ message: 'v3' });
    expect(ends).toEqual(['SIGABRT']);
  }, 90_000);

  it('at the start names the mapping whose code it was loading', async () => {
    const err = await hostOf({ 'calls.ts': CALLS, 'fine.ts': ABORTS_AT_LOAD }, { timeoutMs: 3000 }).catch(
      (e: unknown) => e,
    );
    expect((err as Error).message).toMatch(/ended \(SIGABRT\) while it loaded the transform of mapping fine/);
  }, 60_000);
});

describe('a transform process host being replaced', () => {
  it('lets the calls it runs finish, refuses new ones, then its process goes', async () => {
    const before = transformProcesses().length;
    const { host, ends } = await hostOf({ 'calls.ts': CALLS, 'fine.ts': FINE }, { timeoutMs: 3000 });
    const running = host.run('spin', context({ ms: 300 }));
    host.close();
    // As an inline host's: busy, never run (a sender retries; nothing is kept as the transform's failure).
    expect(busy(await errorOf(host.run('fine', context({}))))).toEqual({ status: 503, retryAfter: '3' });
    await expect(running).resolves.toEqual({ message: 'spun' });
    const deadline = Date.now() + 5000;
    while (transformProcesses().length > before && Date.now() < deadline) await sleep(50);
    expect(transformProcesses()).toHaveLength(before);
    // Closed by the gateway: not an end of the process's own (hookd_transform_process_ends_total).
    // Its exit reaches the host a moment after the process is gone from /proc.
    await sleep(500);
    expect(ends).toEqual([]);
  }, 60_000);

  it('answers the calls waiting for their window 503 TRANSFORM_BUSY with a Retry-After, as an inline host does: they never ran', async () => {
    const { host } = await hostOf({ 'calls.ts': CALLS, 'fine.ts': FINE }, { timeoutMs: 3000, maxInFlight: 1 });
    const running = host.run('spin', context({ ms: 300 }));
    const waiting = [errorOf(host.run('spin', context({ ms: 1 }))), errorOf(host.run('spin', context({ ms: 1 })))];
    // What a config reload does once the new mappings took over.
    host.close();
    for (const err of await Promise.all(waiting)) expect(busy(err)).toEqual({ status: 503, retryAfter: '3' });
    await expect(running).resolves.toEqual({ message: 'spun' });
  }, 60_000);
});

/** A TRANSFORM_BUSY's status and Retry-After; anything else as it is. */
function busy(err: unknown): unknown {
  return isHookdError(err, 'TRANSFORM_BUSY') ? { status: err.statusCode, retryAfter: err.headers['retry-after'] } : err;
}
