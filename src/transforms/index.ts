export { compileTransform } from './compile.js';
export { createTransformHost, type TransformHost } from './host.js';
export { type TransformThreads, watchTransformThreads } from './priority.js';
export { createProcessTransformHost } from './process-host.js';
export { createSandbox } from './sandbox.js';
