import Mustache from 'mustache';
import { hookdError } from '../errors.js';
import { flattenHeaders, type RawHeaders } from '../headers.js';

/** A compiled template: render(view) → string, and the names it reads at its top level. */
export type Template = ((view: TemplateView) => string) & { readonly names: readonly string[] };

/**
 * What templates see (docs/mappings.md): the view's own keys (`payload`, `headers`, `query`, `path`,
 * `now`), and under them the payload's top-level keys. Two layers instead of one merged copy:
 * copying the payload's keys into every view cost about 5 µs of every templated request.
 */
export interface TemplateView {
  readonly own: Readonly<Record<string, unknown>>;
  readonly top: Readonly<Record<string, unknown>>;
}

/** The view of a mapping whose fields are all literals. */
export const EMPTY_VIEW: TemplateView = Object.freeze({ own: {}, top: {} });

const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);
/** A name no view can hold, so lookups of forbidden names render empty. */
const NOWHERE = '\u0000';

type Token = [string, string, number, number, Token[]?, number?, boolean?];

/** Objects render as JSON, everything else as its string; nothing is HTML-escaped. */
function stringify(value: unknown): string {
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return String(value);
}

const writer = new Mustache.Writer();
writer.escapedValue = (token: string[], context: Mustache.Context) => {
  const value = context.lookup(token[1] as string);
  return value == null ? '' : stringify(value);
};
writer.unescapedValue = writer.escapedValue;

/** `messages[0].id` → `messages.0.id`; any prototype name → a name that never resolves. */
function normalizeName(name: string): string {
  const dotted = name.replace(/\[(\d+)\]/g, '.$1');
  return dotted.split('.').some((part) => FORBIDDEN.has(part)) ? NOWHERE : dotted;
}

function rewrite(tokens: Token[]): Token[] {
  return tokens.map((token) => {
    const [symbol] = token;
    const copy = [...token] as Token;
    if (symbol === 'name' || symbol === '&' || symbol === '#' || symbol === '^') copy[1] = normalizeName(token[1]);
    if (token[4]) copy[4] = rewrite(token[4]);
    return copy;
  });
}

const TAGS = new Set(['name', '&', '#', '^', '/', '>']);
/** `{name}` or `{ payload.x }` in text: a variable meant, with one brace each side. */
const SINGLE_BRACES = /(?<!\{)\{\s*([A-Za-z_][\w.[\]]*)\s*\}(?!\})/;

/**
 * Mistakes mustache renders silently: a tag that swallowed a brace (`{{a} and {{b}}` is one
 * tag named `a} and {{b`, which renders empty), a stray `}}`, a variable in single braces.
 */
function lint(tokens: readonly Token[]): void {
  for (const token of tokens) {
    const [symbol, value, start] = token;
    if (TAGS.has(symbol) && /[{}]/.test(value)) {
      throw hookdError('CONFIG_PROBLEM', {
        problem: `unbalanced braces in the tag at ${start}: {{${value}}} (is a brace missing?)`,
      });
    }
    if (symbol === 'text') {
      const stray = value.indexOf('}}');
      if (stray !== -1) throw hookdError('CONFIG_PROBLEM', { problem: `a "}}" without its "{{" at ${start + stray}` });
      const single = SINGLE_BRACES.exec(value);
      if (single) {
        throw hookdError('CONFIG_PROBLEM', {
          problem: `single braces at ${start + single.index}: {${single[1]}} renders as it is; mustache needs {{${single[1]}}}`,
        });
      }
    }
    if (token[4]) lint(token[4]);
  }
}

/**
 * Compiles a mustache template once (throws on a syntax error). Rendering never escapes
 * HTML, renders objects as JSON and leaves `__proto__`, `constructor` and `prototype` empty.
 */
export function compileTemplate(source: string): Template {
  const parsed = writer.parse(source) as unknown as Token[];
  lint(parsed);
  const tokens = rewrite(parsed);
  const render =
    plainRender(tokens) ??
    ((view: TemplateView) =>
      writer.renderTokens(
        tokens as never,
        new Mustache.Context(view.own, new Mustache.Context(view.top)),
        undefined,
        source,
        undefined,
      ));
  // Names inside a section resolve against its items, which no sample view can stand for.
  const names = [...new Set(parsed.filter(([s, name]) => READS.has(s) && name !== '.').map(([, name]) => name))];
  return Object.assign(render, { names });
}

