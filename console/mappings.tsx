import { useState } from 'preact/hooks';
import { type MappingView, post } from './api';
import { useLoad } from './live';

const SAMPLE = '{\n  "text": "Build #812 failed on main"\n}';

/** `Name: value` per line → headers; blank lines ignored. */
function parseHeaders(text: string): Record<string, string> | string {
  const headers: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const at = line.indexOf(':');
    if (at <= 0) return `not a header line: ${line}`;
    headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
  }
  return headers;
}

/** The mappings in force, and a playground running the same engine as `hookd try` (nothing dispatched). */
export function MappingsPage() {
  const listed = useLoad<{ mappings: MappingView[] }>('/api/mappings');
  const [path, setPath] = useState('wake');
  const [headers, setHeaders] = useState('');
  const [body, setBody] = useState(SAMPLE);
  const [result, setResult] = useState<{ ok: boolean; text: string }>();
  const paths = ['wake', 'agent', ...new Set((listed.data?.mappings ?? []).flatMap((m) => (m.path ? [m.path] : [])))];
  const render = async (event: Event) => {
    event.preventDefault();
    const parsed = parseHeaders(headers);
    if (typeof parsed === 'string') {
      setResult({ ok: false, text: parsed });
      return;
    }
    const answer = await post<Record<string, unknown>>('/api/try', { path, body, headers: parsed });
    setResult({ ok: answer.status < 300, text: JSON.stringify(answer.body, null, 2) });
  };
  return (
    <>
      <h1 tabIndex={-1}>Mappings and presets</h1>
      {listed.error && <p class="problem">{listed.error}</p>}
      {listed.data && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Id</th>
                <th scope="col">Hook</th>
                <th scope="col">Match</th>
                <th scope="col">Transform</th>
                <th scope="col">Signature</th>
                <th scope="col">From</th>
              </tr>
            </thead>
            <tbody>
              {listed.data.mappings.map((m) => (
                <tr key={m.id}>
                  <td>{m.id}</td>
                  <td>{m.path ?? 'any'}</td>
                  <td>
                    {[
                      m.source && `source ${m.source}`,
                      ...(m.headers ?? []),
                      m.schema && 'schema',
                      m.forEach && `each ${m.forEach}`,
                    ]
                      .filter(Boolean)
                      .join('; ') || '—'}
                  </td>
                  <td>{m.transform ?? '—'}</td>
                  <td>{m.verify ?? '—'}</td>
                  <td>
                    <code>{m.configPath}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2 id="playground">Playground</h2>
      <p class="hint">
        Paste a payload and headers: the actions it would become, from the same engine as <code>hookd try</code>.
        Nothing is stored or dispatched.
      </p>
      <form class="playground" onSubmit={render} aria-labelledby="playground">
        <label>
          Hook{' '}
          <select name="path" value={path} onChange={(e) => setPath((e.target as HTMLSelectElement).value)}>
            {paths.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>
            Headers (one <code>Name: value</code> per line)
          </span>
          <textarea
            name="headers"
            rows={3}
            value={headers}
            onInput={(e) => setHeaders((e.target as HTMLTextAreaElement).value)}
          />
        </label>
        <label>
          Payload
          <textarea
            name="body"
            rows={10}
            value={body}
            onInput={(e) => setBody((e.target as HTMLTextAreaElement).value)}
          />
        </label>
        <button type="submit">Render</button>
      </form>
      <div aria-live="polite">
        {result && (
          <>
            <h3>{result.ok ? 'Actions' : 'Refused'}</h3>
            <pre class={`payload ${result.ok ? '' : 'problem'}`} data-testid="playground-result">
              {result.text}
            </pre>
          </>
        )}
      </div>
    </>
  );
}
