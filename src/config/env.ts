const REFERENCE = /\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Replaces `${NAME}` in every string of `value` with the environment variable NAME
 * (`$${NAME}` stays a literal `${NAME}`). Missing variables are reported with their path.
 */
export function expandEnv(value: unknown, env: NodeJS.ProcessEnv, path: string, problems: string[]): unknown {
  if (typeof value === 'string') {
    return value.replace(REFERENCE, (whole, escaped: string | undefined, name: string) => {
      if (escaped) return whole.slice(1);
      const found = env[name];
      if (found === undefined) {
        problems.push(`${path || '(root)'}: environment variable ${name} is not set`);
        return '';
      }
      return found;
    });
  }
  if (Array.isArray(value)) return value.map((item, i) => expandEnv(item, env, `${path}[${i}]`, problems));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = expandEnv(item, env, joinPath(path, key), problems);
    return out;
  }
  return value;
}

/** Appends a key to a dotted config path, quoting keys that are not plain identifiers. */
export function joinPath(path: string, key: string): string {
  if (/^[0-9]+$/.test(key)) return `${path}[${key}]`;
  if (/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(key)) return path ? `${path}.${key}` : key;
  return `${path}[${JSON.stringify(key)}]`;
}
