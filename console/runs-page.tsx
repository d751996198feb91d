import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { MappingView, RunListItem } from './api';
import { useLive, useLoad } from './live';
import { Pager, usePagedList } from './paging';
import { RunsTable } from './runs-table';

/** Past this many rows, a list that keeps growing live starts again from its first page. */
const MAX_LIVE_ROWS = 500;

const STATUSES = [
  ['', 'any'],
  ['queued', 'queued'],
  ['running', 'running'],
  ['ok', 'ok'],
  ['error', 'error'],
  ['timeout', 'timeout'],
  ['cancelled', 'cancelled'],
  ['failed', 'failed (error, timeout or delivery)'],
] as const;

/** Whether a run belongs under a status filter (`failed`: error, timeout, or its reply not delivered). */
function hasStatus(run: RunListItem, status: string): boolean {
  if (!status) return true;
  if (status === 'failed')
    return run.status === 'error' || run.status === 'timeout' || run.delivery?.status === 'failed';
  return run.status === status;
}

/** Every run, newest first, by status and mapping; runs update as they move. */
export function RunsPage() {
  const [status, setStatus] = useState('');
  const [mapping, setMapping] = useState('');
  const mappings = useLoad<{ mappings: MappingView[] }>('/api/mappings');
  const query = new URLSearchParams({ limit: '100', ...(status ? { status } : {}), ...(mapping ? { mapping } : {}) });
  const list = usePagedList<'runs', RunListItem>(
    `/api/runs?${query}`,
    'runs',
    (run) => run.runId,
    (id) => `tr[data-run-id="${CSS.escape(id)}"] a`,
  );
  const { setRows, setNewer, paged } = list;
  // The runs in view, and those counted as newer while older pages are shown.
  const inView = useRef(new Set<string>());
  inView.current = new Set(list.rows.map((r) => r.runId));
  const counted = useRef(new Set<string>());
  if (list.newer === 0) counted.current.clear();
  const onLive = useCallback(
    (kind: string, data: unknown) => {
      if (kind !== 'run') return;
      const run = data as RunListItem;
      if (mapping && run.mappingId !== mapping) return;
      // A run in view moves on in place (it stays, even when it no longer fits the status).
      if (inView.current.has(run.runId)) return setRows((old) => old.map((r) => (r.runId === run.runId ? run : r)));
      if (!hasStatus(run, status)) return;
      if (paged) {
        if (!counted.current.has(run.runId)) setNewer((n) => n + 1);
        counted.current.add(run.runId);
        return;
      }
      inView.current.add(run.runId);
      setRows((old) => [run, ...old]);
    },
    [status, mapping, paged],
  );
  useLive(onLive);
  // A page left open all day starts again from its first page rather than grow without end.
  useEffect(() => {
    if (!paged && list.rows.length > MAX_LIVE_ROWS) list.reload();
  }, [list.rows.length]);
  return (
    <>
      <h1 tabIndex={-1}>Runs</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter the runs">
        <label>
          Status{' '}
          <select name="status" value={status} onChange={(e) => setStatus((e.target as HTMLSelectElement).value)}>
            {STATUSES.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Mapping{' '}
          <select name="mapping" value={mapping} onChange={(e) => setMapping((e.target as HTMLSelectElement).value)}>
            <option value="">any</option>
            {(mappings.data?.mappings ?? []).map((m) => (
              <option key={m.id} value={m.id}>
                {m.id}
              </option>
            ))}
          </select>
        </label>
      </form>
      {list.newer > 0 && (
        <p class="notice" aria-live="polite">
          {list.newer} newer run{list.newer === 1 ? '' : 's'} since this view was loaded.{' '}
          <button type="button" class="secondary" onClick={list.reload}>
            Show newest
          </button>
        </p>
      )}
      {list.error ? (
        <p class="problem">{list.error}</p>
      ) : (
        <>
          <RunsTable runs={list.rows} full />
          <Pager shown={list.rows.length} next={list.next} older={list.older} state={list.olderState} noun="run" />
        </>
      )}
    </>
  );
}
