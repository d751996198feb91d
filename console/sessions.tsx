import { useLoad, when } from './live';

/** Sessions with a transcript, most recently active first. */
export function SessionsPage() {
  const listed = useLoad<{ sessions: { key: string; messages: number; lastAt: string }[] }>('/api/sessions');
  return (
    <>
      <h1 tabIndex={-1}>Sessions</h1>
      {listed.error && <p class="problem">{listed.error}</p>}
      {listed.data?.sessions.length === 0 && <p class="empty">No session has a transcript yet.</p>}
      {listed.data && listed.data.sessions.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Session</th>
                <th scope="col">Messages</th>
                <th scope="col">Last</th>
              </tr>
            </thead>
            <tbody>
              {listed.data.sessions.map((s) => (
                <tr key={s.key}>
                  <td>
                    <a href={`#/sessions/${encodeURIComponent(s.key)}`}>{s.key}</a>
                  </td>
                  <td class="num">{s.messages}</td>
                  <td>{when(s.lastAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

/** One session's transcript. */
export function SessionPage({ sessionKey }: { sessionKey: string }) {
  const session = useLoad<{ key: string; messages: { role: string; content: string }[]; more: boolean }>(
    `/api/sessions/${encodeURIComponent(sessionKey)}`,
    [sessionKey],
  );
  return (
    <>
      <h1 tabIndex={-1}>
        Session <code>{sessionKey}</code>
      </h1>
      {session.error && <p class="problem">{session.error}</p>}
      {session.data?.more && (
        <p class="hint">The newest {session.data.messages.length} messages; older ones are kept and not shown.</p>
      )}
      {session.data?.messages.map((m, i) => (
        <article class={`message ${m.role}`} key={`${i}-${m.role}`}>
          <h3>{m.role}</h3>
          <pre>{m.content}</pre>
        </article>
      ))}
    </>
  );
}
