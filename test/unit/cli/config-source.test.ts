import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configFileOf, resolveConfig } from '../../../src/cli/config-source.js';
import type { CliIo } from '../../../src/cli/io.js';
import { makeTempDir } from '../../helpers/hookd-process.js';

let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir();
});
afterEach(() => temp.cleanup());

const io = (env: NodeJS.ProcessEnv = {}): CliIo => ({ out: () => {}, err: () => {}, env, cwd: temp.dir });
const writeConfig = () =>
  writeFileSync(join(temp.dir, 'hookd.json5'), "{ hooks: { enabled: true, token: '${HOOK_TOKEN}' } }");

describe('which config a command reads (docs/configuration.md)', () => {
  it('takes ./hookd.json5 when neither --config nor HOOKD_CONFIG names one, and the embedded default without it', () => {
    expect(configFileOf(undefined, io())).toBeUndefined();
    expect(resolveConfig(undefined, io(), { createSecrets: false }).embedded).toBeDefined();
    writeConfig();
    expect(configFileOf(undefined, io())).toBe(join(temp.dir, 'hookd.json5'));
    expect(configFileOf('other.json5', io({ HOOKD_CONFIG: 'env.json5' }))).toBe(join(temp.dir, 'other.json5'));
    expect(configFileOf(undefined, io({ HOOKD_CONFIG: 'env.json5' }))).toBe(join(temp.dir, 'env.json5'));
  });

  it("fills ${NAME} from a .env beside the config, the process's own environment first", () => {
    writeConfig();
    writeFileSync(join(temp.dir, '.env'), '# the hook token\nHOOK_TOKEN=from-the-dotenv-file-0123\n');
    const fromFile = resolveConfig(undefined, io(), { createSecrets: false });
    expect(fromFile.embedded).toBeUndefined();
    expect(fromFile.config.hooks.token).toBe('from-the-dotenv-file-0123');
    const fromEnv = resolveConfig(undefined, io({ HOOK_TOKEN: 'from-the-environment-0123' }), { createSecrets: false });
    expect(fromEnv.config.hooks.token).toBe('from-the-environment-0123');
  });
});
