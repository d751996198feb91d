import { TEMPLATED_FIELDS, type TemplatedField } from '../action-shape.js';
import type { MappingConfig } from '../config/index.js';
import { hookdError } from '../errors.js';
import { MAX_RENDER_STEPS, MAX_TEXT_CHARS, type RenderBudget, renderBudget } from './bounded-text.js';
import { compileTemplate, type Template, type TemplateView } from './templates.js';
import type { Draft } from './types.js';

/** The mapping's templated fields compiled, in TEMPLATED_FIELDS order; a syntax error is added to `problems`. */
export function compileTemplates(
  mapping: MappingConfig,
  configPath: string,
  problems: string[],
): Map<TemplatedField, Template> {
  const templates = new Map<TemplatedField, Template>();
  for (const entry of TEMPLATED_FIELDS) {
    const source = mapping[entry.template];
    if (source === undefined) continue;
    try {
      templates.set(entry, compileTemplate(source));
    } catch (err) {
      problems.push(templateProblem(`${configPath}.${entry.template}`, mapping.id, err));
    }
  }
  return templates;
}

/** `path: message` lines for the names templates read that the payload schema cannot hold (they would render empty). */
export function schemaWarnings(
  schema: object,
  templates: ReadonlyMap<TemplatedField, Template>,
  configPath: string,
): string[] {
  return [...templates].flatMap(([entry, template]) =>
    template.names
      .filter((name) => undeclared(schema, name))
      .map(
        (name) => `${configPath}.${entry.template}: {{${name}}} is not in the mapping's schema (it would render empty)`,
      ),
  );
}

/** The fields a cut (with its note) still serves: the words the model or the chat reads. */
const CUTTABLE = new Set(['text', 'message']);

/**
 * Renders a mapping's draft for one view, within the request's `budget` (default: one of its
 * own); made once per mapping. The fields that route it (`sessionKey`, `channel`, `to`, `model`,
 * …) render first, so that a long text leaves them their steps, and one that was cut is a 400
 * `INVALID_FIELD`, never a note sent on as a recipient (docs/mappings.md#what-a-template-may-render).
 */
export function draftRenderer(
  mapping: Pick<MappingConfig, 'action' | 'deliver' | 'timeoutSeconds'>,
  templates: ReadonlyMap<TemplatedField, Template>,
): (view: TemplateView, budget?: RenderBudget) => Draft {
  const action = mapping.action ?? 'agent';
  const ordered = [...templates].sort(([a], [b]) => Number(CUTTABLE.has(a.field)) - Number(CUTTABLE.has(b.field)));
  return (view, budget = renderBudget()) => {
    const draft: Draft = { kind: action };
    for (const [{ field }, template] of ordered) {
      budget.cut = false;
      const rendered = template(view, budget);
      if (budget.cut && !CUTTABLE.has(field))
        throw hookdError('INVALID_FIELD', {
          field,
          expected: `a template that renders at most ${MAX_TEXT_CHARS} characters within ${MAX_RENDER_STEPS} steps`,
        });
      // A template that renders only white space leaves its field unset.
      if (rendered.trim() !== '') draft[field] = rendered;
    }
    if (mapping.deliver !== undefined) draft.deliver = mapping.deliver;
    if (mapping.timeoutSeconds !== undefined) draft.timeoutSeconds = mapping.timeoutSeconds;
    return draft;
  };
}

/** The view's own names: what a template reads there is not the payload. */
const OWN = new Set(['headers', 'query', 'path', 'now']);

/**
 * True when `name` cannot be in a payload the schema accepts: on its way down, a level that
 * declares `properties` lacks the key. A level that declares none (or combines schemas) could
 * hold anything, and is given the benefit of the doubt.
 */
function undeclared(schema: object, name: string): boolean {
  const parts = name.replace(/\[(\d+)\]/g, '.$1').split('.');
  if (OWN.has(parts[0] as string)) return false;
  if (parts[0] === 'payload') parts.shift();
  let node = schema as { properties?: Record<string, object>; items?: object };
  for (const part of parts) {
    if (/^\d+$/.test(part) && node.items) node = node.items as typeof node;
    else if (node.properties) {
      if (!Object.hasOwn(node.properties, part)) return true;
      node = node.properties[part] as typeof node;
    } else return false;
  }
  return false;
}
/**
 * A template's syntax error, naming its mapping; `at N` in the message is the offset in the
 * template, which the CLI turns into the line and column in the config file.
 */
function templateProblem(path: string, mappingId: string | undefined, err: unknown): string {
  const named = mappingId === undefined ? '' : ` (mapping ${mappingId})`;
  return `${path}: template error${named}: ${(err as Error).message}`;
}
