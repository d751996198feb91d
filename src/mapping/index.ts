export { type CompiledMapping, compileMapping } from './compile.js';
export { createMappingEngine, type MappingEngine, type MappingEngineOptions } from './engine.js';
export { MAX_ACTIONS, mergeTransformResult } from './merge.js';
export { presetMappings, readPreset } from './presets.js';
export {
  buildView,
  compileTemplate,
  EMPTY_VIEW,
  isPlainObject,
  type Template,
  type TemplateView,
} from './templates.js';
export type { Draft, HookRequest, MappingOutcome, MappingPolicy, TransformContext, TransformRunner } from './types.js';
