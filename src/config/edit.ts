/**
 * Edits a JSON5 config file as text, so that its comments and formatting survive: values
 * are located by a small span parser and only the touched spans change.
 */

import { hookdError } from '../errors.js';

import { type Node, type ObjectNode, parseSpans, skipTrivia } from './spans.js';

function lineIndent(text: string, offset: number): string {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))?.[0] ?? '';
}

/** How the file writes things, so that what is inserted looks like the rest. */
interface Style {
  /** The quote of the file's first string (`"` when it has none). */
  readonly quote: "'" | '"';
  /** One level of indentation, from the first key on its own line (two spaces by default). */
  readonly unit: string;
  /** Keys in quotes (a JSON file): quoted keys, and no trailing commas. */
  readonly json: boolean;
}

function styleOf(text: string, root: ObjectNode): Style {
  const firstString = (node: Node): string | undefined => {
    if (node.type === 'value') return node.raw[0] === "'" || node.raw[0] === '"' ? node.raw[0] : undefined;
    const children = node.type === 'object' ? node.props.map((p) => p.value) : node.items;
    for (const child of children) {
      const found = firstString(child);
      if (found) return found;
    }
    return undefined;
  };
  const first = root.props.find((p) => text.slice(root.start, p.value.start).includes('\n'));
  const unit = first ? lineIndent(text, first.value.start) || '  ' : '  ';
  return { quote: firstString(root) === "'" ? "'" : '"', unit, json: root.props[0]?.quoted ?? false };
}

function formatString(value: string, quote: Style['quote']): string {
  const json = JSON.stringify(value);
  if (quote === '"') return json;
  return `'${json.slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'")}'`;
}

function formatKey(key: string, style: Style): string {
  return style.json || !/^[A-Za-z_$][\w$]*$/.test(key) ? JSON.stringify(key) : key;
}

/**
 * A value written in the file's style: its quotes, and objects over several lines at
 * `indent` (or on one line when `inline`, as inside an object that is on one line).
 */
function formatValue(value: unknown, style: Style, indent: string, inline: boolean): string {
  if (typeof value === 'string') return formatString(value, style.quote);
  if (Array.isArray(value)) return `[${value.map((v) => formatValue(v, style, indent, true)).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 0) return '{}';
    if (inline) {
      return `{ ${entries.map(([k, v]) => `${formatKey(k, style)}: ${formatValue(v, style, indent, true)}`).join(', ')} }`;
    }
    const inner = indent + style.unit;
    const lines = entries.map(([k, v]) => `${inner}${formatKey(k, style)}: ${formatValue(v, style, inner, false)}`);
    return `{\n${lines.join(',\n')}${style.json ? '' : ','}\n${indent}}`;
  }
  return JSON.stringify(value);
}

/**
 * Where a new line goes after the value ending at `end`: past its comma and any comment on the
 * rest of that line, so that a comment stays on the line it describes.
 */
function endOfEntryLine(text: string, end: number): { offset: number; comma: boolean; commaAt: number } {
  const after = afterTrailingComma(text, end);
  const newline = text.indexOf('\n', after.offset);
  const lineEnd = newline === -1 ? text.length : newline;
  const rest = text.slice(after.offset, lineEnd);
  const onlyComment = /^\s*(\/\/.*|\/\*.*\*\/\s*)?$/.test(rest);
  return { offset: onlyComment ? lineEnd : after.offset, comma: after.comma, commaAt: end };
}

/** The offset just after a value, past a trailing comma if there is one. */
function afterTrailingComma(text: string, end: number): { offset: number; comma: boolean } {
  const at = skipTrivia(text, end);
  return text[at] === ',' ? { offset: at + 1, comma: true } : { offset: end, comma: false };
}

function insertProp(text: string, object: ObjectNode, key: string, value: unknown, style: Style): string {
  const last = object.props.at(-1);
  if (!last) {
    const indent = lineIndent(text, object.start);
    const entry = `${formatKey(key, style)}: ${formatValue(value, style, indent + style.unit, false)}`;
    return `${text.slice(0, object.start)}{\n${indent}${style.unit}${entry}${style.json ? '' : ','}\n${indent}}${text.slice(object.end)}`;
  }
  const sameLine = !text.slice(object.start, last.value.start).includes('\n');
  const indent = lineIndent(text, last.value.start);
  const entry = `${formatKey(key, style)}: ${formatValue(value, style, indent, sameLine)}`;
  if (sameLine) {
    const after = afterTrailingComma(text, last.value.end);
    const insertion = after.comma ? ` ${entry},` : `, ${entry}`;
    return text.slice(0, after.offset) + insertion + text.slice(after.offset);
  }
  const at = endOfEntryLine(text, last.value.end);
  const line = `\n${indent}${entry}${at.comma && !style.json ? ',' : ''}`;
  // Without a trailing comma, one goes right after the last value, before its comment.
  if (at.comma) return text.slice(0, at.offset) + line + text.slice(at.offset);
  return `${text.slice(0, at.commaAt)},${text.slice(at.commaAt, at.offset)}${line}${text.slice(at.offset)}`;
}

function rootObject(text: string): ObjectNode {
  const root = parseSpans(text);
  if (root.type !== 'object') throw hookdError('CONFIG_EDIT_FAILED', { problem: 'it is not an object' });
  return root;
}

/** Sets the value at `path` to `value`, creating objects on the way, in the file's style. */
export function setValue(text: string, path: readonly string[], value: unknown): string {
  const root = rootObject(text);
  const style = styleOf(text, root);
  const nest = (from: number) => path.slice(from).reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
  let node: ObjectNode = root;
  for (let i = 0; i < path.length; i++) {
    const key = path[i] as string;
    const prop = node.props.find((p) => p.key === key);
    if (!prop) return insertProp(text, node, key, nest(i + 1), style);
    if (i === path.length - 1 || prop.value.type !== 'object') {
      const inline = !text.slice(node.start, prop.value.start).includes('\n');
      const replacement = formatValue(nest(i + 1), style, lineIndent(text, prop.value.start), inline);
      return text.slice(0, prop.value.start) + replacement + text.slice(prop.value.end);
    }
    node = prop.value;
  }
  return text;
}

/** Appends `value` to the array at `path` (created when missing). */
export function appendToArray(text: string, path: readonly string[], value: unknown): string {
  const root = rootObject(text);
  const style = styleOf(text, root);
  let node: Node = root;
  for (const key of path) {
    const prop: ObjectNode['props'][number] | undefined =
      node.type === 'object' ? node.props.find((p) => p.key === key) : undefined;
    if (!prop) return setValue(text, path, [value]);
    node = prop.value;
  }
  if (node.type !== 'array') return setValue(text, path, [value]);
  const valueText = formatValue(value, style, '', true);
  const last = node.items.at(-1);
  if (!last) return `${text.slice(0, node.start)}[${valueText}]${text.slice(node.end)}`;
  const after = afterTrailingComma(text, last.end);
  const insertion = after.comma ? ` ${valueText},` : `, ${valueText}`;
  return text.slice(0, after.offset) + insertion + text.slice(after.offset);
}
