import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { isAbsolute, join, sep } from 'node:path';
import { hookdError } from '../errors.js';

/**
 * A preset's folder, the only place its data is read from (docs/presets.md#what-a-plugin-can-and-cannot-do):
 * every file is named relative to it and checked on its real path, so that neither `..`, an
 * absolute path nor a symlink leads out.
 */
export interface PresetFolder {
  /** The folder as given. */
  readonly dir: string;
  /** The file at `relative`, real path, or why it may not be read. Missing files are `{ missing }`. */
  file(relative: string): { file: string } | { problem: string } | { missing: string };
  /** The `*.json` files of a sub-folder (their paths in `dir`), sorted, each checked like `file`. */
  jsonFiles(relative: string): { files: string[]; problems: string[] };
}

/** True when `file` (real) lies inside `dir` (real). */
function isInside(dir: string, file: string): boolean {
  return file === dir || file.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/** Opens a preset's folder; throws when it does not exist. */
export function presetFolder(dir: string): PresetFolder {
  if (!existsSync(dir)) throw hookdError('CONFIG_PROBLEM', { problem: `no such folder: ${dir}` });
  const realDir = realpathSync(dir);
  const file: PresetFolder['file'] = (relative) => {
    if (isAbsolute(relative))
      return {
        problem: `${JSON.stringify(relative)} is an absolute path; a preset reads only files in its own folder`,
      };
    if (relative.split(/[\\/]+/).includes('..'))
      return { problem: `${JSON.stringify(relative)} leads out of the preset's folder (..)` };
    const candidate = join(dir, relative);
    if (!existsSync(candidate)) return { missing: candidate };
    const real = realpathSync(candidate);
    if (!isInside(realDir, real))
      return { problem: `${JSON.stringify(relative)} is a symlink that leads out of the preset's folder` };
    return { file: real };
  };
  return {
    dir,
    file,
    jsonFiles(relative) {
      const folder = file(relative);
      if ('missing' in folder) return { files: [], problems: [] };
      if ('problem' in folder) return { files: [], problems: [folder.problem] };
      const files: string[] = [];
      const problems: string[] = [];
      for (const name of readdirSync(folder.file)
        .filter((f) => f.endsWith('.json'))
        .sort()) {
        const found = file(join(relative, name));
        if ('file' in found) files.push(join(dir, relative, name));
        else if ('problem' in found) problems.push(found.problem);
      }
      return { files, problems };
    },
  };
}
