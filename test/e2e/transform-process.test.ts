import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HookdProcess, makeTempDir, startHookd, writeConfig } from '../helpers/hookd-process.js';
import { call, until } from '../helpers/http.js';
import { childrenOf } from '../helpers/transforms.js';

/**
 * `hooks.transforms.isolation: "process"` (docs/transforms.md#isolation): a transform that makes
 * V8 abort, or that holds its thread in a built-in past the time limit, ends the transform
 * process, not the gateway. Its call fails (500, kept for replay), the process starts again, and
 * other mappings' transforms go on.
 */

const HOOK_TOKEN = 'process-hook-token-0123456789';
const GATEWAY_TOKEN = 'process-gateway-token-0123456789';
const HOOK = { authorization: `Bearer ${HOOK_TOKEN}` };
const ADMIN = { authorization: `Bearer ${GATEWAY_TOKEN}` };

// One allocation larger than the room below memoryLimitMb: V8 aborts the process (SIGABRT).
const GREEDY = `export default function transform({ payload }: { payload: { count?: number } }) {
  if (payload.count) return { message: String(new Array(payload.count).fill(0).length) };
  return { message: 'greedy says hello' };
}
`;
// Formatting a BigInt of millions of digits never checks the time limit.
const STUCK = `export default function transform({ payload }: { payload: { digits?: number } }) {
  if (payload.digits) return { message: (10n ** BigInt(payload.digits)).toString().slice(0, 5) };
  return { message: 'stuck says hello' };
}
`;
const FINE = `export default function transform({ payload }: { payload: { n: number } }) {
  console.info(\`fine saw \${payload.n}\`);
  return { message: \`fine \${payload.n}\` };
}
`;

let hookd: HookdProcess;
let dir: string;
const cleanups: (() => Promise<unknown> | unknown)[] = [];

beforeAll(async () => {
  const temp = makeTempDir();
  cleanups.push(temp.cleanup);
  dir = temp.dir;
  mkdirSync(join(dir, 'transforms'));
  writeFileSync(join(dir, 'transforms/greedy.ts'), GREEDY);
  writeFileSync(join(dir, 'transforms/stuck.ts'), STUCK);
  writeFileSync(join(dir, 'transforms/fine.ts'), FINE);
  const mapping = (id: string) => ({ id, match: { path: id }, action: 'wake', transform: { module: `${id}.ts` } });
  hookd = await startHookd({
    dir,
    config: {
      gateway: { auth: { token: GATEWAY_TOKEN } },
      hooks: {
        enabled: true,
        token: HOOK_TOKEN,
        transformsDir: 'transforms',
        // V8's abort comes after last-resort collections (0.75 s here; over 2 s on a machine
        // loaded by the rest of the suite, which a 1 s limit took for a call unanswered), and the
        // stuck BigInt holds its thread 7.5 s: 2 s (+ 1 s of grace) lies between, with room both ways.
        transforms: { isolation: 'process', memoryLimitMb: 32, timeoutMs: 2000 },
        mappings: [mapping('greedy'), mapping('stuck'), mapping('fine')],
      },
      agents: { defaults: { heartbeat: { every: '0' } } },
    },
  });
  cleanups.push(() => hookd.stop());
}, 60_000);

