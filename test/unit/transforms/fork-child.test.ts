import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { isHookdError } from '../../../src/errors.js';
import { startTransformProcess } from '../../../src/transforms/fork-child.js';
import { ROOT } from '../../helpers/hookd-process.js';
import { hostConfig } from '../../helpers/transforms.js';

/** A transform process's start as the gateway sees it (src/transforms/fork-child.ts). */
describe('a transform process that fails to start', () => {
  it('of a fault of its own puts the fault in the gateway log, and answers a caller without it', async () => {
    const config = loadConfig({
      data: {
        hooks: {
          transformsDir: join(ROOT, 'test/fixtures/transforms'),
          mappings: [{ id: 'toWake', transform: { module: 'hostile.ts', export: 'toWake' } }],
        },
      },
      env: {},
    });
    const lines: { msg: string; err?: string }[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    // Without its limits the process's host cannot make a sandbox: a TypeError, no code of hookd's.
    const options = { ...hostConfig(config), config: { hooks: { transformsDir: config.hooks.transformsDir } }, log };
    let ended: string | undefined;
    const child = startTransformProcess(options as never, new Map(), {
      log,
      onMessage: () => undefined,
      onExit: (_child, how) => {
        ended = how;
      },
    });
    const err = await child.ready.catch((e: unknown) => e);
    expect(isHookdError(err, 'TRANSFORM_FAILED') && err.params.reason).toBe(
      'the transform process failed (the gateway log has why)',
    );
    const logged = lines.find((line) => line.msg === 'the transform process could not start');
    expect(logged?.err).toMatch(/TypeError|Cannot read properties of undefined/);
    await expect.poll(() => ended, { timeout: 10_000 }).toBe('exit code 1');
  }, 60_000);
});
