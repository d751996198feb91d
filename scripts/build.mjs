// `npm run build` (also run before `npm start` and by `npm pack`): bundles src/ into dist/cli/
// with esbuild, so that `hookd` starts without compiling TypeScript or resolving a few hundred
// module files of fastify, pino and ajv first (together about 250 ms of a start with 10
// transforms). No type check here: `npm run typecheck` does that. bin/hookd.js uses dist/
// only while it is newer than every file of src/, and otherwise runs src/ through tsx.
// It also writes the package's `hookd/transform` export: dist/transform.js (defineTransform)
// and, with --package (`npm pack`; tsc takes a few seconds), its declarations under dist/types/
// (docs/transforms.md#writing-one).
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { configValidatorModule } from './config-validator.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');

const precompiled = {
  name: 'precompiled-config-validator',
  setup(plugin) {
    plugin.onLoad({ filter: /[\\/]src[\\/]config[\\/]validator\.ts$/ }, async () => ({
      contents: await configValidatorModule(root),
      loader: 'js',
      resolveDir: join(root, 'src/config'),
    }));
  },
};

rmSync(dist, { recursive: true, force: true });
await build({
  plugins: [precompiled],
  entryPoints: [join(root, 'src/cli/main.ts')],
  // dist/cli/ sits as deep as src/cli/, so paths relative to a module (presets/) still hold.
  outdir: join(dist, 'cli'),
  bundle: true,
  // The commands and the mail modules stay separate chunks, loaded when used.
  splitting: true,
  // Whitespace and syntax only: names stay, so stack traces still name functions. The smaller
  // source parses faster, and V8 keeps every module's source in the heap.
  minifyWhitespace: true,
  minifySyntax: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: [
    // Native addons and esbuild's own binary are found in node_modules at run time.
    'better-sqlite3',
    'isolated-vm',
    'esbuild',
    // Loaded on first use, not at start: no gain from bundling them.
    'undici',
    'imapflow',
    'mailparser',
    'nodemailer',
    'thread-stream',
  ],
  // Bundled CommonJS dependencies call require() for Node's built-in modules.
  banner: {
    js: "import { createRequire as __hookdRequire } from 'node:module'; const require = __hookdRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
// `hookd/transform`: the one runtime helper, and the authoring types (FromSchema included).
const authoring = join(root, 'src/transforms/authoring.ts');
await build({ entryPoints: [authoring], outfile: join(dist, 'transform.js'), format: 'esm', logLevel: 'warning' });
if (process.argv.includes('--package')) await emitAuthoringTypes();
// bin/hookd.js compares this stamp's time with the sources'.
writeFileSync(join(dist, 'BUILT'), `${new Date().toISOString()}\n`);

/** dist/types/: the declarations of src/transforms/authoring.ts and what it imports. */
async function emitAuthoringTypes() {
  // typescript takes about a second to load: only a package build pays.
  const { default: ts } = await import('typescript');
  const program = ts.createProgram([authoring], {
    declaration: true,
    emitDeclarationOnly: true,
    rootDir: join(root, 'src'),
    outDir: join(dist, 'types'),
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    skipLibCheck: true,
    types: [],
  });
  const emitted = program.emit();
  const problems = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics];
  if (problems.length > 0) {
    throw new Error(
      ts.formatDiagnostics(problems, {
        getCanonicalFileName: (f) => f,
        getCurrentDirectory: () => root,
        getNewLine: () => '\n',
      }),
    );
  }
}