const READS = new Set(['name', '&', '#', '^']);

/**
 * The render of a template of text and variables only (no section, no partial): the same
 * lookups as mustache's Context (the view's own keys, then the payload's; a dotted name walks
 * down; a primitive's own property at its end counts), without building two contexts, their
 * caches and a writer's walk per request (about a microsecond of every templated request).
 */
function plainRender(tokens: readonly Token[]): ((view: TemplateView) => string) | undefined {
  const parts: { readonly text?: string; readonly name?: string; readonly path?: readonly string[] }[] = [];
  for (const [symbol, value] of tokens) {
    if (symbol === 'text') parts.push({ text: value });
    else if ((symbol === 'name' || symbol === '&') && value !== '.')
      parts.push({ name: value, ...(value.indexOf('.') > 0 ? { path: value.split('.') } : {}) });
    else return undefined;
  }
  return (view) => {
    let out = '';
    for (const part of parts) {
      if (part.text !== undefined) out += part.text;
      else {
        let value = lookupIn(view.own, part.name as string, part.path);
        if (value === MISSING) value = lookupIn(view.top, part.name as string, part.path);
        if (typeof value === 'function') value = value.call(view.own);
        if (value !== MISSING && value != null) out += stringify(value);
      }
    }
    return out;
  };
}

const MISSING = Symbol('missing');

/** mustache's lookup in one layer of a view (mustache.js Context.prototype.lookup): the value, or MISSING. */
function lookupIn(layer: unknown, name: string, path: readonly string[] | undefined): unknown {
  if (!path) return hasProperty(layer, name) ? (layer as Record<string, unknown>)[name] : MISSING;
  let value = layer;
  let hit = false;
  for (let i = 0; value != null && i < path.length; i++) {
    const key = path[i] as string;
    if (i === path.length - 1) hit = hasProperty(value, key) || primitiveHasOwn(value, key);
    value = (value as Record<string, unknown>)[key];
  }
  return hit ? value : MISSING;
}

const hasProperty = (value: unknown, name: string) => value != null && typeof value === 'object' && name in value;
const primitiveHasOwn = (value: unknown, name: string) =>
  value != null &&
  typeof value !== 'object' &&
  typeof (value as { hasOwnProperty?: unknown }).hasOwnProperty === 'function' &&
  Object.hasOwn(value as { hasOwnProperty(name: string): boolean }, name);

/** The `names` that resolve to nothing in `view`: what a template renders empty without a word. */
export function unresolvedNames(names: readonly string[], view: TemplateView): string[] {
  const context = new Mustache.Context(view.own, new Mustache.Context(view.top));
  return names.filter((name) => context.lookup(normalizeName(name)) === undefined);
}

export interface ViewInput {
  readonly payload: unknown;
  readonly headers: RawHeaders;
  readonly query: Readonly<Record<string, unknown>>;
  readonly path: string;
  readonly now?: Date;
  /** Read for `now` when `now` is not given (default: the system clock). */
  readonly clock?: () => Date;
}

/**
 * The view of one request. `headers` and `now` are built when a template first reads them
 * (most templates read neither; building both cost about 4 µs of every templated request).
 */
export function buildView(input: ViewInput): TemplateView {
  const own = new OwnView(input) as unknown as Readonly<Record<string, unknown>>;
  return { own, top: isPlainObject(input.payload) ? input.payload : {} };
}

/**
 * The view's own keys. A class, its two lazy keys getters of its prototype: an object literal
 * with getters made two closures and two accessors per request (about 450 ns against 10).
 * `toJSON` keeps `{{.}}` the JSON of all five keys.
 */
class OwnView {
  readonly payload: unknown;
  readonly query: Readonly<Record<string, unknown>>;
  readonly path: string;
  readonly #input: ViewInput;
  #headers: Record<string, string> | undefined;
  #now: string | undefined;
  constructor(input: ViewInput) {
    this.payload = input.payload;
    this.query = input.query;
    this.path = input.path;
    this.#input = input;
  }
  get headers(): Record<string, string> {
    this.#headers ??= flattenHeaders(this.#input.headers);
    return this.#headers;
  }
  get now(): string {
    this.#now ??= (this.#input.now ?? this.#input.clock?.() ?? new Date()).toISOString();
    return this.#now;
  }
  toJSON() {
    return { payload: this.payload, headers: this.headers, query: this.query, path: this.path, now: this.now };
  }
}

/** True for an object that is not an array (and not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
