import { describe, expect, it } from 'vitest';
import { MAX_RENDER_STEPS, MAX_TEXT_CHARS, renderBudget } from '../../../src/mapping/bounded-text.js';
import { buildView, compileTemplate } from '../../../src/mapping/index.js';

const view = buildView({
  payload: {
    html: `<b>&"'</b>`,
    count: 3,
    ratio: 0.5,
    draft: false,
    merged: true,
    repository: { full_name: 'acme/site', owner: { login: 'acme' } },
    messages: [{ id: 'm1', from: 'a@x' }, { id: 'm2' }],
    path: 'payload-path',
    source: 'github',
  },
  headers: { 'X-GitHub-Event': 'push', 'Content-Type': 'application/json' },
  query: { ref: 'main' },
  path: 'github',
  now: new Date('2026-11-22T10:00:00.000Z'),
});

describe('templates (docs/mappings.md)', () => {
  it.each([
    ['<>&"\' are not escaped', '{{html}}', `<b>&"'</b>`],
    ['triple mustache is the same', '{{{html}}}', `<b>&"'</b>`],
    ['numbers', '{{count}} {{ratio}}', '3 0.5'],
    ['booleans', '{{draft}} {{merged}}', 'false true'],
    ['objects render as JSON', '{{repository.owner}}', '{"login":"acme"}'],
    ['arrays render as JSON', '{{messages.1}}', '{"id":"m2"}'],
    ['nested paths at the top level', '{{repository.full_name}}', 'acme/site'],
    ['the same under payload', '{{payload.repository.full_name}}', 'acme/site'],
    ['missing paths are empty', '[{{nope}}|{{repository.nope.deeper}}]', '[|]'],
    ['__proto__ is empty', '[{{__proto__}}|{{repository.__proto__}}]', '[|]'],
    ['constructor is empty', '[{{constructor}}|{{messages.constructor}}|{{repository.constructor.name}}]', '[||]'],
    ['prototype is empty', '[{{prototype}}|{{payload.prototype}}]', '[|]'],
    ['index with dots', '{{messages.0.id}}', 'm1'],
    ['index with brackets', '{{messages[0].id}}/{{messages[1].id}}', 'm1/m2'],
    ['headers are lower-cased', '{{headers.x-github-event}}|{{headers.X-GitHub-Event}}', 'push|'],
    ['query', '{{query.ref}}', 'main'],
    ['path is the sub-path and wins over the payload', '{{path}} {{payload.path}}', 'github payload-path'],
    ['now is the ISO time', '{{now}}', '2026-11-22T10:00:00.000Z'],
    ['sections iterate arrays', '{{#messages}}<{{id}}>{{/messages}}', '<m1><m2>'],
    ['inverted sections', '{{^nope}}none{{/nope}}', 'none'],
  ])('%s', (_name, template, expected) => {
    expect(compileTemplate(template)(view)).toBe(expected);
  });

  it('throws on a syntax error when compiled', () => {
    expect(() => compileTemplate('{{#open}} never closed')).toThrow(/Unclosed section "open"/);
  });

  it.each([
    [
      'a tag missing a closing brace',
      'push to {{repository.full_name} by {{sender.login}}',
      /unbalanced braces in the tag at 8/,
    ],
    ['a stray closing pair', 'done }} here', /a "}}" without its "{{" at 5/],
    ['a variable in single braces', 'push to {repository.full_name}', /single braces at 8: \{repository\.full_name\}/],
  ])('refuses %s, which mustache would render silently', (_name, template, expected) => {
    expect(() => compileTemplate(template)).toThrow(expected);
  });

  it('keeps braces that are no mistake: JSON in text, triple mustaches, a brace after a tag', () => {
    for (const template of ['{"a": 1} {{title}}', '{{{title}}}', '{{title}}}', '{ not a name }']) {
      expect(() => compileTemplate(template)).not.toThrow();
    }
  });
});

describe('buildView', () => {
  it('reads the clock and copies the headers only when a template uses them, once per view', () => {
    let reads = 0;
    const clock = () => {
      reads++;
      return new Date('2026-11-22T10:00:00.000Z');
    };
    const lazy = buildView({ payload: { a: 1 }, headers: { 'X-A': 'b' }, query: {}, path: 'p', clock });
    expect(compileTemplate('{{a}}')(lazy)).toBe('1');
    expect(reads).toBe(0);
    expect(compileTemplate('{{now}} {{now}} {{headers.x-a}}')(lazy)).toBe(
      '2026-11-22T10:00:00.000Z 2026-11-22T10:00:00.000Z b',
    );
    expect(compileTemplate('{{now}}')(lazy)).toBe('2026-11-22T10:00:00.000Z');
    expect(reads).toBe(1);
  });
});

describe('a template of text and variables only', () => {
  const view = buildView({
    payload: {
      title: 'Build failed',
      n: 3,
      flag: false,
      nothing: null,
      list: ['a', { id: 7 }],
      nested: { deep: { x: 'y' }, empty: '' },
      path: { name: 'from-payload' },
    },
    headers: { 'x-a': 'b' },
    query: { q: '1' },
    path: 'sub',
    now: new Date(0),
  });
  // The same template followed by an empty inverted section goes through mustache's own render.
  const throughMustache = (template: string) => compileTemplate(`${template}{{^absent}}{{/absent}}`)(view);

  it.each([
    '{{title}}: {{n}} {{flag}} [{{nothing}}] [{{missing}}]',
    '{{title.length}} {{payload.title.length}} {{n.toFixed}} [{{title.nope}}]',
    '{{list}} {{list.0}} {{list.1.id}} {{list[1].id}} [{{list.5.id}}]',
    '{{nested}} {{nested.deep.x}} [{{nested.empty}}] [{{nested.deep.x.y}}]',
    '{{path}} {{path.name}} {{query.q}} {{headers.x-a}} {{now}} {{payload.path.name}}',
    '{{{title}}} {{&title}} [{{__proto__}}] [{{constructor.name}}] [{{payload.__proto__}}]',
    'no variable at all',
  ])('renders %s as mustache does', (template) => {
    expect(compileTemplate(template)(view)).toBe(throughMustache(template));
  });

  it("renders {{.}} as the JSON of the view's own keys", () => {
    expect(JSON.parse(compileTemplate('{{.}}')(view))).toEqual({
      payload: expect.objectContaining({ title: 'Build failed' }),
      headers: { 'x-a': 'b' },
      query: { q: '1' },
      path: 'sub',
      now: '1970-01-01T00:00:00.000Z',
    });
  });
});

