import { describe, expect, it } from 'vitest';
import { failureDetail, hookdError } from '../../../src/errors.js';
import { codeFrameOf, createBundleMap } from '../../../src/transforms/locate.js';

describe('codeFrameOf', () => {
  it('shows three numbered lines, the failing one marked, a caret under the column', () => {
    expect(codeFrameOf('a\nb\n  throw x;\nc\n', 3, 3)).toBe(
      ['  2 | b', '> 3 |   throw x;', '    |   ^', '  4 | c'].join('\n'),
    );
    // At the first and last line there is no line beyond; numbers are padded to the widest.
    expect(codeFrameOf('boom()', 1, 1)).toBe(['> 1 | boom()', '    | ^'].join('\n'));
    const ten = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n');
    expect(codeFrameOf(ten, 10, 6)).toBe(['   9 | line 9', '> 10 | line 10', '     |      ^'].join('\n'));
  });

  it('keeps tabs in the caret line, so that it lines up under a tab-indented line', () => {
    expect(codeFrameOf('\t\tx.y;', 1, 4)).toBe(['> 1 | \t\tx.y;', '    | \t\t ^'].join('\n'));
  });

  it('cuts a long (minified) line around the column', () => {
    const line = `${'a'.repeat(500)}THROW${'b'.repeat(500)}`;
    const frame = codeFrameOf(line, 1, 501) as string;
    const [shown, caret] = frame.split('\n') as [string, string];
    expect(shown.length).toBeLessThan(140);
    expect(shown).toContain('THROW');
    expect(shown.indexOf('THROW')).toBe(caret.indexOf('^'));
  });

  it('answers nothing for a line the source does not have', () => {
    expect(codeFrameOf('one line', 4, 1)).toBeUndefined();
  });
});

describe('createBundleMap', () => {
  // `  throw new Error("x");` on bundle line 2 maps to line 3, column 3 of a.ts.
  const payload = {
    version: 3,
    file: 'bundle.js',
    sources: ['a.ts'],
    sourcesContent: ['// a\nexport function f() {\n  throw new Error("x");\n}\n'],
    names: [],
    mappings: ';EAEE',
    sourceRoot: '',
  };
  const map = createBundleMap(payload, 3);

  it("maps the bundle's frames to the author's, and drops frames outside the bundle", () => {
    const stack = [
      'Error: x',
      '    at Object.f (transform.js:2:3)',
      '    at globalThis.__hookdCall (transform.js:9:20)',
      '    at (<isolated-vm boundary>)',
      '    at f (transform.js:2:3)',
    ].join('\n');
    expect(map.locate(stack)).toEqual({
      location: { file: 'a.ts', line: 3, column: 3 },
      frames: ['at f (a.ts:3:3)'],
      codeFrame: ['  2 | export function f() {', '> 3 |   throw new Error("x");', '    |   ^', '  4 | }'].join('\n'),
    });
  });

  it('locates nothing without a frame of the bundle (a thrown string, a stack a transform rewrote)', () => {
    expect(map.locate(undefined)).toEqual({});
    expect(map.locate('Error: x\n    at somewhere (other.js:1:1)')).toEqual({});
    // A line of the bundle without a mapping of its own (an esbuild helper) is not the author's.
    expect(map.locate('Error: x\n    at transform.js:1:5')).toEqual({});
  });
});

describe('failureDetail', () => {
  it('adds the frames and the code frame to the message, within 1 KiB (the code frame first)', () => {
    const location = { file: 'm.ts', line: 5, column: 3 };
    const codeFrame = '> 5 | x';
    const err = hookdError('TRANSFORM_FAILED', { reason: 'boom', location, frames: ['at f (m.ts:5:3)'], codeFrame });
    expect(failureDetail(err)).toBe('transform failed: m.ts:5:3: boom\n    at f (m.ts:5:3)\n> 5 | x');
    const long = hookdError('TRANSFORM_FAILED', {
      reason: 'x'.repeat(900),
      location,
      frames: ['at f (m.ts:5:3)'.repeat(10)],
      codeFrame,
    });
    const detail = failureDetail(long);
    expect(detail.length).toBeLessThanOrEqual(1024);
    expect(detail.endsWith('\n> 5 | x')).toBe(true);
    expect(detail).not.toContain('at f');
    expect(failureDetail(hookdError('QUEUE_FULL'))).toBe('the run queue is full; retry later');
  });
});
