import { realpathSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import type { Loader, Message, PartialMessage, Plugin } from 'esbuild';
import { hookdError } from '../errors.js';
import { formatBytes, readRegularFile } from '../read-file.js';
import { computedImportsOutside } from './computed-imports.js';
import { type BundleMap, createBundleMap } from './locate.js';
import { isInside } from './resolve.js';

/** The global the bundle assigns its exports to. */
export const BUNDLE_GLOBAL = '__hookdTransform';

/** A compiled transform as it crosses to a restarted transform process (docs/transforms.md#isolation). */
export interface Bundle {
  /** One script: `var __hookdTransform = (() => { … })();` */
  readonly code: string;
  /** Its source map, as esbuild wrote it. */
  readonly mapText: string;
}

export interface CompiledTransform extends Bundle {
  /** Every source file in the bundle (absolute), for watching. */
  readonly inputs: readonly string[];
  /** The bundle's source map, kept on the host: errors thrown in the sandbox are located with it. */
  readonly map: BundleMap;
}

/** The map that locates a bundle's errors. */
export const bundleMapOf = ({ code, mapText }: Bundle): BundleMap =>
  createBundleMap(JSON.parse(mapText), code.split('\n').length);

/** The package export transforms import their types and helper from (docs/transforms.md#writing-one). */
const AUTHORING_MODULE = 'hookd/transform';
const AUTHORING_NAMESPACE = 'hookd-authoring';

/**
 * The bundle's name, beside the sources: the source map names the sources relative to it, so
 * relative to the transforms folder (nothing is written: `write` is false).
 */
const OUTFILE = '.hookd-transform-bundle.js';

/**
 * What `hookd/transform` is inside a bundle: its one value, defineTransform (the identity, as
 * in src/transforms/authoring.ts). Its types vanish when esbuild strips TypeScript; hookd itself
 * is never bundled into a transform.
 */
const AUTHORING_RUNTIME = 'export function defineTransform(fn) { return fn; }';

/** The most one source file of a transform may hold (docs/operations.md#limits). */
const MAX_SOURCE_BYTES = 16 * 1024 * 1024;

/** How esbuild reads each kind of file a transform may import. */
const LOADERS: Readonly<Record<string, Loader>> = {
  '.ts': 'ts',
  '.mts': 'ts',
  '.js': 'js',
  '.mjs': 'js',
  '.json': 'json',
};

/**
 * A comment naming a source map: esbuild reads the file it names itself, past the loader (a
 * FIFO hung the build, /dev/zero grew it without bound, a map outside the folder brought its
 * sources in). An inline `data:` map is kept.
 */
const SOURCE_MAP_COMMENT =
  /(?:\/\/[#@][ \t]*sourceMappingURL=(?!data:)[^\n]*|\/\*[#@][ \t]*sourceMappingURL=(?!data:)[\s\S]*?\*\/)/g;

/** The loader's refusal of `file`'s computed imports that lead out, each at its place. */
function computedRefusals(text: string, file: string, realDir: string, folder: string): PartialMessage[] {
  return computedImportsOutside(text, file, realDir).map(({ prefix, line, column }) => ({
    text: `cannot import a path computed at run time that starts outside ${folder} (${JSON.stringify(prefix)}): esbuild would bundle every file it matches`,
    location: { file, line, column, lineText: text.split('\n')[line - 1] ?? '' },
  }));
}

/**
 * Every file of a bundle read by hookd, not esbuild: only a regular file inside the folder (a
 * path computed at run time reaches the loader without the resolver), never through a symlink
 * swapped in after its path was resolved, a FIFO among a plugin's files (it would hang the
 * build, and `check` with it), and within MAX_SOURCE_BYTES.
 */
function regularSources(realDir: string, folder: string): Plugin {
  return {
    name: 'hookd-regular-sources',
    setup(b) {
      b.onLoad({ filter: /.*/, namespace: 'file' }, (args) => {
        const loader = LOADERS[extname(args.path)];
        if (!loader)
          return { errors: [{ text: `cannot load ${args.path}: expected a ${Object.keys(LOADERS).join(', ')} file` }] };
        if (!isInside(realDir, realpathSync(args.path)))
          return { errors: [{ text: `${args.path} is outside ${folder}` }] };
        const read = readRegularFile(args.path, MAX_SOURCE_BYTES);
        if ('problem' in read)
          return {
            errors: [
              {
                text: `${args.path} ${read.problem} (a transform's files are regular files of at most ${formatBytes(MAX_SOURCE_BYTES)})`,
              },
            ],
          };
        if (loader === 'json') return { contents: read.text, loader };
        const errors = computedRefusals(read.text, args.path, realDir, folder);
        if (errors.length > 0) return { errors };
        return { contents: read.text.replace(SOURCE_MAP_COMMENT, ''), loader };
      });
    },
  };
}

/**
 * Static imports may reach only relative files inside the transforms folder, and
 * `hookd/transform`; `require()` and `import()` of anything else are left in the bundle and
 * fail when called, inside the sandbox, where no module system exists.
 */
function containment(realDir: string, folder: string): Plugin {
  return {
    name: 'hookd-containment',
    setup(b) {
      b.onLoad({ filter: /.*/, namespace: AUTHORING_NAMESPACE }, () => ({ contents: AUTHORING_RUNTIME, loader: 'js' }));
      b.onResolve({ filter: /.*/ }, async (args) => {
        if (args.kind === 'entry-point' || args.pluginData === 'inner') return undefined;
        if (args.path === AUTHORING_MODULE) {
          return { path: AUTHORING_MODULE, namespace: AUTHORING_NAMESPACE };
        }
        const isRelative = args.path.startsWith('./') || args.path.startsWith('../');
        if (!isRelative) {
          if (args.kind === 'require-call' || args.kind === 'dynamic-import')
            return { path: args.path, external: true };
          return {
            errors: [
              {
                text: `cannot import "${args.path}": transforms may import only relative files inside ${folder} (no Node built-ins, no packages)`,
              },
            ],
          };
        }
        const resolved = await b.resolve(args.path, {
          resolveDir: args.resolveDir,
          kind: args.kind,
          pluginData: 'inner',
        });
        if (resolved.errors.length > 0) return { errors: resolved.errors };
        const real = realpathSync(resolved.path);
        if (!isInside(realDir, real)) {
          return { errors: [{ text: `cannot import "${args.path}": it is outside ${folder}` }] };
        }
        return { path: real };
      });
    },
  };
}

function describe(message: Message, cwd: string): string {
  const at = message.location;
  if (!at) return message.text;
  return `${resolve(cwd, at.file)}:${at.line}:${at.column + 1}: ${message.text}`;
}

/** Bundles one transform module (TypeScript or JavaScript) into a single sandbox script; throws TRANSFORM_COMPILE_FAILED with `file:line:col: message` lines. */
export async function compileTransform(
  file: string,
  transformsDir: string,
  folder = 'hooks.transformsDir',
): Promise<CompiledTransform> {
  const realDir = realpathSync(transformsDir);
  // Checked on every compile, reloads included: the entry may have become a symlink out.
  const realFile = realpathSync(file);
  if (!isInside(realDir, realFile)) {
    throw hookdError('TRANSFORM_COMPILE_FAILED', {
      problems: [`${file}: expected a file inside ${folder}; it now leads out of it`],
    });
  }
  // esbuild's API is loaded by the first transform compiled: a config without one never loads it.
  const { build } = await import('esbuild');
  try {
    const result = await build({
      entryPoints: [realFile],
      absWorkingDir: realDir,
      bundle: true,
      write: false,
      format: 'iife',
      globalName: BUNDLE_GLOBAL,
      platform: 'neutral',
      target: 'es2022',
      mainFields: ['module', 'main'],
      resolveExtensions: ['.ts', '.mts', '.js', '.mjs', '.json'],
      logLevel: 'silent',
      metafile: true,
      outfile: OUTFILE,
      // External: the map stays out of the code the isolate runs (docs/transforms.md#when-a-transform-throws).
      sourcemap: 'external',
      // A fixed tsconfig: esbuild never reads a tsconfig.json (or what it extends) from the folder.
      tsconfigRaw: {},
      plugins: [containment(realDir, folder), regularSources(realDir, folder)],
    });
    const code = result.outputFiles.find((f) => f.path.endsWith('.js'))?.text ?? '';
    const mapText =
      result.outputFiles.find((f) => f.path.endsWith('.map'))?.text ?? '{"version":3,"sources":[],"mappings":""}';
    const inputs = Object.keys(result.metafile.inputs)
      .filter((input) => !input.startsWith(`${AUTHORING_NAMESPACE}:`))
      .map((input) => resolve(realDir, input));
    return { code, mapText, inputs, map: bundleMapOf({ code, mapText }) };
  } catch (err) {
    const errors = (err as { errors?: Message[] }).errors;
    if (!errors) throw err;
    throw hookdError('TRANSFORM_COMPILE_FAILED', { problems: errors.map((m) => describe(m, realDir)) });
  }
}
