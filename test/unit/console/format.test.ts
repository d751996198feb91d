import { describe, expect, it } from 'vitest';
import { base64Bytes, bytesAsText } from '../../../console/format.js';

describe('a body that is not UTF-8, as the request page shows it', () => {
  it('keeps every valid character and shows every other byte as \\xNN', () => {
    const bytes = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from('{"a":"café ✓ 😀"}'),
      Buffer.from([0x80, 0xc3]), // a lone continuation byte, a lead byte cut short
      Buffer.from('\n\tend\\'),
      Buffer.from([0x00, 0x1b, 0x7f]),
      Buffer.from([0xc0, 0xaf, 0xed, 0xa0, 0x80]), // an overlong "/" and an encoded surrogate
    ]);
    expect(bytesAsText(bytes)).toBe(
      '\\xff\\xfe{"a":"café ✓ 😀"}\\x80\\xc3\n\tend\\\\\\x00\\x1b\\x7f\\xc0\\xaf\\xed\\xa0\\x80',
    );
  });

  it('reads the base64 the API gives back into the same bytes', () => {
    const bytes = Buffer.from([0, 1, 2, 250, 251, 255]);
    expect(Buffer.from(base64Bytes(bytes.toString('base64')))).toEqual(bytes);
  });
});
