import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgPool } from '../../src/store/postgres/contract.js';
import { type PgCluster, postgresTestsRun, startPgCluster } from '../helpers/postgres.js';

/**
 * A node's connections to PostgreSQL (docs/scale.md): each is handed out with its session's
 * timeouts set, and never with a query of its own still running. pg queues a query sent beside
 * another, warns that version 9 will refuse it, and prints that warning into the gateway's log.
 * This file is its own process: pg warns once a process, and nothing here has used pg before.
 */
let cluster: PgCluster | undefined;
const warnings: string[] = [];
const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);

beforeAll(async () => {
  if (!postgresTestsRun) return;
  process.on('warning', onWarning);
  cluster = await startPgCluster();
});
afterAll(async () => {
  process.off('warning', onWarning);
  await cluster?.stop();
});

describe.skipIf(!postgresTestsRun)("a node's pool of connections", () => {
  it('hands out a connection once its timeouts are set, so that no query is sent beside another', async () => {
    const pool = createPgPool(cluster?.url as string, { max: 3, idleInTransactionMs: 2000 });
    try {
      const shown = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          pool.query(i % 2 ? 'SHOW idle_in_transaction_session_timeout' : 'SHOW statement_timeout'),
        ),
      );
      expect(shown.map((r) => Object.values(r.rows[0] as object)[0])).toEqual(['35s', '2s', '35s', '2s', '35s', '2s']);
      const client = await pool.connect();
      try {
        expect((await client.query('SHOW statement_timeout')).rows[0].statement_timeout).toBe('35s');
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
    expect(warnings).toEqual([]);
  });
});
