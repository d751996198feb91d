import { describe, expect, it } from 'vitest';
import type { MappingConfig } from '../../../src/config/index.js';
import { compileTemplates, draftRenderer, schemaWarnings } from '../../../src/mapping/mapping-templates.js';
import { buildView } from '../../../src/mapping/templates.js';

const mappingOf = (fields: Record<string, unknown>) => fields as MappingConfig;
const viewOf = (payload: unknown) =>
  buildView({ payload, headers: {}, query: {}, path: 'p', clock: () => new Date('2026-01-01T00:00:00Z') });

describe('compileTemplates', () => {
  it('compiles each templated field and adds every syntax error, naming the mapping, to the problems', () => {
    const problems: string[] = [];
    const templates = compileTemplates(
      mappingOf({ id: 'm', messageTemplate: 'hi {{name}}', name: '{{#open}}', to: '{{/x}}' }),
      'hooks.mappings[0]',
      problems,
    );
    expect([...templates.keys()].map((entry) => entry.template)).toEqual(['messageTemplate']);
    expect(problems).toEqual([
      'hooks.mappings[0].name: template error (mapping m): Unclosed section "open" at 9',
      'hooks.mappings[0].to: template error (mapping m): Unopened section "x" at 0',
    ]);
  });
});

describe('schemaWarnings', () => {
  const schema = {
    type: 'object',
    properties: {
      user: { type: 'object', properties: { name: { type: 'string' } } },
      items: { type: 'array', items: { type: 'object', properties: { id: { type: 'number' } } } },
      free: { type: 'object' },
    },
  };
  const warn = (template: string) =>
    schemaWarnings(schema, compileTemplates(mappingOf({ messageTemplate: template }), 'at', []), 'at');

  it('names each template name a payload the schema accepts cannot hold', () => {
    expect(warn('{{user.nam}} {{items.0.title}} {{missing}}')).toEqual([
      "at.messageTemplate: {{user.nam}} is not in the mapping's schema (it would render empty)",
      "at.messageTemplate: {{items.0.title}} is not in the mapping's schema (it would render empty)",
      "at.messageTemplate: {{missing}} is not in the mapping's schema (it would render empty)",
    ]);
  });

  it("passes declared names, the view's own names and anything under a level without properties", () => {
    expect(
      warn('{{user.name}} {{payload.user.name}} {{items.0.id}} {{headers.x-a}} {{now}} {{free.any.depth}}'),
    ).toEqual([]);
  });
});

describe('draftRenderer', () => {
  it('renders the kind, every field that is not blank, and the fixed deliver and timeout', () => {
    const mapping = mappingOf({
      messageTemplate: 'hello {{name}}',
      name: '  {{absent}}  ',
      deliver: false,
      timeoutSeconds: 30,
    });
    const render = draftRenderer(mapping, compileTemplates(mapping, 'at', []));
    expect(render(viewOf({ name: 'Ada' }))).toEqual({
      kind: 'agent',
      message: 'hello Ada',
      deliver: false,
      timeoutSeconds: 30,
    });
  });

  it('makes a fresh draft per view, of the mapping’s action', () => {
    const mapping = mappingOf({ action: 'wake', textTemplate: '{{n}}' });
    const render = draftRenderer(mapping, compileTemplates(mapping, 'at', []));
    const first = render(viewOf({ n: 1 }));
    expect(render(viewOf({ n: 2 }))).toEqual({ kind: 'wake', text: '2' });
    expect(first).toEqual({ kind: 'wake', text: '1' });
  });
});
