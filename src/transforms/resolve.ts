import { type Dirent, existsSync, readdirSync, realpathSync } from 'node:fs';
import { extname, isAbsolute, join, relative, sep } from 'node:path';
import { nearest } from '../config/index.js';

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
  if (!existsSync(candidate))
    return { problem: `no such file: ${candidate}${suggestion(transformsDir, module, folder)}` };
  if (!existsSync(transformsDir)) return { problem: `${folder} does not exist: ${transformsDir}` };
  const realDir = realpathSync(transformsDir);
  const realFile = realpathSync(candidate);
  if (!isInside(realDir, realFile))
    return { problem: `expected a file inside ${folder}; it is a symlink that leads out` };
  return { file: realFile };
}

/** Files looked at for a suggestion, at most: a folder with a package's tree in it is not walked whole. */
const MAX_LISTED = 2000;

/** The transform modules in `dir` and its subfolders (not hidden ones, not node_modules), relative to it. */
function modulesIn(dir: string): string[] {
  const found: string[] = [];
  const walk = (folder: string) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (found.length >= MAX_LISTED || entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (TRANSFORM_EXTENSIONS.includes(extname(entry.name))) found.push(relative(dir, path).split(sep).join('/'));
    }
  };
  walk(dir);
  return found.sort();
}

/** ` (did you mean "a.ts"?)` naming the nearest modules in the folder, or what it holds when none is near. */
function suggestion(dir: string, module: string, folder: string): string {
  if (!existsSync(dir)) return ` (${folder} does not exist: ${dir})`;
  const modules = modulesIn(dir);
  if (modules.length === 0) return ` (${folder} holds no ${TRANSFORM_EXTENSIONS.join(', ')} file)`;
  const near = nearest(module.replace(/^\.\//, ''), modules);
  const quoted = (names: string[]) => names.map((name) => JSON.stringify(name)).join(', ');
  if (near.length > 0) return ` (did you mean ${quoted(near).replace(/, ([^,]*)$/, ' or $1')}?)`;
  const more = modules.length > 5 ? `, and ${modules.length - 5} more` : '';
  return ` (${folder} holds ${quoted(modules.slice(0, 5))}${more})`;
}
