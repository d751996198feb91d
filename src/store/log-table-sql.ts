import { FAILURE_BYTES_SQL } from './failed-requests.js';
import { REQUEST_BYTES_SQL } from './requests.js';
import type { LogTable } from './retention.js';

/** Where a log table's rows are, in SQL both stores run. */
export interface LogTableSql {
  readonly name: 'requests' | 'failed_requests';
  /** The column its rows age by. */
  readonly time: 'received_at' | 'created_at';
  /** A row's bytes in the log's bound (docs/operations.md#retention). */
  readonly bytes: string;
  /** Which of the table's rows it is. */
  readonly where: string;
}

/**
 * The log tables as retention counts and prunes them: the request log's authenticated records
 * and its refused ones are one table, counted apart (each has its own bound; the refused ones
 * have an index of their own, `requests_refused`).
 */
export const LOG_TABLE_SQL: Readonly<Record<LogTable, LogTableSql>> = {
  requests: { name: 'requests', time: 'received_at', bytes: REQUEST_BYTES_SQL, where: 'authenticated' },
  refused: { name: 'requests', time: 'received_at', bytes: REQUEST_BYTES_SQL, where: 'NOT authenticated' },
  failures: { name: 'failed_requests', time: 'created_at', bytes: FAILURE_BYTES_SQL, where: 'TRUE' },
};

/** The log table a request record counts in. */
export const logTableOf = (record: { readonly authenticated: boolean }): LogTable =>
  record.authenticated ? 'requests' : 'refused';
