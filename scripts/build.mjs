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

/**
 * Node's built-in modules that a dependency requires at load but uses only for features hookd
 * does not turn on. Each costs resident memory at start (node compiles a built-in from its own
 * source when started with --no-node-snapshot): fastify's server.js loads https (with tls) and
 * http2 for HTTPS and HTTP/2 servers, and dns for a host name to listen on (about 2 MB of a
 * bare server's RSS; docs/operations.md#start-up-and-memory). Here they load on first use.
 */
const LAZY_BUILTINS = {
  // fastify/lib/server.js: `const https = require('node:https')` and the like, used in calls.
  importer: /[\\/]node_modules[\\/]fastify[\\/]lib[\\/]server\.js$/,
  modules: /^node:(https|http2|dns)$/,
};
/**
 * Modules that a dependency requires only for what hookd never calls: left out of the bundle
 * (each stands in as a function that throws, saying so). prom-client's index loads its
 * Pushgateway, default metrics and cluster aggregation at start, with zlib, https, v8 and
 * perf_hooks; fastify's compilers (ajv, fast-json-stringify) serve route schemas, which hookd
 * refuses (src/app.ts), and light-my-request serves `inject()`, which only tests call, on src/.
 * V8 keeps a module's whole source in the heap, run or not.
 */
const LEFT_OUT = [
  {
    importer: /[\\/]node_modules[\\/]prom-client[\\/]index\.js$/,
    path: /^\.\/lib\/(pushgateway|defaultMetrics|cluster)$/,
  },
  {
    importer: /[\\/]node_modules[\\/]fastify[\\/]/,
    path: /^(@fastify\/ajv-compiler|@fastify\/fast-json-stringify-compiler|light-my-request)$/,
  },
];

const lazy = {
  name: 'lazy-builtins',
  setup(plugin) {
    plugin.onResolve({ filter: LAZY_BUILTINS.modules }, (args) =>
      LAZY_BUILTINS.importer.test(args.importer) ? { path: args.path, namespace: 'lazy-builtin' } : undefined,
    );
    // A stand-in that requires the real module when one of its members is first read.
    plugin.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => ({
      contents: `let real;
const load = () => (real ??= require(${JSON.stringify(args.path)}));
module.exports = new Proxy({}, {
  get: (_, key) => load()[key],
  has: (_, key) => key in load(),
  ownKeys: () => Reflect.ownKeys(load()),
  getOwnPropertyDescriptor: (_, key) => {
    const own = Reflect.getOwnPropertyDescriptor(load(), key);
    return own && { ...own, configurable: true };
  },
});`,
      loader: 'js',
    }));
    for (const { importer, path } of LEFT_OUT) {
      plugin.onResolve({ filter: path }, (args) =>
        importer.test(args.importer) ? { path: args.path, namespace: 'left-out' } : undefined,
      );
    }
    plugin.onLoad({ filter: /.*/, namespace: 'left-out' }, (args) => ({
      contents: `module.exports = function leftOut() {
  throw new Error(${JSON.stringify(`${args.path} is left out of hookd's bundle (scripts/build.mjs)`)});
};`,
      loader: 'js',
    }));
  },
};

rmSync(dist, { recursive: true, force: true });
await build({
  plugins: [precompiled, lazy],
  entryPoints: [
    join(root, 'src/cli/main.ts'),
    // The transform process (`hooks.transforms.isolation: "process"`), started beside dist/cli/'s chunks.
    { in: join(root, 'src/transforms/child.ts'), out: 'transform-child' },
  ],
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
