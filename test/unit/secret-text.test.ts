import { describe, expect, it } from 'vitest';
import { maskerOf, maskValues } from '../../src/secret-text.js';

describe('maskerOf', () => {
  it('masks a secret as written, URL-encoded in either case or with + for a space, and JSON-escaped', () => {
    const secret = 'sk/0"a+b c';
    const mask = maskerOf([secret, undefined]);
    const encoded = encodeURIComponent(secret);
    const json = JSON.stringify(secret).slice(1, -1);
    for (const form of [
      secret,
      encoded,
      encoded.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()),
      encoded.replace(/%20/g, '+'),
      json,
      json.replace(/\//g, '\\/'),
    ])
      expect(mask(`key=${form};`)).toBe('key=[REDACTED];');
    expect(maskerOf([])('nothing to mask')).toBe('nothing to mask');
  });

  it('masks payload values: 4 characters and more anywhere, 3 as a word, and the start of one a cut text ends with', () => {
    const values = ['4111-2222-3333-4444', '737', '42'];
    expect(maskValues('card 4111-2222-3333-4444 (cvc 737) at line 1737, 42 left', values, '[x]')).toBe(
      'card [x] (cvc [x]) at line 1737, 42 left',
    );
    expect(maskValues(`${'e'.repeat(20)} 4111-2222…`, values, '[x]')).toBe(`${'e'.repeat(20)} [x]…`);
    expect(maskValues('nothing here…', values, '[x]')).toBe('nothing here…');
  });
});
