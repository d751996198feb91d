import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Dependencies in src/ point one way, checked on its import graph: a module imports only
 * from a lower layer or its own folder, never sideways, and another folder only through
 * that folder's index.ts (its public surface). Type-only imports count like any other.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['error-words.ts', 'byte-buffer.ts'],
  [
    'errors.ts',
    'action-shape.ts',
    'ids.ts',
    'backoff.ts',
    'clock.ts',
    'views.ts',
    'alert-views.ts',
    'undici.ts',
    'read-file.ts',
    'time-format.ts',
    'secret-text.ts',
    'json-depth.ts',
  ],
  ['schemes'],
  ['headers.ts', 'log.ts', 'log-window.ts'],
  ['config'],
  ['actions'],
  ['mapping'],
  ['transforms', 'store'],
  ['runtime/isolation'],
  ['runtime/attempts'],
  ['runtime/safety', 'runtime/delivery', 'runtime/queries', 'runtime/alerts'],
  ['runtime/heartbeat'],
  ['runtime/runs'],
  ['runtime'],
  ['providers', 'channels', 'mail', 'store/sqlite', 'store/postgres'],
  ['ingress', 'metrics.ts', 'routes.ts'],
  ['admin'],
  ['app.ts', 'backend.ts', 'config-reload.ts'],
  ['main.ts'],
  ['cli'],
];

const root = join(import.meta.dirname, '..', '..');
const src = join(root, 'src');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/**
 * Folders below the top that are units of their own: the store's adapters sit above the
 * runtime; the runtime's parts (runs, heartbeat, delivery, queries, safety, attempts) below its root.
 * A sub-unit may use its parent's own files (the store's contract, the runtime's ports).
 */
const SUB_UNITS = [
  'store/sqlite',
  'store/postgres',
  'runtime/isolation',
  'runtime/attempts',
  'runtime/alerts',
  'runtime/safety',
  'runtime/delivery',
  'runtime/queries',
  'runtime/heartbeat',
  'runtime/runs',
];

/**
 * A module's unit: its folder under src/ (`runtime`), a sub-unit (`store/sqlite`), or its file
 * name at the top (`main.ts`).
 */
const unitOf = (file: string) => {
  const path = relative(src, file).split(sep).join('/');
  return SUB_UNITS.find((unit) => path.startsWith(`${unit}/`)) ?? (path.split('/')[0] as string);
};
const layerOf = (unit: string) => LAYERS.findIndex((layer) => layer.includes(unit));

