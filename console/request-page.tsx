import { useState } from 'preact/hooks';
import { type MappingView, post, type RequestDetail, type RunListItem } from './api';
import { CopyAsCurl } from './copy-curl';
import { base64Bytes, bytesAsText, duration, replayBlocker, statusClass } from './format';
import { pretty, useLoad, when } from './live';
import { RunsTable } from './runs-table';

/** The body as kept: JSON pretty-printed; bytes that are not UTF-8 as text with escapes, said so. */
function Payload({ r }: { r: RequestDetail }) {
  if (r.bodyEncoding !== 'base64') return <pre class="payload">{pretty(r.body)}</pre>;
  return (
    <>
      <p class="hint" data-testid="binary-body">
        Not valid UTF-8 text: shown with <code>\xNN</code> for each byte that is not (and <code>\\</code> for a
        backslash). Replay sends the bytes as they came.
      </p>
      <pre class="payload">{bytesAsText(base64Bytes(r.body))}</pre>
    </>
  );
}

/** A body neither cut nor redacted that is still not whole was not kept at all. */
const bodyNotKept = (r: RequestDetail) => !r.bodyWhole && !r.truncated && !r.redacted;

/** The headers that carry the hook token; every other credential is its mapping's own secret or signature. */
const TOKEN_HEADERS = new Set(['authorization', 'x-service-token', 'cookie', 'proxy-authorization']);

/** Whether a credential header's check (token, signature) passed. */
function CredentialMark({ verified }: { verified: boolean }) {
  return verified ? <span class="status good"> verified</span> : <span class="status warn"> not verified</span>;
}

/**
 * For a request whose mapping checks signatures: whether the signature (or the sender's secret
 * token, for a token scheme) was verified, and in which header.
 */
function SignatureMark({ r, mapping }: { r: RequestDetail; mapping: MappingView | undefined }) {
  if (!mapping?.verify) return null;
  const sent = Object.entries(r.credentials).filter(([name]) => !TOKEN_HEADERS.has(name));
  const held = sent.find(([, mark]) => mark.verified);
  let text: string;
  let tone: string;
  if (held) [text, tone] = [`✓ signature verified (${mapping.verify}, ${held[0]})`, 'good'];
  else if (sent.length > 0)
    [text, tone] = [`✗ signature not verified (${mapping.verify}, ${sent.map(([n]) => n).join(', ')})`, 'bad'];
  else if (r.authenticated) [text, tone] = ['no signature sent: let in by the hook token', 'warn'];
  else [text, tone] = [`no signature sent (${mapping.verify} expected)`, 'bad'];
  return (
    <>
      <dt>Signature</dt>
      <dd>
        <span class={`status ${tone}`} data-testid="signature">
          {text}
        </span>
      </dd>
    </>
  );
}

/** Replay and Replay anew, or why this request cannot be replayed. */
function ReplayButtons({ r, onReplay, busy }: { r: RequestDetail; onReplay: (force: boolean) => void; busy: boolean }) {
  const blocker = replayBlocker(r, r.failure !== undefined);
  if (blocker) return <p class="hint" data-testid="not-replayable">{`Not replayable: ${blocker}.`}</p>;
  return (
    <p>
      <button type="button" onClick={() => onReplay(false)} disabled={busy}>
        Replay
      </button>{' '}
      <button type="button" class="secondary" onClick={() => onReplay(true)} disabled={busy}>
        Replay anew
      </button>{' '}
      <span class="hint">
        runs the current mapping and transform on this body, once: a request its sender retried, or that was replayed
        already, answers its first run (Replay anew runs it again)
      </span>
    </p>
  );
}

function Facts({ r, mapping }: { r: RequestDetail; mapping: MappingView | undefined }) {
  return (
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
      {r.reason && (
        <>
          <dt>Reason</dt>
          <dd>{r.reason}</dd>
        </>
      )}
      <dt>Mapping</dt>
      <dd>{r.mappingId ?? '—'}</dd>
      <dt>Event type</dt>
      <dd>{r.eventType ?? '—'}</dd>
      <dt>From</dt>
      <dd>{r.client ?? '—'}</dd>
      <dt>Sender</dt>
      <dd data-testid="authenticated">
        {r.authenticated ? 'authenticated (token or signature)' : 'refused at the door: not authenticated'}
      </dd>
      <SignatureMark r={r} mapping={mapping} />
      <dt>Took</dt>
      <dd>{duration(r.durationMs)}</dd>
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
  );
}

/** One request: what came in, what it became, Replay and Copy as curl. */
export function RequestPage({ id }: { id: string }) {
  const detail = useLoad<RequestDetail>(`/api/requests/${encodeURIComponent(id)}`, [id]);
  const mappings = useLoad<{ mappings: MappingView[] }>('/api/mappings');
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
  const mapping = mappings.data?.mappings.find((m) => m.id === r.mappingId);
  return (
    <>
      <h1 tabIndex={-1}>
        Request <code>{r.id}</code>
      </h1>
      <Facts r={r} mapping={mapping} />
      {r.failure && (
        // A failed transform's text holds its author's file:line:column, frames and code frame.
        <div class="problem failure">
          <p>{r.failure.code}</p>
          <pre data-testid="failure">{r.failure.error}</pre>
        </div>
      )}
      <ReplayButtons r={r} onReplay={replay} busy={busy} />
      <div aria-live="polite">
        {outcome && (
          <p class={outcome.ok ? 'notice' : 'problem'}>
            {outcome.text}{' '}
            {outcome.replayId && <a href={`#/requests/${encodeURIComponent(outcome.replayId)}`}>See the replay</a>}
          </p>
        )}
      </div>
      <CopyAsCurl r={r} />
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
        {bodyNotKept(r) ? ': not kept (a refused or busy request keeps no body)' : ''}
      </p>
      {!bodyNotKept(r) && <Payload r={r} />}
      <h2>Headers</h2>
      <p class="hint">
        {r.authenticated
          ? 'Credentials are kept by name only; each is marked by whether its check passed.'
          : 'A refused request keeps header names only, never their values.'}
      </p>
      <div class="table-wrap">
        <table class="headers">
          <tbody>
            {Object.entries(r.headers).map(([k, v]) => (
              <tr key={k} data-header={k}>
                <th scope="row">{k}</th>
                <td>
                  {v}
                  {r.credentials[k] && <CredentialMark verified={r.credentials[k].verified} />}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
