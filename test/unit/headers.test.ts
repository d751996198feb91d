import { describe, expect, it } from 'vitest';
import { CREDENTIAL_HEADERS, flattenHeaders } from '../../src/headers.js';

describe('flattenHeaders', () => {
  it('joins repeated headers, lower-cases names and drops undefined values', () => {
    expect(flattenHeaders({ 'X-A': 'one', 'x-b': ['two', 'three'], 'x-c': undefined })).toEqual({
      'x-a': 'one',
      'x-b': 'two, three',
    });
  });

  it('leaves out the credential headers whatever their case', () => {
    const flat = flattenHeaders(
      { Authorization: 'Bearer secret', 'x-service-token': 't', cookie: 'c', 'content-type': 'application/json' },
      CREDENTIAL_HEADERS,
    );
    expect(flat).toEqual({ 'content-type': 'application/json' });
  });
});