const IMPORT = /(?:^|\n)\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?'([^']+)'|import\('([^']+)'\)/g;

/** The relative imports of a file, resolved to absolute `.ts` paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(IMPORT)]
    .map((m) => (m[1] ?? m[2]) as string)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => resolve(dirname(file), spec).replace(/\.js$/, '.ts'));
}

type Edge = { readonly from: string; readonly to: string };

/** Imports into another folder of the same or a higher layer. */
const againstTheFlow = (edges: readonly Edge[]) =>
  edges.filter(({ from, to }) => {
    const [a, b] = [unitOf(from), unitOf(to)];
    return a !== b && !a.startsWith(`${b}/`) && layerOf(a) <= layerOf(b);
  });

/** Imports into another folder that do not go through its index.ts. */
const bypassingIndex = (edges: readonly Edge[]) =>
  edges.filter(({ from, to }) => {
    const [a, b] = [unitOf(from), unitOf(to)];
    if (a.startsWith(`${b}/`)) return false;
    return a !== b && !b.endsWith('.ts') && relative(join(src, b), to) !== 'index.ts';
  });

/** Every file that may import from src/: the sources, the tests, the bench and the example transforms. */
const consumers = ['src', 'test', 'bench', 'transforms'].flatMap((dir) => filesUnder(join(root, dir)));

const NAMED =
  /(?:import|export)\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'([^']+)'|\{([^}]*)\}\s*=\s*await\s+import\('([^']+)'\)/g;
const nameOf = (item: string) =>
  item
    .trim()
    .replace(/^type\s+/, '')
    .split(/\s+as\s+/);

/** The names `file` imports from `index` (by a relative path), statically or by `await import()`. */
function namesImported(file: string, index: string): string[] {
  const text = readFileSync(file, 'utf8');
  const isIndex = (spec: string) => resolve(dirname(file), spec).replace(/\.js$/, '.ts') === index;
  const named = [...text.matchAll(NAMED)]
    .filter((m) => isIndex((m[2] ?? m[4]) as string))
    .flatMap((m) => ((m[1] ?? m[3]) as string).split(',').map((item) => nameOf(item)[0] as string));
  // `(await import('./x/index.js')).name`, and `const x = await import('./x/index.js')` then `x.name`.
  const member = [...text.matchAll(/\(await import\('([^']+)'\)\)\.(\w+)/g)]
    .filter((m) => isIndex(m[1] as string))
    .map((m) => m[2] as string);
  const bound = [...text.matchAll(/const (\w+) = await import\('([^']+)'\)/g)]
    .filter((m) => isIndex(m[2] as string))
    .flatMap((m) => [...text.matchAll(new RegExp(`\\b${m[1]}\\.(\\w+)`, 'g'))].map((u) => u[1] as string));
  return [...named, ...member, ...bound].filter((name) => name !== '');
}

/** The names an index.ts exports (re-exports and its own declarations). */
function exportedNames(index: string): string[] {
  const text = readFileSync(index, 'utf8');
  const reexported = [...text.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)].flatMap((m) =>
    (m[1] as string).split(',').map((item) => nameOf(item).at(-1) as string),
  );
  const declared = [...text.matchAll(/export\s+(?:async\s+)?(?:function|const|interface|type|class)\s+(\w+)/g)].map(
    (m) => m[1] as string,
  );
  return [...reexported, ...declared].filter((name) => name !== '');
}

const edges: Edge[] = filesUnder(src).flatMap((from) => importsOf(from).map((to) => ({ from, to })));
const show = ({ from, to }: Edge) => `${relative(root, from)} → ${relative(root, to)}`;

/** The cycles among files: each as its files in import order, from the first found. */
function cyclesOf(graph: readonly Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of graph) next.set(from, [...(next.get(from) ?? []), to]);
  const done = new Set<string>();
  const cycles: string[][] = [];
  const visit = (file: string, path: string[]): void => {
    const at = path.indexOf(file);
    if (at >= 0) {
      cycles.push(path.slice(at).map((f) => relative(src, f)));
      return;
    }
    if (done.has(file)) return;
    for (const to of next.get(file) ?? []) visit(to, [...path, file]);
    done.add(file);
  };
  for (const file of next.keys()) visit(file, []);
  return cycles;
}

describe('the import graph of src/', () => {
  it('has a layer for every module', () => {
    const units = [...new Set(filesUnder(src).map(unitOf))];
    expect(units.filter((unit) => layerOf(unit) === -1)).toEqual([]);
  });

  it('points one way: no upward and no sideways import between folders', () => {
    expect(againstTheFlow(edges).map(show)).toEqual([]);
  });

  it('has no cycle between files, type-only imports included', () => {
    expect(cyclesOf(edges)).toEqual([]);
    const a = join(src, 'a.ts');
    const b = join(src, 'b.ts');
    expect(
      cyclesOf([
        { from: a, to: b },
        { from: b, to: a },
      ]),
    ).toEqual([['a.ts', 'b.ts']]);
  });

  it('enters another folder only through its index.ts', () => {
    expect(bypassingIndex(edges).map(show)).toEqual([]);
  });

  it('has indexes that export only what other folders use', () => {
    const folders = readdirSync(src, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    const unused = [...folders, ...SUB_UNITS]
      .filter((unit) => existsSync(join(src, unit, 'index.ts')))
      .flatMap((unit) => {
        const index = join(src, unit, 'index.ts');
        const outside = consumers.filter((file) => unitOf(file) !== unit || !file.startsWith(src));
        const imported = new Set(outside.flatMap((file) => namesImported(file, index)));
        return exportedNames(index)
          .filter((name) => !imported.has(name))
          .map((name) => `${unit}/index.ts: ${name}`);
      });
    expect(unused).toEqual([]);
  });

  it('would catch an upward, a sideways and a bypassing import', () => {
    const at = (...parts: string[]) => join(src, ...parts);
    expect(importsOf(at('main.ts'))).toContain(at('runtime', 'index.ts'));
    const upward = { from: at('runtime', 'runs.ts'), to: at('providers', 'index.ts') };
    const sideways = { from: at('store', 'runs.ts'), to: at('transforms', 'index.ts') };
    const bypass = { from: at('ingress', 'hooks.ts'), to: at('mapping', 'engine.ts') };
    const intoPart = { from: at('runtime', 'runs', 'run-executor.ts'), to: at('runtime', 'delivery', 'delivery.ts') };
    const partUp = { from: at('runtime', 'delivery', 'delivery.ts'), to: at('runtime', 'runs', 'index.ts') };
    const toParent = { from: at('runtime', 'runs', 'run-executor.ts'), to: at('runtime', 'ports.ts') };
    expect(againstTheFlow([upward, sideways, bypass, intoPart, partUp, toParent])).toEqual([upward, sideways, partUp]);
    expect(bypassingIndex([upward, sideways, bypass, intoPart, partUp, toParent])).toEqual([bypass, intoPart]);
  });
});

/** The layers the README's table lists, in its order: `a/` → `b.ts`, `c/` is two layers. */
function readmeLayers(): string[][] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8').split('\n');
  const head = readme.indexOf('| layer | what |');
  const rows: string[] = [];
  for (const line of readme.slice(head + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(line.split('|')[1] ?? '');
  }
  return rows.flatMap((cell) =>
    cell.split('→').map((layer) => [...layer.matchAll(/`([^`]+)`/g)].map((m) => (m[1] as string).replace(/\/$/, ''))),
  );
}

describe("the README's layer table", () => {
  it('lists the layers of this test, every unit in its layer, in order', () => {
    expect(readmeLayers()).toEqual(LAYERS.map((layer) => [...layer]));
  });
});
