import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, sep } from 'node:path';
import { hookdError } from '../errors.js';
import { formatBytes, readRegularFile } from '../read-file.js';

/**
 * A preset's folder, the only place its data is read from (docs/presets.md#what-a-plugin-can-and-cannot-do):
 * every file is named relative to it and checked on its real path, so that neither `..`, an
 * absolute path nor a symlink leads out; and read once, when the preset loads, only when it is
 * a regular file within its bound (a FIFO would hang the reader; a file swapped later is never
 * read again).
 */
export interface PresetFolder {
  /** The folder as given. */
  readonly dir: string;
  /** The file at `relative`, real path, or why it may not be read. Missing files are `{ missing }`. */
  file(relative: string): { file: string } | { problem: string } | { missing: string };
  /** The text of the file at `relative` (its real path beside it), read now; or why it may not be. */
  read(relative: string, maxBytes: number): { file: string; text: string } | { problem: string } | { missing: string };
  /**
   * The `*.json` files of a sub-folder, read now and sorted by name (`name` is their path in
   * the folder: `fixtures/push.json`), each of at most `maxBytes` and all of them of `maxTotalBytes`.
   */
  jsonFiles(
    relative: string,
    maxBytes: number,
    maxTotalBytes: number,
  ): { files: { name: string; text: string }[]; problems: string[] };
}

/** True when `file` (real) lies inside `dir` (real). */
function isInside(dir: string, file: string): boolean {
  return file === dir || file.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/** Opens a preset's folder; throws when it does not exist or is not a folder. */
export function presetFolder(dir: string): PresetFolder {
  if (!existsSync(dir)) throw hookdError('CONFIG_PROBLEM', { problem: `no such folder: ${dir}` });
  if (!statSync(dir).isDirectory()) throw hookdError('CONFIG_PROBLEM', { problem: `not a folder: ${dir}` });
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
  const read: PresetFolder['read'] = (relative, maxBytes) => {
    const found = file(relative);
    if (!('file' in found)) return found;
    const text = readRegularFile(found.file, maxBytes);
    if ('problem' in text)
      return {
        problem: `${JSON.stringify(relative)} ${text.problem} (a preset reads only regular files, each of at most ${formatBytes(maxBytes)})`,
      };
    return { file: found.file, text: text.text };
  };
  return {
    dir,
    file,
    read,
    jsonFiles(relative, maxBytes, maxTotalBytes) {
      const folder = file(relative);
      if ('missing' in folder) return { files: [], problems: [] };
      if ('problem' in folder) return { files: [], problems: [folder.problem] };
      if (!statSync(folder.file).isDirectory())
        return { files: [], problems: [`${JSON.stringify(relative)} is not a folder`] };
      const files: { name: string; text: string }[] = [];
      const problems: string[] = [];
      let total = 0;
      for (const entry of readdirSync(folder.file)
        .filter((f) => f.endsWith('.json'))
        .sort()) {
        const name = join(relative, entry);
        const found = read(name, maxBytes);
        if ('problem' in found) problems.push(found.problem);
        if (!('text' in found)) continue;
        total += Buffer.byteLength(found.text);
        if (total > maxTotalBytes) {
          problems.push(`${JSON.stringify(relative)} holds more than ${formatBytes(maxTotalBytes)} of files`);
          break;
        }
        files.push({ name, text: found.text });
      }
      return { files, problems };
    },
  };
}
