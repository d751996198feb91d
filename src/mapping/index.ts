export { type CompiledMapping, collectMappings, compileMappings } from './compile.js';
export { createMappingEngine, declaredEventType, type MappingEngine } from './engine.js';
export { describeEventType } from './event-type.js';
export { createLiveMappingEngine, type LiveMappingEngine } from './live-engine.js';
export { mergeTransformResult } from './merge.js';
export { availablePresets, builtInPresets, loadPreset, type Preset, type PresetFixture } from './presets.js';
export { buildView, compileTemplate, unresolvedNames } from './templates.js';
export type { HookRequest, TransformContext, TransformRunner } from './types.js';
