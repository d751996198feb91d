import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The repository is read by people who have nothing else: its code and docs cite its own
 * docs/, never a design document that lives outside it, and every `docs/<page>.md#anchor`
 * they cite is a page with that heading.
 */
const root = join(import.meta.dirname, '..', '..');
const PLACES = [
  'src',
  'console',
  'presets',
  'docs',
  'bin',
  'bench',
  'scripts',
  'test',
  'transforms',
  'README.md',
  'CONTRIBUTING.md',
];
const TEXT = /\.(ts|tsx|mts|js|mjs|json|json5|md|css|html)$/;

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (statSync(path).isFile()) return TEXT.test(path) ? [path] : [];
  return readdirSync(path, { withFileTypes: true }).flatMap((entry) =>
    entry.name === 'node_modules' || entry.name === 'dist' ? [] : filesUnder(join(path, entry.name)),
  );
}

const FILES = PLACES.flatMap((place) => filesUnder(join(root, place)));
// Each spelled in two parts, so that this file does not cite what it looks for.
const OUTSIDE_DOC = new RegExp(`${'DESI'}GN( §|\\.md)`);
/**
 * What only a reader with papers from outside the repository could follow: a section of the
 * seed the product grew from, an issue of the tracker ("issue N item M"), the house's style notes.
 * Say the rule or the behaviour instead, or cite docs/.
 */
const OUTSIDE_REFERENCES: readonly [string, RegExp][] = [
  ['no section of the seed', new RegExp(`\\b${'se'}ed (§|table \\d)`, 'i')],
  // A number, as in a tracker's issue; GitHub's own payloads say "issue #1347" and stay.
  ['no issue of the tracker', new RegExp(`\\b${'iss'}ues? \\d`, 'i')],
  ['no style notes', new RegExp(`${'STY'}LE\\.md`)],
];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(page: string): Set<string> {
  const text = readFileSync(join(root, 'docs', page), 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1] as string)));
}

describe('the repository is self-contained', () => {
  it('cites no design document from outside the repository', () => {
    const citing = FILES.filter((file) => OUTSIDE_DOC.test(readFileSync(file, 'utf8'))).map((f) => relative(root, f));
    expect(citing).toEqual([]);
  });

  it.each(OUTSIDE_REFERENCES)('cites %s', (_what, pattern) => {
    const citing = FILES.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => (pattern.test(line) ? [`${relative(root, file)}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(citing).toEqual([]);
  });

  it('cites only docs pages and headings that exist', () => {
    const broken: string[] = [];
    const anchors = new Map<string, Set<string>>();
    for (const file of FILES) {
      for (const m of readFileSync(file, 'utf8').matchAll(/\bdocs\/([a-z0-9-]+\.md)(?:#([a-z0-9-]+))?/g)) {
        const [cited, page, anchor] = m as unknown as [string, string, string | undefined];
        if (!existsSync(join(root, 'docs', page))) {
          broken.push(`${relative(root, file)}: ${cited}`);
          continue;
        }
        if (anchor === undefined) continue;
        if (!anchors.has(page)) anchors.set(page, anchorsOf(page));
        if (!anchors.get(page)?.has(anchor)) broken.push(`${relative(root, file)}: ${cited}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
