import { type FSWatcher, watch } from 'node:fs';
import type { Logger } from '../log.js';

/** A watch on the transforms folder. */
export interface TransformsWatch {
  close(): void;
}

/**
 * Calls `onChange` once a burst of file changes under `dir` has been quiet for `debounceMs`;
 * calls never overlap (a change during one runs after it).
 */
export function watchTransforms(
  dir: string,
  options: { readonly debounceMs: number; readonly log: Logger; readonly onChange: () => Promise<void> },
): TransformsWatch {
  let timer: NodeJS.Timeout | undefined;
  let running = Promise.resolve();
  const watcher: FSWatcher = watch(dir, { recursive: true }, () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      running = running.then(options.onChange);
    }, options.debounceMs);
  });
  watcher.on('error', (err) => options.log.warn({ err: err.message }, 'watching transforms failed'));
  return {
    close() {
      clearTimeout(timer);
      watcher.close();
    },
  };
}
