import Mustache from 'mustache';
import { hookdError } from '../errors.js';
import { flattenHeaders, type RawHeaders } from '../headers.js';
import { BoundedText, cutNote, MAX_TEXT_CHARS, type RenderBudget, renderBudget, withNote } from './bounded-text.js';
import { plainOf } from './item-view.js';

/**
 * A compiled template: render(view) → string, and the names it reads at its top level. What it
 * renders is bounded as it renders (docs/mappings.md#what-a-template-may-render): `budget` is the
 * request's, shared by all its renders (default: one of its own).
 */
export type Template = ((view: TemplateView, budget?: RenderBudget) => string) & { readonly names: readonly string[] };

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

/** Objects render as JSON (a `forEach` item's view as the copy it stands for), everything else as its string; nothing is HTML-escaped. */
function stringify(value: unknown): string {
  if (typeof value === 'object' && value !== null) return JSON.stringify(plainOf(value));
  return String(value);
}

/**
 * mustache's own walk of the tokens (mustache.js Writer.prototype.renderTokens), bounded: every
 * token and every section body begun spends a step of the request's budget, and what it renders
 * is kept only up to the bound. `text` is the render's count, passed where mustache passes its config.
 */
function renderTokens(
  this: Mustache.Writer,
  tokens: Token[],
  context: Mustache.Context,
  partials: undefined,
  source: string,
  text: BoundedText,
): string {
  let buffer = '';
  if (!text.step()) return buffer;
  for (const token of tokens) {
    if (!text.step()) break;
    const [symbol, name] = token;
    if (symbol === '#') buffer += this.renderSection(token as never, context, partials, source, text as never) ?? '';
    else if (symbol === '^')
      buffer += this.renderInverted(token as never, context, partials, source, text as never) ?? '';
    else if (symbol === 'text') buffer += text.piece(name);
    else if (symbol === 'name' || symbol === '&') buffer += valuePiece(text, context.lookup(name));
  }
  return buffer;
}

/** A variable's piece; past the bound, an object stops the render rather than be turned into JSON only to be counted. */
function valuePiece(text: BoundedText, value: unknown): string {
  if (value == null) return '';
  if (text.full && typeof value === 'object') {
    text.stopped = true;
    return '';
  }
  return text.piece(stringify(value));
}

const writer = new Mustache.Writer();
writer.renderTokens = renderTokens as unknown as Mustache.Writer['renderTokens'];

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
    ((view: TemplateView, budget = renderBudget()) => {
      const text = new BoundedText(budget);
      const context = new Mustache.Context(view.own, new Mustache.Context(view.top));
      return text.finish(writer.renderTokens(tokens as never, context, undefined, source, text as never));
    });
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
function plainRender(tokens: readonly Token[]): ((view: TemplateView, budget?: RenderBudget) => string) | undefined {
  const parts: { readonly text?: string; readonly name?: string; readonly path?: readonly string[] }[] = [];
  for (const [symbol, value] of tokens) {
    if (symbol === 'text') parts.push({ text: value });
    else if ((symbol === 'name' || symbol === '&') && value !== '.')
      parts.push({ name: value, ...(value.indexOf('.') > 0 ? { path: value.split('.') } : {}) });
    else return undefined;
  }
  // Nothing repeats: a render is at most its parts, each kept until the bound is passed and
  // counted for the note (docs/mappings.md#what-a-template-may-render).
  return (view, budget) => {
    let out = '';
    let length = 0;
    for (const part of parts) {
      let piece = part.text;
      if (piece === undefined) {
        let value = lookupIn(view.own, part.name as string, part.path);
        if (value === MISSING) value = lookupIn(view.top, part.name as string, part.path);
        if (typeof value === 'function') value = value.call(view.own);
        piece = value !== MISSING && value != null ? stringify(value) : '';
      }
      if (length <= MAX_TEXT_CHARS) out += piece;
      length += piece.length;
    }
    if (length <= MAX_TEXT_CHARS) return out;
    if (budget) budget.cut = true;
    return withNote(out, cutNote(length));
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
    return { payload: plainOf(this.payload), headers: this.headers, query: this.query, path: this.path, now: this.now };
  }
}

/** True for an object that is not an array (and not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
