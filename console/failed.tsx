import { useRef, useState } from 'preact/hooks';
import { post, type RequestView } from './api';
import { replayBlocker } from './format';
import { Pager, usePagedList } from './paging';
import { RequestsTable } from './requests-table';
import { Tabs } from './tabs';

const TABS = [
  { id: 'ours', label: 'Failed on our side' },
  { id: 'refused', label: 'Refused at the door' },
] as const;
type Tab = (typeof TABS)[number]['id'];

/** Requests answered 5xx and not replayed yet: a transform that threw, a store that failed. */
const FAILED = '/api/requests?status=5xx&replayed=false&replays=false&limit=100';
/** Requests refused before they were let in: a wrong token or signature, an unknown hook, a flood. */
const REFUSED = '/api/requests?refused=true&limit=100';

/** The 5xx tab: select what can be replayed, and replay it, oldest first. */
function FailedOnOurSide() {
  const list = usePagedList<'requests', RequestView>(
    FAILED,
    'requests',
    (r) => r.id,
    (id) => `tr[data-request-id="${CSS.escape(id)}"] a`,
  );
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [results, setResults] = useState<string[]>([]);
  const busy = useRef(false);
  const [running, setRunning] = useState(false);
  const replayable = list.rows.filter((r) => !replayBlocker(r));
  const select = (id: string, on: boolean) =>
    setSelected((old) => {
      const next = new Set(old);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  // One pass at a time: a second click while replaying would replay everything twice.
  const replaySelected = async () => {
    if (busy.current) return;
    busy.current = true;
    setRunning(true);
    const done: string[] = [];
    try {
      // Oldest first, as they arrived.
      for (const r of [...replayable].reverse().filter((row) => selected.has(row.id))) {
        const answer = await post<Record<string, unknown>>(`/api/requests/${encodeURIComponent(r.id)}/replay`);
        const already = answer.headers.get('idempotent-replayed') === 'true' ? ' (already run: its first answer)' : '';
        done.push(
          `${r.id}: ${answer.status}${answer.status >= 300 ? ` ${String(answer.body?.error ?? '')}` : already}`,
        );
        setResults([...done]);
      }
    } catch (err) {
      setResults([...done, `stopped: ${String(err)}`]);
    } finally {
      setSelected(new Set());
      busy.current = false;
      setRunning(false);
      list.reload();
    }
  };
  return (
    <>
      <p class="hint">
        Answered 5xx and not replayed yet, with the message each was answered. Fix the transform (it reloads on its
        own), then replay.
      </p>
      <p>
        <button
          type="button"
          onClick={() => setSelected(new Set(replayable.map((r) => r.id)))}
          class="secondary"
          disabled={replayable.length === 0}
        >
          Select all
        </button>{' '}
        <button type="button" onClick={replaySelected} disabled={running || selected.size === 0}>
          Replay selected ({selected.size})
        </button>
      </p>
      <div aria-live="polite">
        {results.length > 0 && (
          <ul class="results">
            {results.map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
        )}
      </div>
      {list.error ? (
        <p class="problem">{list.error}</p>
      ) : (
        <>
          <RequestsTable rows={list.rows} selection={{ selected, onSelect: select }} withMessage />
          <Pager shown={list.rows.length} next={list.next} older={list.older} state={list.olderState} noun="request" />
        </>
      )}
    </>
  );
}

/** The refused tab: nothing to replay (nothing was let in); the reason says what to fix at the sender. */
function RefusedAtTheDoor() {
  const list = usePagedList<'requests', RequestView>(
    REFUSED,
    'requests',
    (r) => r.id,
    (id) => `tr[data-request-id="${CSS.escape(id)}"] a`,
  );
  return (
    <>
      <p class="hint">
        Refused before they were let in: a wrong or missing token or signature, an unknown hook, a body too large, too
        many at once. No body is kept and nothing can be replayed: fix the sender, and it sends again.
      </p>
      {list.error ? (
        <p class="problem">{list.error}</p>
      ) : (
        <>
          <RequestsTable rows={list.rows} withMessage />
          <Pager shown={list.rows.length} next={list.next} older={list.older} state={list.olderState} noun="request" />
        </>
      )}
    </>
  );
}

/** Requests that failed on our side (replay them once fixed) and requests refused at the door, each in its tab. */
export function FailedPage({ tab }: { tab?: string }) {
  const [current, setCurrent] = useState<Tab>(tab === 'refused' ? 'refused' : 'ours');
  const choose = (next: Tab) => {
    setCurrent(next);
    // The address follows the tab (a link to it opens it) without a page change moving the focus.
    history.replaceState(null, '', next === 'ours' ? '#/failed' : '#/failed/refused');
  };
  return (
    <>
      <h1 tabIndex={-1}>Failed requests</h1>
      <Tabs tabs={TABS} current={current} onChoose={choose} label="Failed requests">
        {current === 'ours' ? <FailedOnOurSide /> : <RefusedAtTheDoor />}
      </Tabs>
    </>
  );
}
