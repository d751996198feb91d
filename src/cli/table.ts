import { oneLine } from './terminal-text.js';

/** Columns padded to their widest cell; the last one is not padded. Each cell is kept on its line (oneLine). */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const lines = rows.map((cells) => cells.map(oneLine));
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((r) => (r[i] ?? '').length)));
  return [header, ...lines].map((cells) => padded(cells, widths));
}

/** Cells already on one line each, padded to their widths (a longer one pushes the rest along); the last not padded. */
function padded(cells: readonly string[], widths: readonly number[]): string {
  return cells
    .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
    .join('  ')
    .trimEnd();
}

/** One line of cells, each kept on its line (oneLine) and padded to its width; the last not padded. */
export const row = (cells: readonly string[], widths: readonly number[]): string => padded(cells.map(oneLine), widths);

/** `text` on one line, cut to `maxChars` with an ellipsis. */
export function excerpt(text: string, maxChars: number): string {
  const line = text.replace(/\s*\n\s*/g, ' ');
  return line.length > maxChars ? `${line.slice(0, maxChars - 1)}…` : line;
}
