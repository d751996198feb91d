import { useCallback, useState } from 'preact/hooks';
import { post, type RunAttemptView, type RunListItem, type RunTranscript, type RunView } from './api';
import { useLive, useLoad, when } from './live';
import { delivery } from './runs-table';

/** The failed tries of a run's model call and delivery, oldest first (docs/runtime.md#attempts). */
function AttemptTimeline({ attempts }: { attempts: readonly RunAttemptView[] }) {
  if (attempts.length === 0) return <p class="empty">No failed attempts: every try went through first time.</p>;
  return (
    <div class="table-wrap">
      <table data-testid="run-attempts">
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Try</th>
            <th scope="col">Outcome</th>
            <th scope="col">What the server said</th>
          </tr>
        </thead>
        <tbody>
          {attempts.map((a) => (
            <tr key={`${a.kind}-${a.at}-${a.n}`}>
              <td>{when(a.at)}</td>
              <td>{`${a.kind === 'model' ? 'model try' : 'delivery attempt'} ${a.n}`}</td>
              <td>
                <code>{a.outcome}</code>
                {a.status === undefined ? '' : ` (HTTP ${a.status})`}
              </td>
              <td>{a.error ? <code class="excerpt">{a.error}</code> : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** What a cancel answered, as the page says it. */
function cancelNote(answer: { status: number; body: { status?: string; error?: string } | null }): string {
  if (answer.status >= 300) return `Not cancelled: ${answer.body?.error ?? answer.status}`;
  return answer.body?.status === 'cancelled'
    ? 'Cancelled: nothing will be delivered.'
    : 'Being cancelled: the node running it ends it at its next lease renewal.';
}

/**
 * One run: what was sent to the model, what it answered, where the reply went; why it waits, and
 * Cancel while it is unfinished; Redeliver when its delivery failed.
 */
export function RunPage({ id }: { id: string }) {
  const run = useLoad<RunView>(`/api/runs/${encodeURIComponent(id)}`, [id]);
  const transcript = useLoad<RunTranscript>(`/api/runs/${encodeURIComponent(id)}/transcript`, [id]);
  const [note, setNote] = useState<string>();
  const r = run.data;
  const { reload: reloadRun } = run;
  const { reload: reloadTranscript } = transcript;
  // The page follows its run as it starts, answers and delivers.
  const onLive = useCallback(
    (kind: string, data: unknown) => {
      if (kind !== 'run' || (data as RunListItem).runId !== id) return;
      reloadRun();
      reloadTranscript();
    },
    [id, reloadRun, reloadTranscript],
  );
  useLive(onLive);
  const [busy, setBusy] = useState(false);
  const cancel = async () => {
    if (busy) return;
    setBusy(true);
    try {
      setNote(
        cancelNote(
          await post<{ status?: string; error?: string } | null>(`/api/runs/${encodeURIComponent(id)}/cancel`),
        ),
      );
    } catch (err) {
      setNote(`Not cancelled: ${String(err)}`);
    } finally {
      setBusy(false);
      run.reload();
    }
  };
  const redeliver = async () => {
    if (busy) return;
    setBusy(true);
    try {
      const answer = await post<{ delivery?: RunListItem['delivery']; error?: string } | null>(
        `/api/runs/${encodeURIComponent(id)}/redeliver`,
      );
      setNote(
        answer.status < 300
          ? `Redelivered: ${answer.body?.delivery?.status ?? 'done'}`
          : `Not redelivered: ${answer.body?.error ?? answer.status}`,
      );
    } catch (err) {
      setNote(`Not redelivered: ${String(err)}`);
    } finally {
      setBusy(false);
      run.reload();
    }
  };
  if (run.error) return <p class="problem">{run.error}</p>;
  if (!r) return <p class="loading">Loading…</p>;
  return (
    <>
      <h1 tabIndex={-1}>
        Run <code>{r.runId}</code>
      </h1>
      <dl class="facts">
        <dt>Name</dt>
        <dd>{r.name ?? '—'}</dd>
        <dt>Session</dt>
        <dd>
          <a href={`#/sessions/${encodeURIComponent(r.sessionKey)}`}>{r.sessionKey}</a>
        </dd>
        <dt>Status</dt>
        <dd data-testid="run-status">{r.status}</dd>
        {r.retrying && (
          <>
            <dt>Now</dt>
            <dd data-testid="run-retrying">{r.retrying}</dd>
          </>
        )}
        {r.waiting && (
          <>
            <dt>Waiting</dt>
            <dd data-testid="run-waiting">{r.waiting}</dd>
          </>
        )}
        <dt>Model</dt>
        <dd>{r.model}</dd>
        <dt>Delivery</dt>
        <dd>{delivery(r)}</dd>
        <dt>Queued</dt>
        <dd>{when(transcript.data?.createdAt)}</dd>
        <dt>Ran</dt>
        <dd>
          {transcript.data?.startedAt
            ? `${when(transcript.data.startedAt)} – ${transcript.data.finishedAt ? when(transcript.data.finishedAt) : 'running'}`
            : 'not yet'}
        </dd>
      </dl>
      {r.error && <p class="problem">{r.error}</p>}
      {/* Unfinished while no delivery outcome is recorded: its summary is written with it. */}
      {!r.delivery && (
        <p>
          <button type="button" class="secondary danger" onClick={cancel} disabled={busy || r.cancelling === true}>
            {r.cancelling ? 'Cancelling…' : 'Cancel'}
          </button>
        </p>
      )}
      {r.delivery?.status === 'failed' && (
        <p>
          <button type="button" onClick={redeliver} disabled={busy}>
            Redeliver
          </button>
        </p>
      )}
      <div aria-live="polite">{note && <p class="notice">{note}</p>}</div>
      <h2>Attempts</h2>
      <AttemptTimeline attempts={r.attempts ?? []} />
      <h2>Sent to the model, and its reply</h2>
      {transcript.data?.messages.length ? (
        transcript.data.messages.map((m, i) => (
          <article class={`message ${m.role}`} key={`${i}-${m.role}`}>
            <h3>{m.role === 'assistant' ? 'Reply' : 'Sent'}</h3>
            <pre>{m.content}</pre>
          </article>
        ))
      ) : (
        <p class="empty">Nothing yet{r.output ? '' : ' (the run has not answered)'}.</p>
      )}
    </>
  );
}
