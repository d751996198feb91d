/**
 * Edits a JSON5 config file as text, so that its comments and formatting survive: values
 * are located by a small span parser and only the touched spans change.
 */

import { hookdError } from '../errors.js';

type Node = ObjectNode | ArrayNode | ValueNode;
interface Span {
  start: number;
  end: number;
}
interface ObjectNode extends Span {
  type: 'object';
  props: { key: string; quoted: boolean; value: Node }[];
}
interface ArrayNode extends Span {
  type: 'array';
  items: Node[];
}
interface ValueNode extends Span {
  type: 'value';
  raw: string;
}

/** The offset of the next character that is neither white space nor inside a comment. */
function skipTrivia(text: string, from: number): number {
  let i = from;
  while (i < text.length) {
    const c = text[i] as string;
    if (/\s/.test(c) || c === '\ufeff') i++;
    else if (text.startsWith('//', i)) i = text.indexOf('\n', i) === -1 ? text.length : text.indexOf('\n', i);
    else if (text.startsWith('/*', i)) {
      const end = text.indexOf('*/', i + 2);
      if (end === -1) throw hookdError('CONFIG_EDIT_FAILED', { problem: 'unclosed comment', offset: i });
      i = end + 2;
    } else break;
  }
  return i;
}

class SpanParser {
  private i = 0;
  constructor(private readonly text: string) {}

  parse(): Node {
    const node = this.value();
    this.skip();
    if (this.i < this.text.length) this.fail('unexpected text after the end');
    return node;
  }

  private fail(message: string): never {
    throw hookdError('CONFIG_EDIT_FAILED', { problem: message, offset: this.i });
  }

  private skip(): void {
    this.i = skipTrivia(this.text, this.i);
  }

  private value(): Node {
    this.skip();
    const c = this.text[this.i];
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    const start = this.i;
    if (c === '"' || c === "'") this.string();
    else {
      while (this.i < this.text.length && !/[\s,:[\]{}/]/.test(this.text[this.i] as string)) this.i++;
      if (this.i === start) this.fail('expected a value');
    }
    return { type: 'value', start, end: this.i, raw: this.text.slice(start, this.i) };
  }

  private string(): string {
    const quote = this.text[this.i];
    const start = ++this.i;
    while (this.i < this.text.length && this.text[this.i] !== quote) this.i += this.text[this.i] === '\\' ? 2 : 1;
    if (this.i >= this.text.length) this.fail('unclosed string');
    return this.text.slice(start, this.i++);
  }

  private object(): ObjectNode {
    const start = this.i++;
    const props: ObjectNode['props'] = [];
    for (;;) {
      this.skip();
      if (this.text[this.i] === '}') break;
      const quoted = this.text[this.i] === '"' || this.text[this.i] === "'";
      let key: string;
      if (quoted) key = this.string();
      else {
        const keyStart = this.i;
        while (this.i < this.text.length && /[\w$]/.test(this.text[this.i] as string)) this.i++;
        key = this.text.slice(keyStart, this.i);
        if (key === '') this.fail('expected a key');
      }
      this.skip();
      if (this.text[this.i++] !== ':') this.fail('expected ":"');
      props.push({ key, quoted, value: this.value() });
      this.skip();
      if (this.text[this.i] === ',') this.i++;
      else if (this.text[this.i] !== '}') this.fail('expected "," or "}"');
    }
    return { type: 'object', start, end: ++this.i, props };
  }

  private array(): ArrayNode {
    const start = this.i++;
    const items: Node[] = [];
    for (;;) {
      this.skip();
      if (this.text[this.i] === ']') break;
      items.push(this.value());
      this.skip();
      if (this.text[this.i] === ',') this.i++;
      else if (this.text[this.i] !== ']') this.fail('expected "," or "]"');
    }
    return { type: 'array', start, end: ++this.i, items };
  }
}

function lineIndent(text: string, offset: number): string {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))?.[0] ?? '';
}

/** The offset just after a value, past a trailing comma if there is one. */
function afterTrailingComma(text: string, end: number): { offset: number; comma: boolean } {
  const at = skipTrivia(text, end);
  return text[at] === ',' ? { offset: at + 1, comma: true } : { offset: end, comma: false };
}

function formatKey(key: string, quoted: boolean): string {
  return quoted || !/^[A-Za-z_$][\w$]*$/.test(key) ? JSON.stringify(key) : key;
}

function nested(path: readonly string[], valueText: string, quoted: boolean): string {
  return path.reduceRight((inner, key) => `{ ${formatKey(key, quoted)}: ${inner} }`, valueText);
}

function insertProp(text: string, object: ObjectNode, key: string, valueText: string, quoted: boolean): string {
  const entry = `${formatKey(key, quoted)}: ${valueText}`;
  const last = object.props.at(-1);
  if (!last) {
    const indent = lineIndent(text, object.start);
    return `${text.slice(0, object.start)}{\n${indent}  ${entry},\n${indent}}${text.slice(object.end)}`;
  }
  const indent = lineIndent(text, last.value.start);
  const sameLine = !text.slice(object.start, last.value.start).includes('\n');
  const after = afterTrailingComma(text, last.value.end);
  const separator = sameLine ? ' ' : `\n${indent}`;
  const insertion = after.comma ? `${separator}${entry},` : `,${separator}${entry}`;
  return text.slice(0, after.offset) + insertion + text.slice(after.offset);
}

function usesQuotedKeys(root: ObjectNode): boolean {
  return root.props[0]?.quoted ?? false;
}

function rootObject(text: string): ObjectNode {
  const root = new SpanParser(text).parse();
  if (root.type !== 'object') throw hookdError('CONFIG_EDIT_FAILED', { problem: 'it is not an object' });
  return root;
}

/** Sets the value at `path` to `value` (as JSON), creating objects on the way. */
export function setValue(text: string, path: readonly string[], value: unknown): string {
  const root = rootObject(text);
  const quoted = usesQuotedKeys(root);
  const valueText = JSON.stringify(value);
  let node: ObjectNode = root;
  for (let i = 0; i < path.length; i++) {
    const key = path[i] as string;
    const prop = node.props.find((p) => p.key === key);
    if (!prop) return insertProp(text, node, key, nested(path.slice(i + 1), valueText, quoted), quoted);
    if (i === path.length - 1 || prop.value.type !== 'object') {
      const replacement = i === path.length - 1 ? valueText : nested(path.slice(i + 1), valueText, quoted);
      return text.slice(0, prop.value.start) + replacement + text.slice(prop.value.end);
    }
    node = prop.value;
  }
  return text;
}

/** Appends `value` to the array at `path` (created when missing). */
export function appendToArray(text: string, path: readonly string[], value: unknown): string {
  const root = rootObject(text);
  let node: Node = root;
  for (const key of path) {
    const prop: ObjectNode['props'][number] | undefined =
      node.type === 'object' ? node.props.find((p) => p.key === key) : undefined;
    if (!prop) return setValue(text, path, [value]);
    node = prop.value;
  }
  if (node.type !== 'array') return setValue(text, path, [value]);
  const valueText = JSON.stringify(value);
  const last = node.items.at(-1);
  if (!last) return `${text.slice(0, node.start)}[${valueText}]${text.slice(node.end)}`;
  const after = afterTrailingComma(text, last.end);
  const insertion = after.comma ? ` ${valueText},` : `, ${valueText}`;
  return text.slice(0, after.offset) + insertion + text.slice(after.offset);
}
