/**
 * Replies are Markdown as models write them (docs/channels.md#formatting). This reads the part of
 * it chat services render — fenced code, headings, quotes, list items; code spans, bold, italic,
 * strikethrough and links — and hands it to a kind's renderer. What it does not know stays text.
 */

import { isSpace, type Span, spansOf } from './spans.js';

export type Inline =
  | { readonly t: 'text'; readonly s: string }
  | { readonly t: 'code'; readonly s: string }
  | { readonly t: 'bold' | 'italic' | 'strike'; readonly inner: readonly Inline[] }
  | { readonly t: 'link'; readonly inner: readonly Inline[]; readonly url: string };

/** The inline node a span of `s` is. */
function nodeOf(s: string, span: Span): Inline {
  const inner = s.slice(span.innerStart, span.innerEnd);
  if (span.t === 'code') {
    const padded = inner.length > 1 && inner.startsWith(' ') && inner.endsWith(' ');
    return { t: 'code', s: padded ? inner.slice(1, -1) : inner };
  }
  if (span.t === 'link') return { t: 'link', inner: parseInline(inner), url: s.slice(span.innerEnd + 2, span.end - 1) };
  return { t: span.t, inner: parseInline(inner) };
}

/** Where a span or an escape may start: the text between is taken whole. */
const MARKS = '\\`[*_~';

/** Parses one line's inline Markdown; a backslash escapes the next punctuation character. */
export function parseInline(s: string): Inline[] {
  const spanAt = spansOf(s);
  const out: Inline[] = [];
  let plain = '';
  const flush = () => {
    if (plain !== '') out.push({ t: 'text', s: plain });
    plain = '';
  };
  for (let i = 0; i < s.length; ) {
    let next = i;
    while (next < s.length && !MARKS.includes(s[next] as string)) next++;
    if (next > i) {
      plain += s.slice(i, next);
      i = next;
      continue;
    }
    if (s[i] === '\\' && /[\\`*_~[\]()#>+-]/.test(s[i + 1] ?? '')) {
      plain += s[i + 1];
      i += 2;
      continue;
    }
    const span = spanAt(i);
    if (span) {
      flush();
      out.push(nodeOf(s, span));
      i = span.end;
      continue;
    }
    plain += s[i];
    i++;
  }
  flush();
  return out;
}

/** How a kind writes each piece (docs/channels.md#formatting). */
export interface Renderer {
  text(s: string): string;
  code(s: string): string;
  bold(inner: string): string;
  italic(inner: string): string;
  strike(inner: string): string;
  /** A link to a web page or a mail address (`http:`, `https:`, `mailto:`): no other is rendered as one. */
  link(label: string, url: string): string;
  codeBlock(code: string, language: string): string;
  heading(inner: string): string;
  /** Consecutive quoted lines, rendered, joined by newlines. */
  quote(lines: string): string;
  bullet(inner: string): string;
}

/**
 * Whether a link goes to a web page or a mail address: only those become links
 * (docs/channels.md#formatting). A chat service reads other targets as more than a page to
 * open (a mention of a user or of a whole channel, which pings), so a link to one stays text,
 * as written.
 */
const isWebLink = (url: string) => /^(?:https?:\/\/|mailto:)/i.test(url);

/** Renders inline nodes. */
export function renderInline(nodes: readonly Inline[], r: Renderer): string {
  return nodes
    .map((n) => {
      switch (n.t) {
        case 'text':
          return r.text(n.s);
        case 'code':
          return r.code(n.s);
        case 'link':
          return isWebLink(n.url)
            ? r.link(renderInline(n.inner, r), n.url)
            : `${r.text('[')}${renderInline(n.inner, r)}${r.text(`](${n.url})`)}`;
        default:
          return r[n.t](renderInline(n.inner, r));
      }
    })
    .join('');
}

/** A fence: its marker (three or more ` or ~) and its language, the first word after it. */
export interface Fence {
  readonly marker: string;
  readonly language: string;
}

/** Characters a line holds that `.` of a pattern never matched: a heading or list item held none. */
const BREAKS = /[\r\u2028\u2029]/;

/*
 * A line is read by a pattern for its start and by hand for the rest: the patterns this replaces
 * backtracked, and a heading of a few thousand spaces held the event loop for minutes
 * (docs/channels.md#formatting).
 */

/** The fence `line` is (up to three spaces, then three or more ` or ~, no ` after them). */
export function fenceOf(line: string): Fence | undefined {
  let at = 0;
  while (line[at] === ' ') at++;
  const c = line[at];
  if (at > 3 || (c !== '`' && c !== '~')) return undefined;
  let end = at;
  while (line[end] === c) end++;
  if (end - at < 3 || line.includes('`', end)) return undefined;
  return { marker: line.slice(at, end), language: /^\s*(\S*)/.exec(line.slice(end))?.[1] ?? '' };
}

/** The text of a heading (`## Title ##` is `Title`), when `line` is one. */
function headingOf(line: string): string | undefined {
  const start = /^ {0,3}#{1,6}\s+/.exec(line)?.[0].length;
  if (start === undefined) return undefined;
  let end = line.length;
  while (end > start && isSpace(line[end - 1])) end--;
  while (end > start && line[end - 1] === '#') end--;
  while (end > start && isSpace(line[end - 1])) end--;
  const text = line.slice(start, end);
  return BREAKS.test(text) ? undefined : text;
}

/** The indent and text of a list item (`- `, `* ` or `+ `), when `line` is one. */
function bulletOf(line: string): { readonly indent: string; readonly text: string } | undefined {
  const start = /^(\s*)[-*+]\s+/.exec(line);
  if (!start) return undefined;
  const text = line.slice(start[0].length);
  return BREAKS.test(text) ? undefined : { indent: start[1] as string, text };
}

/** Renders a whole reply, block by block. */
export function renderMarkdown(text: string, r: Renderer): string {
  const lines = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const fence = fenceOf(line);
    if (fence) {
      const body: string[] = [];
      let j = i + 1;
      while (j < lines.length && !(lines[j] as string).trim().startsWith(fence.marker)) body.push(lines[j++] as string);
      out.push(r.codeBlock(body.join('\n'), fence.language));
      i = j;
      continue;
    }
    if (/^ {0,3}>/.test(line)) {
      const quoted: string[] = [];
      for (; i < lines.length && /^ {0,3}>/.test(lines[i] as string); i++)
        quoted.push(renderInline(parseInline((lines[i] as string).replace(/^ {0,3}> ?/, '')), r));
      i--;
      out.push(r.quote(quoted.join('\n')));
      continue;
    }
    const heading = headingOf(line);
    const bullet = heading === undefined ? bulletOf(line) : undefined;
    if (heading !== undefined) out.push(r.heading(renderInline(parseInline(heading), r)));
    else if (bullet) out.push(`${bullet.indent}${r.bullet(renderInline(parseInline(bullet.text), r))}`);
    else out.push(renderInline(parseInline(line), r));
  }
  return out.join('\n');
}
