import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runScript } from '../../helpers/script.js';

describe('watchTransformThreads', () => {
  it('lowers the priority of the threads isolated-vm starts for calls off the loop, and of no other', async () => {
    // In its own process, so that no isolated-vm thread exists before the gateway's own are taken.
    const script = `
      import { readdirSync, readFileSync } from 'node:fs';
      import ivm from 'isolated-vm';
      import { pino } from ${JSON.stringify(resolve('node_modules/pino/pino.js'))};
      import { watchTransformThreads } from ${JSON.stringify(resolve('src/transforms/priority.ts'))};
      const nice = (tid) => Number(readFileSync('/proc/self/task/' + tid + '/stat', 'utf8').split(') ')[1].split(' ')[16]);
      const threads = await watchTransformThreads({ log: pino({ level: 'silent' }), intervalMs: 60000 });
      const own = readdirSync('/proc/self/task');
      const isolate = new ivm.Isolate({ memoryLimit: 16 });
      const context = await isolate.createContext();
      await context.eval('const end = Date.now() + 50; while (Date.now() < end) {}', { timeout: 1000 });
      const lowered = threads.lowerNew();
      const added = readdirSync('/proc/self/task').filter((tid) => !own.includes(tid));
      threads.stop();
      process.stdout.write(JSON.stringify({ lowered, own: own.map(nice), added: added.map(nice), again: threads.lowerNew() }));
    `;
    const stdout = await runScript(script, ['--no-node-snapshot']);
    const { lowered, own, added, again } = JSON.parse(stdout) as {
      lowered: number;
      own: number[];
      added: number[];
      again: number;
    };
    expect(lowered).toBeGreaterThan(0);
    expect(own.every((n) => n === 0)).toBe(true);
    expect(added.length).toBeGreaterThan(0);
    expect(added.every((n) => n === 10)).toBe(true);
    // A thread is lowered once.
    expect(again).toBe(0);
  });
});
