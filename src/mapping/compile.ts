import { TEMPLATED_FIELDS, type TemplatedField } from '../action-shape.js';
import type { ModelCatalog } from '../actions/index.js';
import { configInvalid, type MappingConfig } from '../config/index.js';
import { isHookdError } from '../errors.js';
import { compileTemplate, type Template, type TemplateView } from './templates.js';
import type { Draft, MappingPolicy } from './types.js';

/** A mapping ready to serve: templates compiled, match normalised. */
export interface CompiledMapping {
  /** `id`, else the config path (`hooks.mappings[2]`). */
  readonly id: string;
  /** Where it came from, for error messages. */
  readonly configPath: string;
  readonly matchPath?: string;
  readonly matchSource?: string;
  readonly forEach?: string;
  readonly maxBodyBytes?: number;
  readonly transform?: { readonly module: string; readonly export?: string };
  /** Signature verification (DESIGN §10): a valid signature replaces the token for this mapping. */
  readonly verify?: NonNullable<MappingConfig['verify']>;
  readonly policy: MappingPolicy;
  /** False when no field is a template (a transform-only mapping needs no view). */
  readonly usesView: boolean;
  /** Renders the templated draft for one view. */
  draft(view: TemplateView): Draft;
}

/** Compiles one mapping; throws CONFIG_INVALID with a `path: problem` line for each problem. */
export function compileMapping(mapping: MappingConfig, configPath: string, models: ModelCatalog): CompiledMapping {
  const problems: string[] = [];
  const templates = new Map<TemplatedField, Template>();
  for (const entry of TEMPLATED_FIELDS) {
    const source = mapping[entry.template];
    if (source === undefined) continue;
    try {
      templates.set(entry, compileTemplate(source));
    } catch (err) {
      problems.push(`${configPath}.${entry.template}: template error: ${(err as Error).message}`);
    }
  }
  if (mapping.model !== undefined && !mapping.model.includes('{{')) {
    try {
      models.resolve(mapping.model);
    } catch (err) {
      problems.push(`${configPath}.model: ${isHookdError(err) ? err.message : String(err)}`);
    }
  }
  if (!mapping.transform && !mapping.textTemplate && !mapping.messageTemplate) {
    problems.push(`${configPath}: expected messageTemplate, textTemplate or a transform`);
  }
  if (problems.length > 0) throw configInvalid(problems);

  const action = mapping.action ?? 'agent';
  const trimmedPath = mapping.match?.path?.replace(/^\/+|\/+$/g, '');

  return {
    id: mapping.id ?? configPath,
    configPath,
    ...(trimmedPath === undefined ? {} : { matchPath: trimmedPath }),
    ...(mapping.match?.source === undefined ? {} : { matchSource: mapping.match.source }),
    ...(mapping.forEach === undefined ? {} : { forEach: mapping.forEach }),
    ...(mapping.maxBodyBytes === undefined ? {} : { maxBodyBytes: mapping.maxBodyBytes }),
    ...(mapping.transform ? { transform: mapping.transform } : {}),
    ...(mapping.verify ? { verify: mapping.verify } : {}),
    usesView: templates.size > 0,
    policy: {
      ...(mapping.wakeMode ? { wakeMode: mapping.wakeMode } : {}),
      allowUnsafeExternalContent: mapping.allowUnsafeExternalContent ?? false,
      contentSource: mapping.contentSource ?? 'webhook',
    },
    draft(view) {
      const draft: Draft = { kind: action };
      // A template that renders only white space leaves its field unset.
      for (const [{ field }, template] of templates) {
        const rendered = template(view);
        if (rendered.trim() !== '') draft[field] = rendered;
      }
      if (mapping.deliver !== undefined) draft.deliver = mapping.deliver;
      if (mapping.timeoutSeconds !== undefined) draft.timeoutSeconds = mapping.timeoutSeconds;
      return draft;
    },
  };
}
