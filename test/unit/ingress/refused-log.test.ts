import { describe, expect, it } from 'vitest';
import type { RequestLogRecord } from '../../../src/actions/index.js';
import { createRefusedLog } from '../../../src/ingress/refused-log.js';
import { createStore, createStoreSink } from '../../../src/store/sqlite/index.js';
import { createManualClock, until } from '../../helpers/clock.js';

/** The caps of refused requests in the request log (docs/runtime.md#request-log-and-replay). */

const refusal = (client: string, n: number): RequestLogRecord => ({
  id: `${client}-${n}`,
  receivedAt: 0,
  path: 'wake',
  url: '/hooks/wake',
  client,
  status: 401,
  code: 'UNAUTHORIZED',
  eventIds: [],
  runIds: [],
  durationMs: 0,
  headers: {},
  credentials: {},
  authenticated: false,
  body: Buffer.alloc(0),
  bodyBytes: 0,
  truncated: false,
  redacted: false,
  bodyWhole: false,
});

describe('the refused log', () => {
  it('bounds a flood from many addresses: 10 × refusedPerMinute records, 256 counted apart, one count for the rest', async () => {
    const store = createStore({ path: ':memory:', synchronous: 'normal' });
    const clock = createManualClock(Date.UTC(2030, 0, 1, 12, 0, 0));
    const log = createRefusedLog({ perMinute: 2, sink: createStoreSink(store), clock });
    let built = 0;
    // 1,000 addresses, 3 refusals each: 3,000 refused requests in one minute.
    for (let round = 0; round < 3; round++)
      for (let a = 0; a < 1000; a++)
        log.refused(`10.0.${a >> 8}.${a & 255}`, { status: 401, code: 'UNAUTHORIZED', path: 'wake' }, () => {
          built++;
          return refusal(`10.0.${a >> 8}.${a & 255}`, round);
        });
    // Only what is kept is ever built: 20 records (10 × 2).
    expect(built).toBe(20);
    await clock.advance(60_000);
    const rows = () =>
      store.db.prepare('SELECT client_address, more_refused, reason FROM requests ORDER BY seq').all() as {
        client_address: string | null;
        more_refused: number | null;
        reason: string;
      }[];
    await until(() => rows().length === 20 + 256 + 1);
    const all = rows();
    const counted = all.reduce((sum, row) => sum + (row.more_refused ?? 1), 0);
    expect(counted).toBe(3000);
    expect(all.at(-1)).toMatchObject({
      client_address: null,
      reason: expect.stringMatching(/^\d+ more refused from other addresses in this minute/),
    });
    store.close();
  });
});
