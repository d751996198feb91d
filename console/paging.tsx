import { useEffect, useState } from 'preact/hooks';
import { ApiError, get } from './api';
import { useLoad } from './live';

/** A list page of the admin API: its rows under `field`, and the cursor of the next (older) page. */
type ListAnswer<F extends string, T> = { readonly [K in F]: T[] } & { readonly nextCursor: string | null };

/**
 * A list read page by page, newest first (`GET path`, then `&cursor=` with each `nextCursor`),
 * that live additions may extend at the top. `rowSelector` finds a row's link, to move the
 * focus to the first older row once it has arrived.
 */
export function usePagedList<F extends string, T extends object>(
  path: string,
  field: F,
  idOf: (row: T) => string,
  rowSelector: (id: string) => string,
) {
  const first = useLoad<ListAnswer<F, T>>(path);
  const [rows, setRows] = useState<T[]>([]);
  const [next, setNext] = useState<string | null>(null);
  // Older pages loaded: the view is a window into the past, and live additions wait.
  const [paged, setPaged] = useState(false);
  // Live additions that are waiting: the view is paged or searching.
  const [newer, setNewer] = useState(0);
  const [olderState, setOlderState] = useState<{ loading: boolean; error?: string }>({ loading: false });
  useEffect(() => {
    if (!first.data) return;
    setRows(first.data[field]);
    setNext(first.data.nextCursor);
    setPaged(false);
    setNewer(0);
  }, [first.data]);
  const older = async () => {
    if (!next || olderState.loading) return;
    setOlderState({ loading: true });
    try {
      const page = await get<ListAnswer<F, T>>(`${path}&cursor=${encodeURIComponent(next)}`);
      const added = page[field];
      setRows((old) => {
        const seen = new Set(old.map(idOf));
        return [...old, ...added.filter((row) => !seen.has(idOf(row)))];
      });
      setNext(page.nextCursor);
      setPaged(true);
      setOlderState({ loading: false });
      const firstAdded = added[0];
      if (firstAdded)
        requestAnimationFrame(() => document.querySelector<HTMLElement>(rowSelector(idOf(firstAdded)))?.focus());
    } catch (err) {
      setOlderState({ loading: false, error: err instanceof ApiError ? `${err.message} (${err.code})` : String(err) });
    }
  };
  return {
    rows,
    setRows,
    next,
    paged,
    newer,
    setNewer,
    older,
    olderState,
    error: first.error,
    loading: first.loading,
    reload: first.reload,
  };
}

/** Below a list: how many rows are shown, and **Older** while there are more. */
export function Pager({
  shown,
  next,
  older,
  state,
  noun,
}: {
  shown: number;
  next: string | null;
  older: () => void;
  state: { loading: boolean; error?: string };
  noun: string;
}) {
  // A filtered list looks at a stretch of the store at a time: a page may match nothing yet.
  if (shown === 0 && !next) return null;
  return (
    <p class="pager">
      <span class="hint">
        {shown === 0
          ? `No ${noun} matches among the newest looked at so far.`
          : `${shown} ${noun}${shown === 1 ? '' : 's'} shown${next ? '' : ': that is all the log holds for this view'}.`}
      </span>{' '}
      {next && (
        <button type="button" class="secondary" onClick={older} disabled={state.loading}>
          {state.loading ? 'Loading…' : 'Older'}
        </button>
      )}
      {state.error && <span class="problem"> {state.error}</span>}
    </p>
  );
}
