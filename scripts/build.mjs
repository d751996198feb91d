// `npm run build` (also run by `npm ci`, as `prepare`): transpiles src/ to dist/ with esbuild,
// file by file, so that `hookd` starts without compiling TypeScript first (about 150 ms of
// its start-up). No type check here: `npm run typecheck` does that. bin/hookd.js uses dist/
// only while it is newer than every file of src/, and otherwise runs src/ through tsx.
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');
const dist = join(root, 'dist');
const entryPoints = readdirSync(src, { recursive: true })
  .map(String)
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
  .map((file) => join(src, file));

rmSync(dist, { recursive: true, force: true });
await build({
  entryPoints,
  outdir: dist,
  outbase: src,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
});
// bin/hookd.js compares this stamp's time with the sources'.
writeFileSync(join(dist, 'BUILT'), `${new Date().toISOString()}\n`);
