import { existsSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresTestsRun, startPgCluster } from '../helpers/postgres.js';

/**
 * The private PostgreSQL clusters the scale-out tests and benches run on (docs/scale.md): one per
 * test run, unprivileged, loopback only, password authentication, gone after `stop`.
 */
describe.skipIf(!postgresTestsRun)('a private PostgreSQL cluster', () => {
  it('starts two at once on loopback ports with password authentication, and removes each on stop', async () => {
    const [a, b] = await Promise.all([startPgCluster(), startPgCluster()]);
    try {
      expect(a.port).not.toBe(b.port);
      expect(a.url).toMatch(/^postgres:\/\/hookd:[^@]+@127\.0\.0\.1:\d+\/hookd$/);
      for (const cluster of [a, b]) {
        const client = new pg.Client({ connectionString: cluster.url });
        await client.connect();
        const { rows } = await client.query<{ db: string; port: string }>(
          "SELECT current_database() AS db, current_setting('port') AS port",
        );
        expect(rows).toEqual([{ db: 'hookd', port: String(cluster.port) }]);
        await client.end();
      }
      const wrong = new pg.Client({ connectionString: a.url.replace(a.password, 'not-the-password') });
      await expect(wrong.connect()).rejects.toThrow(/password authentication failed/);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
    expect(existsSync(a.dir)).toBe(false);
    const gone = new pg.Client({ connectionString: b.url, connectionTimeoutMillis: 2000 });
    await expect(gone.connect()).rejects.toThrow();
  });
});
