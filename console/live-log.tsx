import type { JSX } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { get, type RequestDetail, type RequestView, type RunListItem, type RunOutcome } from './api';
import { type LiveState, useLive, useLiveState } from './live';
import { Pager, usePagedList } from './paging';
import { RequestsTable } from './requests-table';

/** Past this many rows, a live log that keeps growing starts again from its first page. */
const MAX_LIVE_ROWS = 500;
const PAGE_SIZE = 100;
/** A request of several runs reads its outcome at most this often while its runs move. */
const OUTCOME_REFRESH_MS = 500;
/** A request whose runs were still under way at its last read is read again after this, moves told or not. */
const UNSETTLED_REREAD_MS = 2000;
const settled = (runs: readonly RunListItem[]) => runs.every((r) => r.status !== 'queued' && r.status !== 'running');
/** Runs the stream told about lately, for a request that arrives after its run moved on. */
const MAX_KNOWN_RUNS = 500;

/** The live log's filters, as typed (`since` and `until` as a `datetime-local` field gives them). */
interface Filters {
  readonly q: string;
  readonly path: string;
  readonly eventType: string;
  readonly status: string;
  readonly since: string;
  readonly until: string;
}

const NONE: Filters = { q: '', path: '', eventType: '', status: '', since: '', until: '' };

/**
 * A `datetime-local` value as an ISO time; `end`: the end of the second it names (the API's
 * `until` is exclusive, so a range's last second is in it whole). The fields show seconds, but
 * the browser leaves `:00` off a value (`14:05` is 14:05:00, not the whole minute).
 */
function isoOf(local: string, end: boolean): string | undefined {
  const at = new Date(local).getTime();
  if (!local || Number.isNaN(at)) return undefined;
  return new Date(end ? at + 1000 : at).toISOString();
}

function queryOf(f: Filters): string {
  const since = isoOf(f.since, false);
  const until = isoOf(f.until, true);
  const query = new URLSearchParams({
    limit: String(PAGE_SIZE),
    ...(f.q ? { q: f.q } : {}),
    ...(f.path ? { path: f.path } : {}),
    ...(f.eventType ? { eventType: f.eventType } : {}),
    ...(f.status ? { status: f.status } : {}),
    ...(since ? { since } : {}),
    ...(until ? { until } : {}),
  });
  return `/api/requests?${query}`;
}

/** Whether a request the stream brought belongs in the view (a search is matched by the server only). */
function fits(r: RequestView, f: Filters): boolean {
  if (f.path && r.path !== f.path) return false;
  if (f.eventType && r.eventType !== f.eventType) return false;
  if (f.status && !String(r.status).startsWith(f.status[0] as string)) return false;
  const since = isoOf(f.since, false);
  const until = isoOf(f.until, true);
  return (!since || r.receivedAt >= since) && (!until || r.receivedAt < until);
}

/** The outcome of a request's runs: one status when they agree, `mixed` when not. */
function summarise(runs: readonly RunListItem[]): RunOutcome | undefined {
  const one = <T,>(values: T[]) => (new Set(values).size === 1 ? values[0] : 'mixed');
  if (runs.length === 0) return undefined;
  const status = one(runs.map((r) => r.status)) as RunOutcome['status'];
  const deliveries = runs.flatMap((r) => (r.delivery ? [r.delivery.status] : []));
  return deliveries.length ? { status, delivery: one(deliveries) as RunOutcome['delivery'] } : { status };
}

const outcomeOfRun = (run: RunListItem): RunOutcome =>
  run.delivery ? { status: run.status, delivery: run.delivery.status } : { status: run.status };

const LIVE_TEXT: Record<LiveState, string> = {
  connecting: 'connecting…',
  open: 'live',
  reconnecting: 'reconnecting…',
  closed: 'disconnected: reload the page',
};

function LiveIndicator({ state, paused }: { state: LiveState; paused: string | undefined }) {
  return (
    <span class={`live ${state}`} data-state={state} aria-live="polite">
      {LIVE_TEXT[state]}
      {paused && state === 'open' ? ` (paused: ${paused})` : ''}
    </span>
  );
}

/** A text field of the filters. */
function Field({
  label,
  name,
  value,
  ...rest
}: { label: string; name: keyof Filters; value: string } & JSX.InputHTMLAttributes<HTMLInputElement>) {
  return (
    <label>
      {label} <input name={name} defaultValue={value} {...rest} />
    </label>
  );
}