afterAll(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const hook = (path: string, json: unknown) => call(`${hookd.url}/hooks/${path}`, { headers: HOOK, json });
/**
 * A hook's answer once the transform process took the call: on a slow machine a call can find it
 * still starting again, and is refused (a sender retries).
 */
async function taken(path: string, json: unknown) {
  let answer = await hook(path, json);
  for (let i = 0; i < 20 && /restarting and did not take/.test(String(answer.body.error)); i++)
    answer = await hook(path, json);
  return answer;
}

describe('transforms in a process of their own', () => {
  it('answer as they do inline', async () => {
    const answer = await hook('fine', { n: 1 });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ ok: true });
    // Its console lines reach the gateway's log, under the gateway's pid and the mapping's id.
    await until(async () => (hookd.stdout().includes('fine saw 1') ? true : undefined), 'the console line');
    const line = JSON.parse(
      hookd
        .stdout()
        .split('\n')
        .find((l) => l.includes('fine saw 1')) as string,
    );
    expect(line).toMatchObject({ pid: hookd.child.pid, mapping: 'fine', source: 'console', level: 30 });
  });

  it('are compiled again when their file changes', async () => {
    writeFileSync(join(dir, 'transforms/fine.ts'), FINE.replace('fine saw', 'finer saw'));
    await until(async () => {
      await hook('fine', { n: 5 });
      return hookd.stdout().includes('finer saw 5') ? true : undefined;
    }, 'the new version');
    writeFileSync(join(dir, 'transforms/fine.ts'), FINE);
  });

  it('survive an abort out of memory: that call fails and is kept, the gateway and the next calls go on', async () => {
    const failed = await hook('greedy', { count: 2 ** 27 });
    expect(failed.status).toBe(500);
    expect(failed.body).toMatchObject({ code: 'TRANSFORM_FAILED' });
    expect(String(failed.body.error)).toMatch(/the transform process ended \(SIGABRT\) while this call ran/);
    expect((await call(`${hookd.url}/healthz`, { method: 'GET' })).status).toBe(200);
    // The next call waits for the new process within its time limit… or, on a slow machine, is
    // refused while it starts: a sender retries.
    expect((await taken('fine', { n: 2 })).status).toBe(200);
    expect((await taken('greedy', {})).status).toBe(200);
    // The failed request is kept, for a replay once the transform is fixed.
    const failures = await call(`${hookd.url}/api/requests?path=greedy&limit=10`, { method: 'GET', headers: ADMIN });
    expect(JSON.stringify(failures.body)).toContain('the transform process ended');
    expect(hookd.child.exitCode).toBeNull();
  }, 60_000);

  it('stop a transform held in a built-in past its time limit, without holding the gateway', async () => {
    const started = Date.now();
    const stuck = hook('stuck', { digits: 30_000_000 });
    // Meanwhile the gateway answers at once: its event loop is not the one held.
    const health = await call(`${hookd.url}/healthz`, { method: 'GET' });
    expect(health.status).toBe(200);
    const answer = await stuck;
    expect(answer.status).toBe(500);
    expect(String(answer.body.error)).toMatch(/no answer within 3000 ms; the transform process was stopped/);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect((await taken('fine', { n: 3 })).status).toBe(200);
  }, 60_000);

  it("refuse for a while the calls of a mapping that keeps ending the process, and only that mapping's", async () => {
    // The first abort was one strike: two more make three.
    for (let i = 0; i < 2; i++) {
      const answer = await taken('greedy', { count: 2 ** 27 });
      expect(String(answer.body.error)).toMatch(/the transform process ended/);
    }
    const refused = await taken('greedy', {});
    expect(refused.status).toBe(500);
    expect(String(refused.body.error)).toMatch(/its calls are refused until/);
    expect((await taken('fine', { n: 4 })).status).toBe(200);
    expect(hookd.stderr()).toMatch(/heap|memory/i);
    // Each end is counted where a scrape sees it: three aborts, one stopped for want of an answer.
    const metrics = (await call(`${hookd.url}/metrics`, { method: 'GET' })).text;
    expect(metrics).toContain('hookd_transform_process_ends_total{end="SIGABRT"} 3');
    expect(metrics).toContain('hookd_transform_process_ends_total{end="no answer"} 1');
  }, 60_000);

  it('outlives a signal sent to the whole group, and ends with the gateway', async () => {
    const [pid] = childrenOf(hookd.child.pid as number, 'transform-child');
    expect(pid).toBeDefined();
    const ends = () => hookd.stdout().split('the transform process ended;').length;
    const before = ends();
    // What a terminal's Ctrl-C sends to every process of the group: the gateway decides when it ends.
    process.kill(pid as number, 'SIGINT');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(childrenOf(hookd.child.pid as number, 'transform-child')).toEqual([pid]);
    expect(ends()).toBe(before);
    await hookd.stop();
    await until(async () => (alive(pid as number) ? undefined : true), 'the transform process to end');
  });
});

// Waits `ms` without using a core (Atomics, kept by allowWasm): holds its mapping's one call in the process.
const WAIT = `export default function transform({ payload }: { payload: { ms: number } }) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, payload.ms);
  return { message: \`waited \${payload.ms}\` };
}
`;

describe('transforms in a process of their own, when a config reload replaces the mappings', () => {
  it('answer the calls waiting for their window 503 TRANSFORM_BUSY with a Retry-After, never a failure kept', async () => {
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    mkdirSync(join(temp.dir, 'transforms'));
    writeFileSync(join(temp.dir, 'transforms/wait.ts'), WAIT);
    const config = (ids: string[]) => ({
      gateway: { auth: { token: GATEWAY_TOKEN } },
      hooks: {
        enabled: true,
        token: HOOK_TOKEN,
        transformsDir: 'transforms',
        transforms: { isolation: 'process', timeoutMs: 15_000, maxInFlight: 1, allowWasm: true },
        mappings: [
          { id: 'wait', match: { path: 'wait' }, action: 'wake', transform: { module: 'wait.ts' } },
          ...ids.map((id) => ({ id, match: { path: id }, action: 'wake', textTemplate: 'x' })),
        ],
      },
      agents: { defaults: { heartbeat: { every: '0' } } },
    });
    const gateway = await startHookd({ dir: temp.dir, config: config([]) });
    cleanups.push(() => gateway.stop());
    const send = (ms: number) => call(`${gateway.url}/hooks/wait`, { headers: HOOK, json: { ms } });
    // 8 s in the process (a loaded machine's reload, with a new process to start, has that long);
    // three more wait for the window meanwhile.
    const running = send(8000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const waiting = [send(1), send(1), send(1)];
    // A reload that only adds a mapping without a transform: the mappings, and their host, are replaced.
    writeConfig(temp.dir, config(['other']));
    await until(
      async () => (gateway.stdout().includes('"msg":"configuration reloaded"') ? true : undefined),
      'the reload',
      20_000,
    );
    for (const answer of await Promise.all(waiting)) {
      expect([answer.status, answer.body.code, answer.headers['retry-after']]).toEqual([503, 'TRANSFORM_BUSY', '15']);
    }
    expect((await running).status).toBe(200);
    // Busy is not the transform's failure: none is kept for replay.
    const logged = await call(`${gateway.url}/api/requests?path=wait&limit=10`, { method: 'GET', headers: ADMIN });
    const records = logged.body.requests as { status: number }[];
    expect(records.map((r) => r.status).sort()).toEqual([200, 503, 503, 503]);
  }, 60_000);
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
