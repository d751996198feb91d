import { describe, expect, it } from 'vitest';
import { type MaskedRequest, transformContext } from '../../../src/mapping/drafts.js';
import { itemPayloads } from '../../../src/mapping/for-each.js';
import { buildView, compileTemplate } from '../../../src/mapping/index.js';
import { engine, request } from '../../helpers/mapping.js';

/** What an item's payload stands for: a copy of the payload with `path` set (each object along it copied). */
function copyWith(value: unknown, path: readonly string[], replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path as [string, ...string[]];
  const object = value as Record<string, unknown>;
  return { ...object, [head]: copyWith(object[head], rest, replacement) };
}

const viewOf = (payload: unknown) => buildView({ payload, headers: {}, query: {}, path: 'p', now: new Date(0) });

const TEMPLATES = [
  '{{payload}}',
  '{{.}}',
  '{{#payload}}{{.}}{{/payload}}',
  '{{batch}}|{{data}}|{{data.items}}|{{data.items.0.id}}|{{data.items[0].id}}|{{data.after}}|[{{data.items.1}}]',
  '{{payload.data.items.0.id}}|{{payload.batch}}|[{{missing}}]|[{{data.missing}}]|{{data.before.n}}',
  '{{#data.items}}<{{id}} of {{batch}}>{{/data.items}}{{^data.missing}}none{{/data.missing}}',
  '{{#data}}{{items.0.id}} {{after}}{{/data}}',
];

describe('the payload of each forEach item (docs/mappings.md)', () => {
  const payload = {
    batch: 'b1',
    data: { before: { n: 1 }, items: [{ id: 'a' }, { id: 'b' }, { id: 'c' }], after: 'z' },
    last: [1, 2],
  };
  const items = itemPayloads('data.items', payload);

  it('renders every template as the copy of the payload with the item in place', () => {
    expect(items).toHaveLength(3);
    items.forEach((item, i) => {
      const copy = copyWith(payload, ['data', 'items'], [payload.data.items[i]]);
      for (const template of TEMPLATES) {
        const compiled = compileTemplate(template);
        expect(compiled(viewOf(item)), template).toBe(compiled(viewOf(copy)));
      }
    });
    expect(compileTemplate('{{data.items}}')(viewOf(items[1]))).toBe('[{"id":"b"}]');
  });

  it("gives a transform the copy itself: the same keys in the same order, the payload's left as it was", () => {
    const masked: MaskedRequest = { ...request('p', payload), headers: {} };
    items.forEach((item, i) => {
      const copy = copyWith(payload, ['data', 'items'], [payload.data.items[i]]);
      const context = transformContext(masked, item, undefined);
      expect(context.payload).toEqual(copy);
      expect(JSON.stringify(context)).toBe(JSON.stringify({ ...context, payload: copy }));
      expect(Object.keys(context.payload as object)).toEqual(['batch', 'data', 'last']);
    });
    expect(payload.data.items).toHaveLength(3);
  });

  it("costs each item what the item costs, never a copy of the payload's other keys", async () => {
    // Every read of the top level is counted: a copy per item read all 10,000 keys for each of
    // the 100 messages (a million reads; 200,000 keys took 17 s).
    const wide: Record<string, unknown> = {
      source: 'mail',
      messages: Array.from({ length: 100 }, (_, i) => ({ id: `m${i}`, from: 'a@x', subject: 's', body: 'b' })),
    };
    for (let i = 0; i < 10_000; i++) wide[`k${i}`] = i;
    let reads = 0;
    const count = <T>(value: T): T => {
      reads++;
      return value;
    };
    const counted = new Proxy(wide, {
      get: (target, key, receiver) => count(Reflect.get(target, key, receiver)),
      has: (target, key) => count(Reflect.has(target, key)),
      ownKeys: (target) => count(Reflect.ownKeys(target)),
      getOwnPropertyDescriptor: (target, key) => count(Reflect.getOwnPropertyDescriptor(target, key)),
    });
    const outcome = await engine({ presets: ['mail'] }).route({ ...request('mail', {}), payload: counted });
    const runs = outcome.kind === 'actions' ? outcome.actions : [];
    expect(runs.map((run) => (run.kind === 'agent' ? run.sessionKey : ''))).toEqual(
      Array.from({ length: 100 }, (_, i) => `hook:mail:m${i}`),
    );
    expect(runs[7]?.kind === 'agent' && runs[7].message).toBe('New email from a@x\nSubject: s\n\nb');
    expect(reads).toBeLessThan(100 * 5);
  });
});
