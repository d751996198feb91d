export {
  defineTransform,
  type PartialAction,
  type Transform,
  type TransformInput,
  type TransformResult,
} from './authoring.js';
export { type CompiledTransform, compileTransform } from './compile.js';
export { createTransformHost, type TransformHost, type TransformHostOptions, transformKey } from './host.js';
export { resolveTransformModule } from './resolve.js';
export { createSandbox, type Sandbox } from './sandbox.js';
