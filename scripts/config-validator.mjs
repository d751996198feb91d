// The config validator compiled ahead of time (ajv's standalone code), as the source of an ES
// module exporting `validateConfig`. scripts/build.mjs puts it in place of
// src/config/validator.ts; test/unit/config/validator.test.ts checks it against that module.
import { join } from 'node:path';
import { Ajv } from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';
import { build } from 'esbuild';

/** `root`: the repository. The code calls `require` for ajv's runtime helpers. */
export async function configValidatorModule(root) {
  const schema = await build({
    entryPoints: [join(root, 'src/config/schema.ts')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
  });
  const source = schema.outputFiles[0]?.text ?? '';
  const { configSchema, validatorOptions } = await import(
    `data:text/javascript;base64,${Buffer.from(source).toString('base64')}`
  );
  const ajv = new Ajv({ ...validatorOptions, code: { source: true, esm: true } });
  ajv.addSchema(configSchema, 'config');
  return standaloneCode(ajv, { validateConfig: 'config' });
}
