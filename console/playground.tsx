import { useState } from 'preact/hooks';
import { ApiError, type FixtureItem, type FixtureView, get, type MappingView, post } from './api';

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

/** A fixture's choice: the mapping, the kind and the name, one per line. */
const choiceOf = (m: MappingView, f: FixtureItem) => `${m.id}\n${f.kind}\n${f.name}`;

/** A fixture's line in the list: its name, and what it is when it says. */
const labelOf = (f: FixtureItem) => (f.description ? `${f.name}: ${f.description}` : f.name);

/** A mapping's fixtures of one kind, as one group of the list; none when it has none of it. */
function FixtureGroup({ mapping, kind, label }: { mapping: MappingView; kind: FixtureItem['kind']; label: string }) {
  const fixtures = (mapping.fixtures ?? []).filter((f) => f.kind === kind);
  if (fixtures.length === 0) return null;
  return (
    <optgroup label={label}>
      {fixtures.map((f) => (
        <option key={f.name} value={choiceOf(mapping, f)}>
          {labelOf(f)}
        </option>
      ))}
    </optgroup>
  );
}

/** Fixtures offered by mapping: a preset's recorded requests (`github/push`), then the folder's own cases. */
function FixtureChoice({
  mappings,
  onChoose,
}: {
  mappings: readonly MappingView[];
  onChoose: (value: string) => void;
}) {
  const offered = mappings.filter((m) => m.fixtures?.length);
  if (offered.length === 0) return null;
  return (
    // Labelled by id, not wrapped: a wrapping label's text would hold every option's.
    <div class="field">
      <label for="playground-fixture">Fixture</label>
      <select id="playground-fixture" name="fixture" onChange={(e) => onChoose((e.target as HTMLSelectElement).value)}>
        <option value="">none: write your own</option>
        {offered.map((m) => [
          <FixtureGroup key={`${m.id} preset`} mapping={m} kind="preset" label={m.id} />,
          <FixtureGroup key={`${m.id} folder`} mapping={m} kind="folder" label={`${m.id}: your fixtures`} />,
        ])}
      </select>
    </div>
  );
}

/** Where a fixture is read from, and what the note under the list says of it. */
function fixtureSource(mapping: MappingView, kind: string, name: string): { url: string; note: string } | undefined {
  const hook = mapping.path ?? mapping.preset ?? mapping.id;
  if (kind === 'folder')
    return {
      url: `/api/mappings/${encodeURIComponent(mapping.id)}/fixtures/${encodeURIComponent(name)}`,
      note: `Your fixture ${name} of ${mapping.id}, for its hook ${hook}.`,
    };
  if (!mapping.preset) return undefined;
  return {
    url: `/api/presets/${encodeURIComponent(mapping.preset)}/fixtures/${encodeURIComponent(name)}`,
    note: `The ${mapping.preset} preset's ${name} fixture, for its hook ${hook}.`,
  };
}

/** Paste a payload and headers, or take a preset's fixture: the actions it would become, nothing dispatched. */
export function Playground({ mappings }: { mappings: readonly MappingView[] }) {
  const [path, setPath] = useState('wake');
  const [headers, setHeaders] = useState('');
  const [body, setBody] = useState(SAMPLE);
  const [result, setResult] = useState<{ ok: boolean; text: string }>();
  const [note, setNote] = useState<string>();
  const paths = ['wake', 'agent', ...new Set(mappings.flatMap((m) => (m.path ? [m.path] : [])))];
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
  const takeFixture = async (value: string) => {
    const [mappingId, kind, name] = value.split('\n');
    const mapping = mappings.find((m) => m.id === mappingId);
    const source = mapping && kind && name ? fixtureSource(mapping, kind, name) : undefined;
    if (!mapping || !source) return;
    try {
      const fixture = await get<FixtureView>(source.url);
      setHeaders(
        Object.entries(fixture.headers)
          .map(([k, v]) => `${k}: ${v}`)
          .join('\n'),
      );
      setBody(typeof fixture.body === 'string' ? fixture.body : JSON.stringify(fixture.body, null, 2));
      setPath(mapping.path ?? mapping.preset ?? mapping.id);
      setResult(undefined);
      setNote(source.note);
    } catch (err) {
      setNote(`Could not load the fixture: ${err instanceof ApiError ? `${err.message} (${err.code})` : String(err)}`);
    }
  };
  const options = paths.includes(path) ? paths : [...paths, path];
  return (
    <>
      <h2 id="playground">Playground</h2>
      <p class="hint">
        Paste a payload and headers, or take a fixture (a preset's recorded delivery, or one of your own under{' '}
        <code>transforms/fixtures/</code>): the actions it would become, from the same engine as <code>hookd try</code>.
        Nothing is stored or dispatched.
      </p>
      <form class="playground" onSubmit={render} aria-labelledby="playground">
        <FixtureChoice mappings={mappings} onChoose={takeFixture} />
        <p class="hint" aria-live="polite">
          {note}
        </p>
        <label>
          Hook{' '}
          <select name="path" value={path} onChange={(e) => setPath((e.target as HTMLSelectElement).value)}>
            {options.map((p) => (
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
