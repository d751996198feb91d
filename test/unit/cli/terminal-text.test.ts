import { describe, expect, it } from 'vitest';
import { terminalSafe } from '../../../src/cli/terminal-text.js';

/** What the CLI prints (docs/security.md#plugins): no control character reaches the terminal raw. */

describe('terminal-safe text', () => {
  it('shows OSC 52, ESC[2K, an 8-bit CSI, BEL, DEL and bidirectional overrides as escapes', () => {
    const text = 'a\u001b]52;c;cHduZWQ=\u0007b\u001b[2Kc\u009b31md\u007fe\u202eevil\u2066f\rg';
    expect(terminalSafe(text)).toBe(
      'a\\u001b]52;c;cHduZWQ=\\u0007b\\u001b[2Kc\\u009b31md\\u007fe\\u202eevil\\u2066f\\u000dg',
    );
  });

  it('keeps tabs, new lines (a CRLF as one), accents and emoji as they are', () => {
    expect(terminalSafe('été\t🎉\r\nnext\nline')).toBe('été\t🎉\nnext\nline');
  });

  it('keeps JSON the same data', () => {
    const data = { d: 'x\u007fy\u009bz\u2028', n: 1 };
    expect(JSON.parse(terminalSafe(JSON.stringify(data, null, 2)))).toEqual(data);
  });
});
