import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../../../src/config/validator.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const cache = join(ROOT, 'node_modules/.cache');
mkdirSync(cache, { recursive: true });
const dir = mkdtempSync(join(cache, 'hookd-validator-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Validate = ((data: unknown) => boolean) & { errors?: unknown[] | null };

/** The validator the build puts in dist/, loaded as the bundle loads it. */
async function precompiled(): Promise<Validate> {
  const { configValidatorModule } = (await import(pathToFileURL(join(ROOT, 'scripts/config-validator.mjs')).href)) as {
    configValidatorModule: (root: string) => Promise<string>;
  };
  const file = join(dir, 'validator.mjs');
  writeFileSync(
    file,
    `import { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\n${await configValidatorModule(ROOT)}`,
  );
  return ((await import(pathToFileURL(file).href)) as { validateConfig: Validate }).validateConfig;
}

const configs: [string, unknown][] = [
  ['an empty config', {}],
  [
    'a full config',
    {
      server: { port: 0, trustProxy: true },
      hooks: {
        enabled: true,
        token: 'a-hook-token-0123456789',
        presets: ['mail'],
        mappings: [{ id: 'gh', match: { path: 'github' }, messageTemplate: '{{action}}', deliver: false }],
        idempotency: {},
      },
      agents: { defaults: { model: 'local/m', heartbeat: { every: '10m' } } },
      models: { providers: { local: { baseUrl: 'http://127.0.0.1:1/v1', api: 'openai-chat' } } },
      storage: { synchronous: 'full' },
    },
  ],
  ['an unknown top-level key', { hook: {} }],
  ['a wrong type', { server: { port: 'eighty' } }],
  ['a port out of range', { server: { port: 70000 } }],
  ['an unknown enum value', { storage: { synchronous: 'sometimes' } }],
  ['an unknown mapping key', { hooks: { mappings: [{ id: 'x', colour: 'red' }] } }],
  ['several mistakes at once', { server: { host: 1 }, hooks: { enabled: 'yes', presets: ['gmail'] }, log: {} }],
];

describe('the ahead-of-time config validator of the build', () => {
  it.each(configs)(
    'decides %s as the one compiled at start-up does, defaults and errors included',
    async (_, config) => {
      const built = await precompiled();
      const [fromSrc, fromBuild] = [structuredClone(config), structuredClone(config)];
      const ok = validateConfig(fromSrc);
      expect(built(fromBuild)).toBe(ok);
      expect(fromBuild).toEqual(fromSrc);
      expect(built.errors ?? null).toEqual(validateConfig.errors ?? null);
    },
  );
});
