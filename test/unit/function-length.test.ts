import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * No function in src/ is longer than 80 lines, counting the closures inside it
 * (CONTRIBUTING.md#functions): a factory returns an object of named functions that can be read
 * and tested alone, so a `createX` whose inner functions add up past 80 lines is split.
 */

const MAX_LINES = 80;

const src = join(import.meta.dirname, '..', '..', 'src');

/** A function longer than the bound: where it starts, what it is called, how long it is. */
interface LongFunction {
  readonly line: number;
  readonly name: string;
  readonly lines: number;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** A function's name: its own, else the variable or property it is assigned to. */
function nameOf(node: ts.SignatureDeclaration, file: ts.SourceFile): string {
  if (node.name) return node.name.getText(file);
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name)
    return parent.name.getText(file);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  return '(anonymous)';
}

/** Every function of `text` (nested ones too) longer than `maxLines`, its closures counted. */
function longFunctions(path: string, text: string, maxLines = MAX_LINES): LongFunction[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: LongFunction[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
      const last = file.getLineAndCharacterOfPosition(node.end).line;
      const lines = last - first + 1;
      if (lines > maxLines) found.push({ line: first + 1, name: nameOf(node, file), lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** The long functions of every file under src/, keyed by the file's path from src/ (with `/`). */
function longFunctionsOfSrc(): Map<string, LongFunction[]> {
  const byFile = new Map<string, LongFunction[]>();
  for (const path of filesUnder(src)) {
    const found = longFunctions(path, readFileSync(path, 'utf8'));
    if (found.length > 0) byFile.set(relative(src, path).split(sep).join('/'), found);
  }
  return byFile;
}

describe('function length', () => {
  it(`keeps every function in src/ within ${MAX_LINES} lines, its closures counted`, () => {
    const over = [...longFunctionsOfSrc()].flatMap(([path, found]) =>
      found.map((f) => `${path}:${f.line} ${f.name} (${f.lines} lines)`),
    );
    expect(over).toEqual([]);
  });

  it('counts a factory with its closures, names what it can, and lets 80 lines pass', () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const f${i} = () => ${i};`).join('\n');
    // Factories of one-line closures: 2 lines of their own plus the closures' (createWide: 80 lines).
    const source = [
      `export function createWide() {\n${body(78)}\n}`,
      `const makeTall = () => {\n${body(80)}\n};`,
      `const parts = {\n  build: function () {\n${body(80)}\n  },\n};`,
      `class Holder {\n  hold() {\n${body(81)}\n  }\n}`,
    ].join('\n');
    expect(longFunctions('sample.ts', source)).toEqual([
      { line: 81, name: 'makeTall', lines: 82 },
      { line: 164, name: 'build', lines: 82 },
      { line: 248, name: 'hold', lines: 83 },
    ]);
  });

  it('names a long closure inside a long function too', () => {
    const inner = Array.from({ length: 85 }, (_, i) => `    void ${i};`).join('\n');
    const source = `function outer() {\n  const inner = () => {\n${inner}\n  };\n}`;
    expect(longFunctions('sample.ts', source).map((f) => `${f.name} ${f.lines}`)).toEqual(['outer 89', 'inner 87']);
  });
});
