/**
 * A small span parser for JSON5 text: where each value and key stands, so that the config
 * editor changes only the spans it touches and `check` can name a key's line and column.
 */
import { hookdError } from '../errors.js';

export type Node = ObjectNode | ArrayNode | ValueNode;
interface Span {
  start: number;
  end: number;
}
export interface ObjectNode extends Span {
  type: 'object';
  props: { key: string; keyStart: number; quoted: boolean; value: Node }[];
}
export interface ArrayNode extends Span {
  type: 'array';
  items: Node[];
}
export interface ValueNode extends Span {
  type: 'value';
  raw: string;
}

/** The offset of the next character that is neither white space nor inside a comment. */
export function skipTrivia(text: string, from: number): number {
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
      const keyStart = this.i;
      const quoted = this.text[this.i] === '"' || this.text[this.i] === "'";
      let key: string;
      if (quoted) key = this.string();
      else {
        while (this.i < this.text.length && /[\w$]/.test(this.text[this.i] as string)) this.i++;
        key = this.text.slice(keyStart, this.i);
        if (key === '') this.fail('expected a key');
      }
      this.skip();
      if (this.text[this.i++] !== ':') this.fail('expected ":"');
      props.push({ key, keyStart, quoted, value: this.value() });
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

/** The spans of a JSON5 text; throws CONFIG_EDIT_FAILED at the first thing it cannot read. */
export function parseSpans(text: string): Node {
  return new SpanParser(text).parse();
}
