/**
 * `text` kept on its line: a new line, carriage return or tab in it is shown as its `\u`
 * escape. A sender's text (a refused request's path, a templated run name, a destination's error)
 * otherwise starts a row of its own, which reads as a record that never was.
 */
export function oneLine(text: string): string {
  return text.replace(/[\t\n\r]/g, (c) => `\\u${(c.codePointAt(0) as number).toString(16).padStart(4, '0')}`);
}

/** Columns padded to their widest cell; the last one is not padded. Each cell is kept on its line (oneLine). */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const lines = rows.map((cells) => cells.map(oneLine));
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((r) => (r[i] ?? '').length)));
  return [header, ...lines].map((cells) => row(cells, widths));
}

/**
 * One line of cells, each kept on its line (oneLine) and padded to its width (a longer one pushes
 * the rest along); the last not padded.
 */
export function row(cells: readonly string[], widths: readonly number[]): string {
  return cells
    .map(oneLine)
    .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
    .join('  ')
    .trimEnd();
}

/** `text` on one line, cut to `maxChars` with an ellipsis. */
export function excerpt(text: string, maxChars: number): string {
  const line = text.replace(/\s*\n\s*/g, ' ');
  return line.length > maxChars ? `${line.slice(0, maxChars - 1)}…` : line;
}
