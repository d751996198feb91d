import { didYouMean } from './suggest.js';

const REFERENCE = /\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** A `${NAME}` whose variable is not set: where it is, and its problem line. */
export interface UnsetVariable {
  /** The key path of the string that holds it (`hooks.token`). */
  readonly path: string;
  readonly name: string;
  /** `path: environment variable NAME is not set`, with the nearest name that is set when one is close. */
  readonly problem: string;
}

/**
 * Replaces `${NAME}` in every string of `value` with the environment variable NAME
 * (`$${NAME}` stays a literal `${NAME}`). A variable that is not set expands to nothing and is
 * added to `unset` with its path, and the set variable (of `env`: the process's environment
 * and a `.env` beside the config) whose name is nearest, when one is close.
 */
export function expandEnv(value: unknown, env: NodeJS.ProcessEnv, path: string, unset: UnsetVariable[]): unknown {
  if (typeof value === 'string') {
    return value.replace(REFERENCE, (whole, escaped: string | undefined, name: string) => {
      if (escaped) return whole.slice(1);
      const found = env[name];
      if (found === undefined) {
        const near = didYouMean(name, Object.keys(env));
        const hint = near === undefined ? '' : ` (did you mean ${near}?)`;
        unset.push({ path, name, problem: `${path || '(root)'}: environment variable ${name} is not set${hint}` });
        return '';
      }
      return found;
    });
  }
  if (Array.isArray(value)) return value.map((item, i) => expandEnv(item, env, `${path}[${i}]`, unset));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = expandEnv(item, env, joinPath(path, key), unset);
    return out;
  }
  return value;
}

/** True when one key path is the other, or lies under it (`hooks.mappings[0]` and `hooks.mappings[0].verify`). */
export function pathsMeet(a: string, b: string): boolean {
  const under = (inner: string, outer: string) =>
    inner === outer || (outer !== '' && (inner.startsWith(`${outer}.`) || inner.startsWith(`${outer}[`)));
  return under(a, b) || under(b, a);
}

/** Appends a key to a dotted config path, quoting keys that are not plain identifiers. */
export function joinPath(path: string, key: string): string {
  if (/^[0-9]+$/.test(key)) return `${path}[${key}]`;
  if (/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(key)) return path ? `${path}.${key}` : key;
  return `${path}[${JSON.stringify(key)}]`;
}
