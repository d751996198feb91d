import { useState } from 'preact/hooks';
import { post, type RequestView } from './api';
import { useLoad } from './live';
import { RequestsTable } from './requests';

/** Requests that failed on our side and were not replayed yet, with bulk replay. */
export function FailedPage() {
  const listed = useLoad<{ requests: RequestView[] }>(
    '/api/requests?status=5xx&replayed=false&replays=false&limit=200',
  );
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [results, setResults] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const rows = listed.data?.requests ?? [];
  const select = (id: string, on: boolean) =>
    setSelected((old) => {
      const next = new Set(old);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  // One pass at a time: a second click while replaying would replay everything twice.
  const replaySelected = async () => {
    if (busy) return;
    setBusy(true);
    const done: string[] = [];
    try {
      // Oldest first, as they arrived.
      for (const r of [...rows].reverse().filter((row) => selected.has(row.id))) {
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
      setBusy(false);
      listed.reload();
    }
  };
  return (
    <>
      <h1 tabIndex={-1}>Failed requests</h1>
      <p class="hint">Answered 5xx and not replayed yet. Fix the transform, then replay.</p>
      <p>
        <button type="button" onClick={() => setSelected(new Set(rows.map((r) => r.id)))} class="secondary">
          Select all
        </button>{' '}
        <button type="button" onClick={replaySelected} disabled={busy || selected.size === 0}>
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
      {listed.error ? (
        <p class="problem">{listed.error}</p>
      ) : (
        <RequestsTable rows={rows} selected={selected} onSelect={select} />
      )}
    </>
  );
}
