/** Columns padded to their widest cell; the last one is not padded. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  return [header, ...rows].map((cells) => row(cells, widths));
}

/** One line of cells, each padded to its width (a longer one pushes the rest along); the last not padded. */
export function row(cells: readonly string[], widths: readonly number[]): string {
  return cells
    .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
    .join('  ')
    .trimEnd();
}

/** `text` on one line, cut to `maxChars` with an ellipsis. */
export function excerpt(text: string, maxChars: number): string {
  const line = text.replace(/\s*\n\s*/g, ' ');
  return line.length > maxChars ? `${line.slice(0, maxChars - 1)}…` : line;
}
