import type { MappingView } from './api';
import { Breakable } from './breakable';
import { useLoad } from './live';
import { Playground } from './playground';

/** What a mapping matches besides its hook: source, headers, schema, fan-out. */
function matchOf(m: MappingView): string {
  const parts = [
    m.source && `source ${m.source}`,
    ...(m.headers ?? []),
    m.schema && 'schema',
    m.forEach && `each ${m.forEach}`,
  ];
  return parts.filter(Boolean).join('; ') || '—';
}

/** The mappings in force, presets' included. */
function MappingsTable({ mappings }: { mappings: readonly MappingView[] }) {
  return (
    <div class="table-wrap">
      <table class="mappings">
        <thead>
          <tr>
            <th scope="col">Id</th>
            <th scope="col">Hook</th>
            <th scope="col">Match</th>
            <th scope="col">Event type</th>
            <th scope="col">Transform</th>
            <th scope="col">Signature</th>
            <th scope="col">From</th>
          </tr>
        </thead>
        <tbody>
          {mappings.map((m) => (
            <tr key={m.id} data-mapping-id={m.id}>
              <td>
                <Breakable text={m.id} />
              </td>
              <td>{m.path ? <Breakable text={m.path} /> : 'any'}</td>
              <td>{matchOf(m)}</td>
              <td>{m.eventType ? <Breakable text={m.eventType} /> : '—'}</td>
              <td>{m.transform ? <Breakable text={m.transform} /> : '—'}</td>
              <td>{m.verify ?? '—'}</td>
              <td>
                <code>
                  <Breakable text={m.configPath} />
                </code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The mappings in force, and a playground running the same engine as `hookd try` (nothing dispatched). */
export function MappingsPage() {
  const listed = useLoad<{ mappings: MappingView[] }>('/api/mappings');
  return (
    <>
      <h1 tabIndex={-1}>Mappings and presets</h1>
      {listed.error && <p class="problem">{listed.error}</p>}
      {listed.data && <MappingsTable mappings={listed.data.mappings} />}
      <Playground mappings={listed.data?.mappings ?? []} />
    </>
  );
}
