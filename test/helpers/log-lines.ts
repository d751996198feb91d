/**
 * The log lines a spawned hookd writes, checked as a log reader takes them: every line that
 * starts with `{` is one JSON object, and no object of it names a key twice (JSON.parse keeps
 * the last silently, so `"component":"runs","component":"attempts"` reads as `attempts` alone).
 */

/** The keys named twice in one object of a JSON text (`component` or `err.code`), in order; empty when none. */
export function duplicateKeys(text: string): string[] {
  const found: string[] = [];
  let at = 0;
  const space = () => {
    while (at < text.length && /\s/.test(text[at] as string)) at++;
  };
  const string = (): string => {
    const start = at;
    at++;
    while (at < text.length && text[at] !== '"') at += text[at] === '\\' ? 2 : 1;
    at++;
    return JSON.parse(text.slice(start, at)) as string;
  };
  const value = (path: string): void => {
    space();
    const c = text[at];
    if (c === '{') object(path);
    else if (c === '[') array(path);
    else if (c === '"') string();
    else while (at < text.length && !/[\s,\]}]/.test(text[at] as string)) at++;
  };
  const object = (path: string): void => {
    const seen = new Set<string>();
    at++;
    space();
    while (at < text.length && text[at] !== '}') {
      const key = string();
      const where = path ? `${path}.${key}` : key;
      if (seen.has(key)) found.push(where);
      seen.add(key);
      space();
      at++; // the colon
      value(where);
      space();
      if (text[at] === ',') at++;
      space();
    }
    at++;
  };
  const array = (path: string): void => {
    at++;
    space();
    let i = 0;
    while (at < text.length && text[at] !== ']') {
      value(`${path}[${i++}]`);
      space();
      if (text[at] === ',') at++;
      space();
    }
    at++;
  };
  value('');
  return found;
}

/**
 * Throws naming each JSON line of `output` (a process's stdout or stderr) that has a key twice;
 * `label` says whose output it was. Lines that are not JSON (printed hints) are not log lines.
 */
export function assertLogLines(output: string, label: string): void {
  const bad: string[] = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      JSON.parse(line);
    } catch {
      continue; // cut by a kill mid-write
    }
    const keys = duplicateKeys(line);
    if (keys.length > 0) bad.push(`${keys.join(', ')} twice in: ${line.slice(0, 300)}`);
  }
  if (bad.length > 0) throw new Error(`${label} wrote log lines with a duplicate key:\n${bad.join('\n')}`);
}