/** The live request log: newest first, searched and filtered, paged, new requests added as they arrive. */
export function RequestsPage() {
  const [filters, setFilters] = useState<Filters>(NONE);
  const list = usePagedList<'requests', RequestView>(
    queryOf(filters),
    'requests',
    (r) => r.id,
    (id) => `tr[data-request-id="${CSS.escape(id)}"] a`,
  );
  const { setRows, setNewer, reload } = list;
  const knownRuns = useRef(new Map<string, RunListItem>());
  // A search is matched by the server, and older pages are the past: neither takes live
  // additions, which are counted instead.
  const paused = filters.q ? 'searching' : list.paged ? 'showing older pages' : undefined;
  const onLive = useCallback(
    (kind: string, data: unknown) => {
      if (kind === 'run') return updateRun(data as RunListItem);
      const r = data as RequestView;
      if (!fits(r, filters)) return;
      if (paused) return setNewer((n) => n + 1);
      const known = r.runIds.length === 1 ? knownRuns.current.get(r.runIds[0] as string) : undefined;
      setRows((old) => [known && !r.outcome ? { ...r, outcome: outcomeOfRun(known) } : r, ...old]);
    },
    [filters, paused],
  );
  // A run moved on: the outcome of the request that made it follows.
  const updateRun = (run: RunListItem) => {
    const known = knownRuns.current;
    known.delete(run.runId);
    known.set(run.runId, run);
    if (known.size > MAX_KNOWN_RUNS) known.delete(known.keys().next().value as string);
    setRows((old) =>
      old.map((row) => {
        if (!row.runIds.includes(run.runId)) return row;
        if (row.runIds.length === 1) return { ...row, outcome: outcomeOfRun(run) };
        refreshOutcome(row.id);
        return row;
      }),
    );
  };
  // A request of several runs: their summary, read whole, once for the moves of a moment (each
  // of a fan-out's 100 runs moves three times: one read each was 300 reads of the whole request).
  const refreshing = useRef(new Set<string>());
  // The newest read of each request: on a busy gateway an earlier read can answer after a later
  // one, and its older outcome must not stay on the row once the runs stop moving.
  const newestRead = useRef(new Map<string, number>());
  const refreshOutcome = (id: string, afterMs = OUTCOME_REFRESH_MS) => {
    if (refreshing.current.has(id)) return;
    refreshing.current.add(id);
    setTimeout(() => {
      refreshing.current.delete(id);
      const read = (newestRead.current.get(id) ?? 0) + 1;
      newestRead.current.set(id, read);
      get<RequestDetail>(`/api/requests/${encodeURIComponent(id)}`).then(
        (detail) => {
          if (newestRead.current.get(id) !== read) return;
          setRows((old) => old.map((row) => (row.id === id ? { ...row, outcome: summarise(detail.runs) } : row)));
          // A move the stream did not tell (a slow page's stream is cut and made again) must not
          // leave the row behind its runs: one still under way is read again.
          if (!settled(detail.runs)) refreshOutcome(id, UNSETTLED_REREAD_MS);
        },
        () => {},
      );
    }, afterMs);
  };
  useLive(onLive);
  // A live log left open all day starts again from its first page rather than grow without end.
  useEffect(() => {
    if (!paused && list.rows.length > MAX_LIVE_ROWS) reload();
  }, [list.rows.length]);
  const liveState = useLiveState();
  const apply = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const read = (name: keyof Filters) => String(form.get(name) ?? '').trim();
    setFilters({
      q: read('q'),
      path: read('path'),
      eventType: read('eventType'),
      status: read('status'),
      since: read('since'),
      until: read('until'),
    });
  };
  const clear = (event: Event) => {
    const form = (event.currentTarget as HTMLButtonElement).form;
    for (const field of form?.querySelectorAll('input, select') ?? []) (field as HTMLInputElement).value = '';
    setFilters(NONE);
  };
  return (
    <>
      <h1 tabIndex={-1}>Live log</h1>
      <form class="filters" aria-label="Search the log" onSubmit={apply}>
        <Field
          label="Search"
          name="q"
          value={filters.q}
          type="search"
          placeholder="request id, event type or payload text"
          size={30}
        />
        <Field label="Hook" name="path" value={filters.path} placeholder="any" size={12} />
        <Field label="Event type" name="eventType" value={filters.eventType} placeholder="any" size={14} />
        <label>
          Status{' '}
          <select
            name="status"
            defaultValue={filters.status}
            onChange={(e) => (e.currentTarget as HTMLSelectElement).form?.requestSubmit()}
          >
            <option value="">any</option>
            <option value="2xx">2xx</option>
            <option value="4xx">4xx</option>
            <option value="5xx">5xx</option>
          </select>
        </label>
        <span class="row-break" />
        <Field label="From" name="since" value={filters.since} type="datetime-local" step={1} />
        <Field label="To" name="until" value={filters.until} type="datetime-local" step={1} />
        <span>
          <button type="submit">Search</button>{' '}
          <button type="button" class="secondary" onClick={clear}>
            Clear
          </button>
        </span>
        <LiveIndicator state={liveState} paused={paused} />
      </form>
      {list.newer > 0 && (
        <p class="notice" aria-live="polite">
          {list.newer} newer request{list.newer === 1 ? '' : 's'} since this view was loaded.{' '}
          <button type="button" class="secondary" onClick={reload}>
            Show newest
          </button>
        </p>
      )}
      {list.error ? (
        <p class="problem">{list.error}</p>
      ) : (
        <>
          <RequestsTable rows={list.rows} />
          <Pager shown={list.rows.length} next={list.next} older={list.older} state={list.olderState} noun="request" />
        </>
      )}
    </>
  );
}
