import type { RequestView } from './api';
import { Breakable } from './breakable';
import { dateTime, duration, outcomeClass, outcomeText, replayBlocker, statusClass } from './format';
import { when } from './live';

/** What a request made: its events and runs, and whether it is or was replayed. */
function actions(r: RequestView): string {
  const parts: string[] = [];
  if (r.eventIds.length) parts.push(`${r.eventIds.length} event${r.eventIds.length === 1 ? '' : 's'}`);
  if (r.runIds.length) parts.push(`${r.runIds.length} run${r.runIds.length === 1 ? '' : 's'}`);
  if (r.replayOf) parts.push(r.forced ? 'replay (anew)' : 'replay');
  if (r.replayedAt) parts.push('replayed');
  return parts.join(', ');
}

/** The first line of why a request was refused or failed; the whole text is its title. */
function Message({ r }: { r: RequestView }) {
  if (!r.reason) return <>—</>;
  const first = r.reason.split('\n')[0] ?? '';
  return <span title={r.reason}>{first.length > 200 ? `${first.slice(0, 199)}…` : first}</span>;
}

/** What it made, and what its runs came to: `1 run: ok · delivery sent`. */
function Outcome({ r }: { r: RequestView }) {
  const made = actions(r);
  const ran = r.outcome !== undefined || r.runIds.length > 0;
  if (!made && !ran) return <>—</>;
  return (
    <>
      {made}
      {made && ran ? ': ' : ''}
      {ran && <span class={`status ${outcomeClass(r)}`}>{outcomeText(r)}</span>}
    </>
  );
}

/** The Failed page's selection: a box for each request that can be replayed, the reason for each that cannot. */
export interface ReplaySelection {
  readonly selected: ReadonlySet<string>;
  readonly onSelect: (id: string, on: boolean) => void;
}

function ReplayCell({ r, selection }: { r: RequestView; selection: ReplaySelection }) {
  const blocker = replayBlocker(r);
  if (blocker) return <span class="hint">{`not replayable: ${blocker}`}</span>;
  return (
    <input
      type="checkbox"
      aria-label={`Replay ${r.id}`}
      checked={selection.selected.has(r.id)}
      onChange={(e) => selection.onSelect(r.id, (e.target as HTMLInputElement).checked)}
    />
  );
}

/**
 * Requests, newest first: when, from where, what it was, how it was answered, what its runs came
 * to (or, `withMessage`, why it failed), how long.
 */
export function RequestsTable({
  rows,
  selection,
  withMessage = false,
}: {
  rows: readonly RequestView[];
  selection?: ReplaySelection;
  withMessage?: boolean;
}) {
  if (rows.length === 0) return <p class="empty">No requests.</p>;
  return (
    <div class="table-wrap">
      <table class="requests">
        <thead>
          <tr>
            {selection && <th scope="col">Replay</th>}
            <th scope="col">Received</th>
            <th scope="col">Source</th>
            <th scope="col">Event</th>
            <th scope="col">Status</th>
            {withMessage ? <th scope="col">Message</th> : <th scope="col">Outcome</th>}
            <th scope="col">Took</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id} data-request-id={r.id}>
              {selection && (
                <td class="replay">
                  <ReplayCell r={r} selection={selection} />
                </td>
              )}
              <td>
                <a href={`#/requests/${encodeURIComponent(r.id)}`} title={`${when(r.receivedAt)} · ${r.id}`}>
                  {dateTime(r.receivedAt)}
                </a>
              </td>
              <td>
                {r.path}
                {r.mappingId && (
                  <span class="hint">
                    {' · '}
                    <Breakable text={r.mappingId} />
                  </span>
                )}
              </td>
              <td data-col="event">{r.eventType ?? '—'}</td>
              <td>
                <span class={`status ${statusClass(r.status)}`}>{r.status}</span> {r.code ?? ''}
                {r.moreRefused ? ` (+${r.moreRefused} more)` : ''}
              </td>
              {withMessage ? (
                <td class="message">
                  <Message r={r} />
                </td>
              ) : (
                <td data-col="outcome">
                  <Outcome r={r} />
                </td>
              )}
              <td class="num">{duration(r.durationMs)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
