export { compileTransform } from './compile.js';
export { createTransformHost, type TransformHost } from './host.js';
export { type TransformThreads, watchTransformThreads } from './priority.js';
export { createSandbox } from './sandbox.js';
