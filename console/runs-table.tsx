import type { RunListItem, RunView } from './api';
import { Breakable } from './breakable';
import { dateTime, duration } from './format';
import { when } from './live';

/** Where a run's reply went, or why not: `sent to chatnet 42`, `failed to chatnet 42 (…)`. */
export function delivery(run: RunView): string {
  if (!run.delivery) return '—';
  const where = run.delivery.channel
    ? ` to ${run.delivery.channel}${run.delivery.to ? ` ${run.delivery.to}` : ''}`
    : '';
  return `${run.delivery.status}${where}${run.delivery.reason ? ` (${run.delivery.reason})` : ''}`;
}

/** The colour of a run's state: failed red, unfinished amber, done green, cancelled plain. */
function runClass(run: RunView): string {
  if (run.status === 'error' || run.status === 'timeout' || run.delivery?.status === 'failed') return 'bad';
  if (run.status === 'ok') return 'good';
  if (run.status === 'cancelled') return '';
  return 'warn';
}

/** How long it ran, once it has. */
function took(run: RunListItem): string {
  if (!run.startedAt || !run.finishedAt) return '—';
  return duration(Date.parse(run.finishedAt) - Date.parse(run.startedAt));
}

/** Runs: which, in what state, on which model, and their delivery; `full` adds when, the mapping and how long. */
export function RunsTable({ runs, full = false }: { runs: readonly RunListItem[]; full?: boolean }) {
  if (runs.length === 0) return <p class="empty">No runs.</p>;
  return (
    <div class="table-wrap">
      <table class="runs">
        <thead>
          <tr>
            {full && <th scope="col">Queued</th>}
            <th scope="col">Run</th>
            {full && <th scope="col">Mapping</th>}
            <th scope="col">Status</th>
            <th scope="col">Model</th>
            <th scope="col">Delivery</th>
            {full && <th scope="col">Took</th>}
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => (
            <tr key={run.runId} data-run-id={run.runId}>
              {full && <td title={when(run.createdAt)}>{dateTime(run.createdAt)}</td>}
              <td>
                <a href={`#/runs/${encodeURIComponent(run.runId)}`}>
                  <Breakable text={run.name ?? run.runId} />
                </a>
              </td>
              {full && <td>{run.mappingId ? <Breakable text={run.mappingId} /> : '—'}</td>}
              <td title={run.waiting ?? run.retrying}>
                <span class={`status ${runClass(run)}`}>{run.status}</span>
                {run.waiting ? ', waiting' : run.retrying ? ', retrying' : ''}
              </td>
              <td>
                <Breakable text={run.model} />
              </td>
              <td>{delivery(run)}</td>
              {full && <td class="num">{took(run)}</td>}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
