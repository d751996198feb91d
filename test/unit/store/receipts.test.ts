import { describe, expect, it } from 'vitest';
import { receiptColumn, receiptOfColumn } from '../../../src/store/receipts.js';

describe('a receipt as a row keeps it (docs/runtime.md#request-log-and-replay)', () => {
  it('reads back what it wrote', () => {
    const byToken = { by: 'token', via: 'query', credential: 'fp', bodyRead: false } as const;
    const bySignature = {
      by: 'signature',
      credentials: { a: 'fp-a', b: 'fp-b' },
      bodyRead: true,
      webhookId: 'w',
    } as const;
    expect(receiptOfColumn(receiptColumn(byToken))).toEqual(byToken);
    expect(receiptOfColumn(receiptColumn(bySignature))).toEqual(bySignature);
    expect(receiptColumn(undefined)).toBeNull();
  });

  it('reads anything but a whole receipt as none: its request is then not replayable', () => {
    for (const text of [
      null,
      undefined,
      '',
      'not json',
      'null',
      '[]',
      '{"by":"token","via":"bearer","credential":"fp"}',
      '{"by":"token","via":"cookie","credential":"fp","bodyRead":true}',
      '{"by":"token","via":"bearer","bodyRead":true}',
      '{"by":"signature","credentials":{},"bodyRead":true}',
      '{"by":"signature","credentials":{"a":1},"bodyRead":true}',
      '{"by":"signature","credentials":{"a":"fp"},"bodyRead":"yes"}',
      '{"by":"signature","credentials":{"a":"fp"},"bodyRead":true,"webhookId":7}',
      '{"by":"password","bodyRead":true}',
    ])
      expect(receiptOfColumn(text), String(text)).toBeUndefined();
  });
});
