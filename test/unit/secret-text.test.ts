import { describe, expect, it } from 'vitest';
import { maskerOf } from '../../src/secret-text.js';

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
});
