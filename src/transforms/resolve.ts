import { existsSync, realpathSync } from 'node:fs';
import { extname, isAbsolute, join, sep } from 'node:path';

export const TRANSFORM_EXTENSIONS = ['.ts', '.mts', '.js', '.mjs'];

/** True when `file` (already real) lies inside `dir` (already real). */
export function isInside(dir: string, file: string): boolean {
  return file === dir || file.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/**
 * Resolves `transform.module` inside `transformsDir` (named `folder` in problems): no absolute
 * path, no `..`, a known extension, and no symlink leading out. Returns the real path or a problem.
 */
export function resolveTransformModule(
  transformsDir: string,
  module: string,
  folder = 'hooks.transformsDir',
): { file: string } | { problem: string } {
  if (isAbsolute(module)) return { problem: `expected a path relative to ${folder}, not an absolute path` };
  if (module.split(/[\\/]+/).includes('..')) return { problem: `expected a path inside ${folder}, without ..` };
  if (!TRANSFORM_EXTENSIONS.includes(extname(module))) {
    return { problem: `expected a ${TRANSFORM_EXTENSIONS.join(', ')} file` };
  }
  const candidate = join(transformsDir, module);
  if (!existsSync(candidate)) return { problem: `no such file: ${candidate}` };
  if (!existsSync(transformsDir)) return { problem: `${folder} does not exist: ${transformsDir}` };
  const realDir = realpathSync(transformsDir);
  const realFile = realpathSync(candidate);
  if (!isInside(realDir, realFile))
    return { problem: `expected a file inside ${folder}; it is a symlink that leads out` };
  return { file: realFile };
}
