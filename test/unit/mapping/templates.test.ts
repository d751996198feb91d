import { describe, expect, it } from 'vitest';
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
