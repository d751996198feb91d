import { createHash } from 'node:crypto';

/**
 * New code whose loading ended the transform process (docs/transforms.md#isolation): V8 aborts
 * the whole process on some out-of-memory patterns, at a module's top level as in a call, and an
 * abort is no exception that the last good version could be kept on. The process says which
 * mapping's code it is loading; when it ends meanwhile, that code is set aside (by its hash), and
 * the processes after it run the mapping's last good code until its file holds other code.
 */

/** The hashes of the code set aside, by mapping id. */
export type SetAside = Readonly<Record<string, readonly string[]>>;

/** Told before an isolate loads a mapping's new code (its hash), and once it did or failed (undefined). */
export type OnLoading = (key: string, hash: string | undefined) => void;

/** A bundle's code as a set-aside list names it. */
export const codeHash = (code: string): string => createHash('sha256').update(code).digest('base64url').slice(0, 22);

/** Whether mapping `key`'s `code` was set aside. */
export const isSetAside = (setAside: SetAside | undefined, key: string, code: string): boolean =>
  setAside !== undefined && Object.hasOwn(setAside, key) && (setAside[key]?.includes(codeHash(code)) ?? false);

/** The problem a set-aside code is kept out for, as a reload's and a start's problems say it. */
export const SET_ASIDE_PROBLEM =
  'this version ended the transform process while it loaded (V8 aborted); set aside until the file changes';