describe('the two layers of a view', () => {
  it('puts the own keys first, falls through to the payload for dotted names they do not resolve', () => {
    const layered = buildView({
      payload: { path: { name: 'from-payload' }, query: 'q', title: 't' },
      headers: {},
      query: { q: '1' },
      path: 'sub',
      now: new Date(0),
    });
    expect(compileTemplate('{{path}}|{{path.name}}|{{query.q}}|{{title}}|{{payload.query}}')(layered)).toBe(
      'sub|from-payload|1|t|q',
    );
  });
});

describe('what a template may render (docs/mappings.md#what-a-template-may-render)', () => {
  const viewOf = (payload: unknown) => buildView({ payload, headers: {}, query: {}, path: 'p', now: new Date(0) });
  const noteOf = (text: string) => /\n… \[cut by hookd: ([^\]]*)\]$/.exec(text)?.[1];

  it('cuts sections that would render more than a string can hold, and says how much was cut', () => {
    // Items without `name` render the top-level one: 4.8 billion characters from a 240 KB body,
    // which threw RangeError (a 500) once the text passed V8's longest string.
    const payload = { name: 'x'.repeat(120_000), items: Array.from({ length: 40_000 }, () => ({})) };
    const text = compileTemplate('items: {{#items}}{{name}}, {{/items}}')(viewOf(payload));
    expect(text).toHaveLength(MAX_TEXT_CHARS);
    expect(text.startsWith('items: xxx')).toBe(true);
    const whole = 'items: '.length + 40_000 * (120_000 + ', '.length);
    expect(noteOf(text)).toBe(`${whole - MAX_TEXT_CHARS} more characters`);
  });

  it('cuts text and variables that repeat a value past what a string can hold, and says how much', () => {
    const text = compileTemplate('{{big}}'.repeat(2100))(viewOf({ big: 'b'.repeat(MAX_TEXT_CHARS) }));
    expect(text).toHaveLength(MAX_TEXT_CHARS);
    expect(noteOf(text)).toBe(`${2099 * MAX_TEXT_CHARS} more characters`);
  });

  it('turns no object into JSON past the bound: the render stops there and says so', () => {
    let serialised = 0;
    // Its JSON is 1,002 characters: 262 of them pass the bound, where rendering all 4,000 made 4 MB.
    const big = {
      toJSON: () => {
        serialised++;
        return 'b'.repeat(1000);
      },
    };
    const text = compileTemplate('{{#items}}{{big}}{{/items}}')(
      viewOf({ big, items: Array.from({ length: 4000 }, () => ({})) }),
    );
    expect(serialised).toBe(262);
    expect(text).toHaveLength(MAX_TEXT_CHARS);
    expect(noteOf(text)).toBe(`over ${262 * 1002 - MAX_TEXT_CHARS} more characters`);
  });

  it('stops sections nested in sections once the steps are spent, though they render nothing', () => {
    let reads = 0;
    const payload = {
      a: Array.from({ length: 200 }, () => ({})),
      get x() {
        reads++;
        return '';
      },
    };
    // 200 × 200 × 200 items: eight million reads of `x` without the bound.
    const text = compileTemplate('[{{#a}}{{#a}}{{#a}}{{x}}{{/a}}{{/a}}{{/a}}]')(viewOf(payload));
    expect(noteOf(text)).toBe(`this request's templates used up their ${MAX_RENDER_STEPS} steps`);
    expect(text.startsWith('[\n')).toBe(true);
    expect(reads).toBeLessThan(MAX_RENDER_STEPS / 2);
  });

  it('shares one budget of steps among the renders given it', () => {
    const template = compileTemplate('{{#a}}{{#a}}.{{/a}}{{/a}}');
    const view = viewOf({ a: Array.from({ length: 400 }, () => ({})) });
    const budget = renderBudget();
    // 400 × 400 dots take two steps each: the first render spends the budget, the second finds none left.
    expect(noteOf(template(view, budget))).toMatch(/used up their/);
    expect(template(view, budget)).toBe(
      `\n… [cut by hookd: this request's templates used up their ${MAX_RENDER_STEPS} steps]`,
    );
    expect(budget.steps).toBe(0);
    const small = viewOf({ a: [{}, {}] });
    expect(template(small)).toBe('....');
  });

  it('renders what fits whole, and a text exactly at the bound without a note', () => {
    const exact = compileTemplate('{{#items}}{{s}}{{/items}}')(
      viewOf({ s: 'y'.repeat(1024), items: Array(256).fill({}) }),
    );
    expect(exact).toBe('y'.repeat(MAX_TEXT_CHARS));
    const plain = compileTemplate('{{s}}{{s}}')(viewOf({ s: 'z'.repeat(MAX_TEXT_CHARS / 2) }));
    expect(plain).toBe('z'.repeat(MAX_TEXT_CHARS));
  });
});
