import { useCallback, useEffect, useState } from 'preact/hooks';
import { post, type RequestDetail, type RequestView, type RunListItem } from './api';
import { type LiveState, pretty, shortWhen, useLive, useLiveState, useLoad, when } from './live';
import { RunsTable } from './runs';

const MAX_ROWS = 200;

function statusClass(status: number): string {
  if (status >= 500) return 'bad';
  if (status >= 400) return 'warn';
  return 'good';
}

function actions(r: RequestView): string {
  const parts: string[] = [];
  if (r.eventIds.length) parts.push(`${r.eventIds.length} event${r.eventIds.length === 1 ? '' : 's'}`);
  if (r.runIds.length) parts.push(`${r.runIds.length} run${r.runIds.length === 1 ? '' : 's'}`);
  if (r.replayOf) parts.push(r.forced ? 'replay (anew)' : 'replay');
  if (r.replayedAt) parts.push('replayed');
  return parts.join(', ') || '—';
}

export function RequestsTable({
  rows,
  selected,
  onSelect,
}: {
  rows: RequestView[];
  selected?: Set<string>;
  onSelect?: (id: string, on: boolean) => void;
}) {
  if (rows.length === 0) return <p class="empty">No requests.</p>;
  return (
    <div class="table-wrap">
      <table class="requests">
        <thead>
          <tr>
            {onSelect && <th scope="col">Replay</th>}
            <th scope="col">Received</th>
            <th scope="col">Hook</th>
            <th scope="col">Status</th>
            <th scope="col">Mapping</th>
            <th scope="col">Actions</th>
            <th scope="col">ms</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id} data-request-id={r.id}>
              {onSelect && (
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Replay ${r.id}`}
                    checked={selected?.has(r.id)}
                    onChange={(e) => onSelect(r.id, (e.target as HTMLInputElement).checked)}
                  />
                </td>
              )}
              <td>
                <a href={`#/requests/${encodeURIComponent(r.id)}`} title={when(r.receivedAt)}>
                  {shortWhen(r.receivedAt)}
                </a>
              </td>
              <td>{r.path}</td>
              <td>
                <span class={`status ${statusClass(r.status)}`}>{r.status}</span> {r.code ?? ''}
              </td>
              <td>{r.mappingId ?? '—'}</td>
              <td>{actions(r)}</td>
              <td class="num">{r.durationMs}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const LIVE_TEXT: Record<LiveState, string> = {
  connecting: 'connecting…',
  open: 'live',
  reconnecting: 'reconnecting…',
  closed: 'disconnected: reload the page',
};

function LiveIndicator({ state }: { state: LiveState }) {
  return (
    <span class={`live ${state}`} data-state={state} aria-live="polite">
      {LIVE_TEXT[state]}
    </span>
  );
}

/** The live request log: newest first, filtered, new requests added as they arrive. */
export function RequestsPage() {
  const [path, setPath] = useState('');
  const [status, setStatus] = useState('');
  const query = new URLSearchParams({ limit: '100', ...(path ? { path } : {}), ...(status ? { status } : {}) });
  const listed = useLoad<{ requests: RequestView[] }>(`/api/requests?${query}`);
  const [rows, setRows] = useState<RequestView[]>([]);
  useEffect(() => setRows(listed.data?.requests ?? []), [listed.data]);
  const onLive = useCallback(
    (kind: string, data: unknown) => {
      if (kind !== 'request') return;
      const r = data as RequestView;
      if (path && r.path !== path) return;
      if (status && !String(r.status).startsWith(status[0] as string)) return;
      setRows((old) => [r, ...old].slice(0, MAX_ROWS));
    },
    [path, status],
  );
  useLive(onLive);
  const liveState = useLiveState();
  return (
    <>
      <h1 tabIndex={-1}>Live log</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Hook{' '}
          <input
            name="path"
            value={path}
            placeholder="any"
            onInput={(e) => setPath((e.target as HTMLInputElement).value.trim())}
          />
        </label>
        <label>
          Status{' '}
          <select name="status" value={status} onChange={(e) => setStatus((e.target as HTMLSelectElement).value)}>
            <option value="">any</option>
            <option value="2xx">2xx</option>
            <option value="4xx">4xx</option>
            <option value="5xx">5xx</option>
          </select>
        </label>
        <LiveIndicator state={liveState} />
      </form>
      {listed.error ? <p class="problem">{listed.error}</p> : <RequestsTable rows={rows} />}
    </>
  );
}

/** One request: what came in, what it became, and Replay. */
export function RequestPage({ id }: { id: string }) {
  const detail = useLoad<RequestDetail>(`/api/requests/${encodeURIComponent(id)}`, [id]);
  const [outcome, setOutcome] = useState<{ text: string; replayId?: string; ok: boolean } | undefined>();
  const [busy, setBusy] = useState(false);
  const r = detail.data;
  // `force`: run anew, past the answer its idempotency key remembers (the sender's retry, an earlier replay).
  const replay = async (force: boolean) => {
    setBusy(true);
    try {
      const path = `/api/requests/${encodeURIComponent(id)}/replay`;
      const answer = await post<Record<string, unknown>>(path, force ? { force: true } : undefined);
      const replayId = answer.headers.get('x-request-id') ?? undefined;
      const ok = answer.status < 300;
      const what = `${answer.status} ${answer.body ? JSON.stringify(answer.body) : '(no action)'}`;
      const text = !ok
        ? `The replay answered ${answer.status}: ${String(answer.body?.error ?? '')}`
        : answer.headers.get('idempotent-replayed') === 'true'
          ? `Already run: ${what}, the answer of its first run (the sender's retry or an earlier replay). Replay anew runs it again.`
          : `Replayed: ${what}`;
      setOutcome({ text, ok, ...(replayId ? { replayId } : {}) });
      detail.reload();
    } finally {
      setBusy(false);
    }
  };
  if (detail.error) return <p class="problem">{detail.error}</p>;
  if (!r) return <p class="loading">Loading…</p>;
  return (
    <>
      <h1 tabIndex={-1}>
        Request <code>{r.id}</code>
      </h1>
      <dl class="facts">
        <dt>Received</dt>
        <dd>{when(r.receivedAt)}</dd>
        <dt>Hook</dt>
        <dd>
          <code>{r.url}</code>
        </dd>
        <dt>Status</dt>
        <dd>
          <span class={`status ${statusClass(r.status)}`}>{r.status}</span> {r.code ?? ''}
        </dd>
        <dt>Mapping</dt>
        <dd>{r.mappingId ?? '—'}</dd>
        <dt>Took</dt>
        <dd>{r.durationMs} ms</dd>
        {r.replayOf && (
          <>
            <dt>Replay of</dt>
            <dd>
              <a href={`#/requests/${encodeURIComponent(r.replayOf)}`}>{r.replayOf}</a>
              {r.forced ? ' (run anew on purpose)' : ''}
            </dd>
          </>
        )}
        {r.replayedAt && (
          <>
            <dt>Replayed</dt>
            <dd>{when(r.replayedAt)}</dd>
          </>
        )}
      </dl>
      {r.failure && (
        // A failed transform's text holds its author's file:line:column, frames and code frame.
        <div class="problem failure">
          <p>{r.failure.code}</p>
          <pre data-testid="failure">{r.failure.error}</pre>
        </div>
      )}
      <p>
        <button type="button" onClick={() => replay(false)} disabled={busy}>
          Replay
        </button>{' '}
        <button type="button" class="secondary" onClick={() => replay(true)} disabled={busy}>
          Replay anew
        </button>{' '}
        <span class="hint">
          runs the current mapping and transform on this body, once: a request its sender retried, or that was replayed
          already, answers its first run (Replay anew runs it again)
        </span>
      </p>
      <div aria-live="polite">
        {outcome && (
          <p class={outcome.ok ? 'notice' : 'problem'}>
            {outcome.text}{' '}
            {outcome.replayId && <a href={`#/requests/${encodeURIComponent(outcome.replayId)}`}>See the replay</a>}
          </p>
        )}
      </div>
      <h2>Actions</h2>
      {r.events.length === 0 && r.runs.length === 0 && <p class="empty">None.</p>}
      {r.events.map((e) => (
        <p key={e.id}>
          Event <code>{e.id}</code> {e.consumed ? '(consumed)' : '(pending)'}: {e.text}
        </p>
      ))}
      {r.runs.length > 0 && <RunsTable runs={r.runs as RunListItem[]} />}
      <h2>Payload</h2>
      <p class="hint">
        {r.bodyBytes} bytes{r.truncated ? ', cut for the log' : ''}
        {r.redacted ? ', redacted' : ''}
      </p>
      <pre class="payload">{pretty(r.body)}</pre>
      <h2>Headers</h2>
      <div class="table-wrap">
        <table>
          <tbody>
            {Object.entries(r.headers).map(([k, v]) => (
              <tr key={k}>
                <th scope="row">{k}</th>
                <td>{v}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
